"""The persona-dialogue run function: inputs + one config -> one :class:`DialogueReport`.

The Persona Dialogue page and ``python -m evaluators dialogue`` both call :func:`run_dialogue`
and only render or write its report (``evaluators.reports.dialogue``), so a page's download
equals the CLI's file for the same inputs and settings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaluators.dialogue.inputs import CaseSet, PredictionSet
from evaluators.dialogue.scoring import DialogueConfig, DialogueReport, evaluate_dialogue
from evaluators.io.gt_patch import GTPatchSet


@dataclass(frozen=True)
class DialogueInputs:
    """The cases and every prediction set of one run (files, then live replies).

    Attributes
    ----------
    cases : CaseSet
        Read by :func:`evaluators.dialogue.load_cases` (with its located issues).
    predictions : tuple of PredictionSet
        Each file's set (:func:`evaluators.dialogue.load_predictions`) and the live replies;
        combined once, in this order (:meth:`PredictionSet.combine`; the sets are not changed).
    gt_patch : GTPatchSet or None
        Review corrections of the cases' reference replies (made for the cases file), applied in
        order (:mod:`evaluators.dialogue.patch`).
    """

    cases: CaseSet
    predictions: tuple[PredictionSet, ...] = ()
    gt_patch: GTPatchSet | None = None

    @classmethod
    def of(cls, cases: CaseSet, predictions: Sequence[PredictionSet], gt_patch: GTPatchSet | None = None
           ) -> DialogueInputs:
        return cls(cases, tuple(predictions), gt_patch)

    def combined(self) -> PredictionSet:
        """All prediction rows and their issues in one new set."""
        return PredictionSet.combine(self.predictions)


def run_dialogue(inputs: DialogueInputs, config: DialogueConfig | None = None, *,
                 progress: Callable[[int, int], None] | None = None, workers: int = 1,
                 predictions: PredictionSet | None = None) -> DialogueReport:
    """Score every model's replies against the cases.

    Parameters
    ----------
    inputs : DialogueInputs
    config : DialogueConfig, optional
    progress : callable, optional
        ``progress(done, total)`` after each scored reply.
    workers : int
        Worker processes (:func:`evaluators.dialogue.scoring.evaluate_dialogue`); the report is the same.
    predictions : PredictionSet, optional
        ``inputs.combined()`` when the caller already has it (not combined twice).

    Returns
    -------
    DialogueReport
        With the issues of the cases file and of every prediction file first, then the matching ones.

    Raises
    ------
    KeyError
        An unknown metric name in the config.
    ValueError
        Invalid weights.
    GTPatchMismatch
        ``inputs.gt_patch`` holds a correction made for another cases file.
    """
    if inputs.gt_patch:
        from evaluators.dialogue.patch import run_with_patch

        return run_with_patch(inputs, config, run_dialogue, progress=progress, workers=workers,
                              predictions=predictions)
    preds = predictions if predictions is not None else inputs.combined()
    return evaluate_dialogue(inputs.cases.cases, preds.rows, config, cases_file=inputs.cases.file,
                             issues=inputs.cases.issues + preds.issues, progress=progress, workers=workers)
