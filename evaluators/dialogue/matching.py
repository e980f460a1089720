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


@dataclass(frozen=True)
class FileFit(DictMixin):
    """How one prediction file's rows fit a cases file (:func:`prediction_fit`).

    Attributes
    ----------
    file : str
    n_rows : int
        The file's usable rows.
    n_fit : int
        Rows matched to a case with the same prompt (scored as meant).
    n_no_case : int
        Rows whose (scene, dialogue_index) is in no case: not scored.
    n_other_prompt : int
        Rows matched by (scene, dialogue_index) whose stored context or expected reply differs from
        the case's: the reply answered another prompt (scored against the case anyway).
    n_duplicate : int
        Rows repeating a key more often than the cases do: not scored.
    n_own_cases : int
        Rows that carry their own expected reply (a stored report of the earlier script): the file
        is also a cases file of that many cases (:func:`evaluators.dialogue.load_cases` reads it).
    """

    file: str
    n_rows: int
    n_fit: int
    n_no_case: int
    n_other_prompt: int
    n_duplicate: int
    n_own_cases: int = 0

    @property
    def n_off(self) -> int:
        """Rows that do not match the cases (no case, another prompt, a repeat)."""
        return self.n_no_case + self.n_other_prompt + self.n_duplicate

    @property
    def offers_own_cases(self) -> bool:
        """The file carries cases of its own and was made against other cases than these: some of its rows
        answered another prompt, or more of them have no case here than fit one (a stray row or two of
        a report of these very cases is only counted)."""
        return self.n_own_cases > 0 and (self.n_other_prompt > 0 or self.n_no_case > self.n_fit)

    def headline(self, cases_file: str = "the uploaded cases") -> str | None:
        """One sentence with the counts (``None`` when every row fits).

        Parameters
        ----------
        cases_file : str
            How the cases file is named in the sentence.

        Returns
        -------
        str or None
        """
        if not self.n_off:
            return None
        def n(k: int, one: str, many: str) -> str:
            return "" if not k else f"{k} {one if k == 1 else many}"

        parts = [n(self.n_no_case, "has no case", "have no case") + " with their scene and dialogue_index (not scored)"
                 if self.n_no_case else "",
                 n(self.n_other_prompt, "answered", "answered") + " another prompt than the case's (scored against "
                 "that case)" if self.n_other_prompt else "",
                 n(self.n_duplicate, "repeats an earlier row", "repeat earlier rows") + " (not scored)"
                 if self.n_duplicate else ""]
        text = (f"{self.n_off} of {self.n_rows} rows of {self.file} do not match {cases_file}: "
                + ", ".join(p for p in parts if p) + ".")
        if self.offers_own_cases:
            text += (f" The file carries its own {self.n_own_cases} cases (a stored report of another run): "
                     "score it against them.")
        return text


def prediction_fit(cases: list[DialogueCase], prediction_sets: list) -> list[FileFit]:
    """How each prediction file's rows fit ``cases`` (matched as :func:`match_predictions` does).

    Parameters
    ----------
    cases : list of DialogueCase
    prediction_sets : list of PredictionSet
        One per file (:func:`evaluators.dialogue.load_predictions`), combined in this order.

    Returns
    -------
    list of FileFit
        One per file, in order.
    """
    from evaluators.dialogue.inputs import PredictionSet

    combined = PredictionSet.combine(prediction_sets)
    m = match_predictions(cases, combined.rows)
    other = {id(r) for r in m.expected_mismatch + m.context_mismatch}

    def count(rows, file):
        return sum(1 for r in rows if r.file == file)

    out = []
    for s in prediction_sets:
        for file in dict.fromkeys(s.files):
            matched = [r for by_key in m.matched.values() for r in by_key.values() if r.file == file]
            n_other = sum(1 for r in matched if id(r) in other)
            out.append(FileFit(file, count(combined.rows, file), len(matched) - n_other, count(m.unmatched, file),
                               n_other, count(m.duplicates, file),
                               sum(1 for r in s.rows if r.file == file and r.expected_response is not None)))
    return out
