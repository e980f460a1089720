"""The judge lab: can an LLM judge replace people on our data, and how sure are we?

- :mod:`evaluators.judgelab.calibration`: the calibration set (human final labels + each judge version's
  verdicts), a stable stratified dev/test split, figures with bootstrap intervals, the overfit warning,
  guidelines versions never pooled silently.
- :mod:`evaluators.judgelab.from_review`: the calibration set from review sessions' final labels.
- :mod:`evaluators.judgelab.run`: one judge version (prompt template, model, parameters, parser) run over
  items through the one HTTP client and a content-addressed reply cache (imported on its own: it brings the
  HTTP client).
- :mod:`evaluators.judgelab.inputs`: labels and verdicts from JSONL / JSON / CSV files.
- :mod:`evaluators.judgelab.corrected`: the model's score under the judge corrected with the calibration set
  (bias-adjusted accuracy of Lee et al. 2025; prediction-powered inference) beside the raw judge score and
  the human-only estimate.
- :mod:`evaluators.judgelab.bias`: the bias panel: length bias, position bias (swap test), self-preference,
  drift between two judge versions on anchor items.

The engine sits above the review package (it reads final labels) and below reports and the CLI.
"""

from evaluators.judgelab.bias import (Drift, LengthBias, PositionBias, SelfPreference, drift, length_bias,
                                       position_bias, self_preference)
from evaluators.judgelab.calibration import (CalibrationReport, HumanLabel, JudgeCalibration, JudgeFigure,
                                              JudgeVersion, Split, SplitFigures, assign_split, calibrate,
                                              check_guidelines, overfit_warning, prompt_hash, split_figures)
from evaluators.judgelab.from_review import ReviewLabels, labels_from_review
from evaluators.judgelab.corrected import (AdjustedAccuracy, CorrectedScores, Estimate, bias_adjusted_accuracy,
                                           bias_adjusted_from_verdicts, corrected_for_version, corrected_scores)

__all__ = ["CalibrationReport", "HumanLabel", "JudgeCalibration", "JudgeFigure", "JudgeVersion", "Split",
           "SplitFigures", "assign_split", "calibrate", "check_guidelines", "overfit_warning", "prompt_hash",
           "split_figures", "AdjustedAccuracy", "CorrectedScores", "Estimate", "bias_adjusted_accuracy",
           "bias_adjusted_from_verdicts", "corrected_scores", "corrected_for_version", "Drift", "LengthBias", "PositionBias",
           "SelfPreference", "drift", "length_bias", "position_bias", "self_preference",
           "ReviewLabels", "labels_from_review"]
