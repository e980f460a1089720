"""Match prediction rows to test cases by (scene, dialogue_index, occurrence).

Each model's rows are matched independently.  A row whose (scene, dialogue_index) is not
in the cases is *unmatched*; a row that repeats a key more often than the cases file
does is a *duplicate* (the first rows in file order are used, the extra ones are
reported, never silently dropped).  A case without a row for a model is *missing* for
that model (scored as a wrong answer under the missing-GT policy).  When a row carries
its own ``expected_response`` (the earlier script's report) and it differs from the
cases file, the row is still matched and an ``expected_mismatch`` warning is reported:
the cases file is the ground truth.  A stored ``context`` that differs gives a
``context_mismatch`` warning (the reply answered another prompt).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.dialogue.inputs import DialogueCase, PredictionRow
from evaluators.io import InputIssue
from evaluators.results import DictMixin


@dataclass
class Matching(DictMixin):
    """Outcome of :func:`match_predictions`.

    Attributes
    ----------
    models : list of str
        Models in first-seen order.
    matched : dict
        ``{model: {case key: PredictionRow}}``.
    missing : dict
        ``{model: [case key, ...]}`` cases with no row for that model.
    unmatched : list of PredictionRow
        Rows whose (scene, dialogue_index) is not among the cases.
    duplicates : list of PredictionRow
        Rows repeating a key more often than the cases do.
    expected_mismatch : list of PredictionRow
        Matched rows whose stored expected_response differs from the case's.
    context_mismatch : list of PredictionRow
        Matched rows (same expected_response) whose stored context differs from the case's:
        the reply answered another prompt.
    """

    models: list[str] = field(default_factory=list)
    matched: dict[str, dict[tuple, PredictionRow]] = field(default_factory=dict)
    missing: dict[str, list[tuple]] = field(default_factory=dict)
    unmatched: list[PredictionRow] = field(default_factory=list)
    duplicates: list[PredictionRow] = field(default_factory=list)
    expected_mismatch: list[PredictionRow] = field(default_factory=list)
    context_mismatch: list[PredictionRow] = field(default_factory=list)

    def issues(self) -> list[InputIssue]:
        """One located warning per unmatched, duplicate or mismatching row."""
        out = []
        for r in self.unmatched:
            out.append(InputIssue(r.file, f"model {r.model!r}: no case with scene {r.scene!r} and dialogue_index "
                                          f"{r.dialogue_index!r}; row not scored", line=r.line, path=r.path,
                                  severity="warning", kind="unmatched"))
        for r in self.duplicates:
            out.append(InputIssue(r.file, f"model {r.model!r}: duplicate row for scene {r.scene!r} dialogue_index "
                                          f"{r.dialogue_index!r} (occurrence {r.occurrence + 1}); an earlier row is "
                                          "used", line=r.line, path=r.path, severity="warning", kind="duplicate"))
        for r in self.expected_mismatch:
            out.append(InputIssue(r.file, f"model {r.model!r}: the row's expected_response differs from the cases "
                                          f"file for {r.scene!r} #{r.dialogue_index}; the cases file is used",
                                  line=r.line, path=r.path, severity="warning", kind="expected_mismatch"))
        for r in self.context_mismatch:
            out.append(InputIssue(r.file, f"model {r.model!r}: the row's context differs from the cases file for "
                                          f"{r.scene!r} #{r.dialogue_index}: the reply answered another prompt",
                                  line=r.line, path=r.path, severity="warning", kind="context_mismatch"))
        return out


def match_predictions(cases: list[DialogueCase], rows: list[PredictionRow]) -> Matching:
    """Match rows to cases per model (rules in the module docstring).

    Parameters
    ----------
    cases : list of DialogueCase
    rows : list of PredictionRow
        Rows with occurrences numbered per model (see :func:`evaluators.dialogue.inputs.renumber`).

    Returns
    -------
    Matching
    """
    by_key = {c.key: c for c in cases}
    base_keys = {(c.scene, c.dialogue_index) for c in cases}
    out = Matching(models=list(dict.fromkeys(r.model for r in rows)))
    for model in out.models:
        out.matched[model] = {}
    for r in rows:
        case = by_key.get(r.key)
        if case is None:
            if (r.scene, r.dialogue_index) in base_keys:
                out.duplicates.append(r)
            else:
                out.unmatched.append(r)
            continue
        out.matched[r.model][r.key] = r
        if r.expected_response is not None and r.expected_response.strip() != case.expected_response.strip():
            out.expected_mismatch.append(r)
        elif r.context is not None and r.context.strip() != case.context.strip():
            out.context_mismatch.append(r)
    for model in out.models:
        out.missing[model] = [c.key for c in cases if c.key not in out.matched[model]]
    return out
