"""Persona-dialogue inputs: test cases by scene and model predictions, with located issues.

Test cases (:func:`load_cases`) are read from

- ``{"test_cases_by_scene": {scene: [{context, expected_response, scene, dialogue_index}]}}``
  (the format of the earlier persona script; the ``scene`` key of the group is used when
  a case has none),
- ``{"all_test_cases": [...]}`` or a JSON array / JSONL / CSV of case rows,
- a JSON report of the earlier script (``{"results": [...]}``): its rows carry
  ``expected_response`` and ``context``, so a stored run can be re-scored on its own.

Predictions (:func:`load_predictions`) are read from the earlier script's JSON report or
from CSV/JSONL/JSON rows with ``model``, ``scene``, ``dialogue_index`` and ``prediction``
(``response`` is accepted for ``prediction``).  A file without a ``model`` column uses
the default model name given by the caller (the file name by default).

``dialogue_index`` is compared as text, so ``7`` and ``"7"`` are the same index.  The
same (scene, dialogue_index) may appear more than once in a cases file (the real Peppa
file repeats a block of a scene): each appearance is a separate case with an
``occurrence`` number 0, 1, ..., and predictions are matched to occurrences in file
order (see :mod:`evaluators.dialogue.matching`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.io import InputError, InputIssue, load_json_bytes, read_records
from evaluators.io.gt_patch import file_sha256
from evaluators.results import DictMixin


def index_key(value: Any) -> str:
    """Dialogue index as comparison text: ``7``, ``7.0`` and ``" 7 "`` all give ``"7"``.

    Parameters
    ----------
    value : object
        An index as read (int, float or text).

    Returns
    -------
    str
        The integer's digits, or the stripped text when it is not a whole number.

    Examples
    --------
    >>> index_key(7.0), index_key(" 7 "), index_key("7a")
    ('7', '7', '7a')
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    try:
        as_float = float(text)
        if as_float.is_integer():
            return str(int(as_float))
    except ValueError:
        pass
    return text


@dataclass(frozen=True)
class DialogueCase(DictMixin):
    """One test case: the context sent to the persona and the expected reply.

    Attributes
    ----------
    scene : str
    dialogue_index : str
        Index within the scene, as text (see :func:`index_key`).
    context : str
        What the persona is reacting to (sent as the chat message in live mode).
    expected_response : str
        The ground-truth reply.
    occurrence : int
        0 for the first appearance of (scene, dialogue_index) in the file, 1 for the
        second, ...
    order : int
        Position in the file (0-based), used to keep scene order in reports.
    """

    scene: str
    dialogue_index: str
    context: str
    expected_response: str
    occurrence: int = 0
    order: int = 0

    @property
    def key(self) -> tuple[str, str, int]:
        """Matching key ``(scene, dialogue_index, occurrence)``."""
        return (self.scene, self.dialogue_index, self.occurrence)


@dataclass
class CaseSet(DictMixin):
    """Cases read from one file, with the issues met (bad rows are skipped, the rest kept)."""

    file: str
    cases: list[DialogueCase] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)
    digest: str | None = None  # SHA-256 of the file's bytes: what a GT patch of the cases is made for

    @property
    def scenes(self) -> list[str]:
        """Scenes in file order."""
        return list(dict.fromkeys(c.scene for c in self.cases))

    @property
    def n_duplicate_keys(self) -> int:
        """Number of cases that repeat an earlier (scene, dialogue_index)."""
        return sum(1 for c in self.cases if c.occurrence > 0)


@dataclass(frozen=True)
class PredictionRow(DictMixin):
    """One model reply to one case.

    Attributes
    ----------
    model, scene, dialogue_index, prediction : str
    file : str
        Source file name.
    line : int or None
        1-based line (CSV/JSONL) or ``None``.
    path : str or None
        JSON path of the row (JSON files).
    occurrence : int
        0 for the model's first row with this (scene, dialogue_index), 1 for the second ...
    expected_response : str or None
        The expected reply stored in the row, if any (earlier script's report), used only
        to warn when it differs from the cases file.
    error : str or None
        An error recorded instead of a reply (live mode); the prediction is then ``""``.
    context : str or None
        The context stored in the row, if any, used only to warn when the reply was
        produced for another prompt than the cases file's.
    """

    model: str
    scene: str
    dialogue_index: str
    prediction: str
    file: str = "<input>"
    line: int | None = None
    path: str | None = None
    occurrence: int = 0
    expected_response: str | None = None
    error: str | None = None
    context: str | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.scene, self.dialogue_index, self.occurrence)

    def where(self) -> str:
        """``file:line`` or ``file at path`` for messages."""
        if self.line is not None:
            return f"{self.file}:{self.line}"
        return f"{self.file} at {self.path}" if self.path else self.file


@dataclass
class PredictionSet(DictMixin):
    """Prediction rows of one or more files, with the issues met."""

    rows: list[PredictionRow] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        """Models in first-seen order."""
        return list(dict.fromkeys(r.model for r in self.rows))

    def extend(self, other: "PredictionSet") -> None:
        """Add another set's rows, issues and files (occurrences renumbered per model).

        Adding many sets this way renumbers every row once per set: use :meth:`combine`.

        Parameters
        ----------
        other : PredictionSet
            Not changed.
        """
        self.rows = renumber(self.rows + other.rows)
        self.issues.extend(other.issues)
        self.files.extend(other.files)

    @classmethod
    def combine(cls, sets: Iterable["PredictionSet"]) -> "PredictionSet":
        """A new set with the rows, issues and files of ``sets`` in order (occurrences renumbered once).

        Equal to extending an empty set with each one; the given sets are not changed.

        Parameters
        ----------
        sets : iterable of PredictionSet

        Returns
        -------
        PredictionSet
        """
        out = cls()
        for other in sets:
            out.rows.extend(other.rows)
            out.issues.extend(other.issues)
            out.files.extend(other.files)
        out.rows = renumber(out.rows)
        return out


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _read_json_or_rows(data: bytes, file: str) -> tuple[Any, list[dict], list[InputIssue], list[int | None]]:
    """Return (json value or None, rows, issues, the rows' line numbers) for a cases or predictions file."""
    head = bytes(data[:4096])
    if not head.removeprefix(b"\xef\xbb\xbf").strip() and not bytes(data).removeprefix(b"\xef\xbb\xbf").strip():
        what = "0 bytes" if not data else "only a byte-order mark or white space"
        return None, [], [InputIssue(file, f"the file is empty ({what}): nothing to read", line=1, kind="empty")], []
    suffix = Path(file).suffix.lower()
    if suffix == ".json":
        try:
            value, _ = load_json_bytes(data, file)
            return value, [], [], []
        except InputError as exc:
            return None, [], [exc.issue], []
    records = read_records(data, file)
    return None, [r.data for r in records.records], list(records.issues), [r.line for r in records.records]


def _case_rows_from_json(value: Any, file: str) -> tuple[list[tuple[dict, str, str | None]], list[InputIssue]]:
    """Case rows ``(row, json path, group scene)`` from any accepted JSON layout."""
    issues: list[InputIssue] = []
    rows: list[tuple[dict, str, str | None]] = []
    if isinstance(value, dict) and isinstance(value.get("test_cases_by_scene"), dict):
        for scene, group in value["test_cases_by_scene"].items():
            if not isinstance(group, list):
                issues.append(InputIssue(file, f"expected a list of cases, found {type(group).__name__}",
                                         path=f"test_cases_by_scene.{scene}"))
                continue
            for i, row in enumerate(group):
                rows.append((row, f"test_cases_by_scene.{scene}[{i}]", str(scene)))
        return rows, issues
    for key in ("all_test_cases", "results", "test_cases", "cases"):
        if isinstance(value, dict) and isinstance(value.get(key), list):
            return [(row, f"{key}[{i}]", None) for i, row in enumerate(value[key])], issues
    if isinstance(value, list):
        return [(row, f"[{i}]", None) for i, row in enumerate(value)], issues
    issues.append(InputIssue(
        file, "expected {'test_cases_by_scene': {scene: [cases]}}, a report with 'results', or a list of cases",
        path="$"))
    return rows, issues


def load_cases(data: bytes, file: str = "<cases>") -> CaseSet:
    """Read persona test cases (formats in the module docstring).

    Parameters
    ----------
    data : bytes
        File content (UTF-8, UTF-8 with BOM or GB18030).
    file : str
        Name used in issues; its suffix picks the format (``.json``, ``.jsonl``, ``.csv``).

    Returns
    -------
    CaseSet
        Cases in file order; rows without ``scene``/``dialogue_index`` or with a
        non-text ``expected_response`` are skipped with a located issue.  Cases with an
        empty ``expected_response`` are kept (they are reported as having no ground
        truth and are not scored).
    """
    out = CaseSet(file=file, digest=file_sha256(data))
    value, flat_rows, issues, lines = _read_json_or_rows(data, file)
    out.issues.extend(issues)
    if value is not None:
        rows, more = _case_rows_from_json(value, file)
        out.issues.extend(more)
        located = [(row, None, path, scene) for row, path, scene in rows]
    else:
        located = [(row, line, None, None) for row, line in zip(flat_rows, lines)]
    seen: Counter = Counter()
    for row, line, path, group_scene in located:
        if not isinstance(row, dict):
            out.issues.append(InputIssue(file, f"expected an object, found {type(row).__name__}",
                                         line=line, path=path))
            continue
        scene = _text(row.get("scene", group_scene)).strip() or (group_scene or "")
        idx = row.get("dialogue_index")
        if not scene or idx is None or _text(idx).strip() == "":
            out.issues.append(InputIssue(file, "case without 'scene' or 'dialogue_index' skipped",
                                         line=line, path=path))
            continue
        expected = row.get("expected_response", "")
        if not isinstance(expected, (str, type(None))):
            out.issues.append(InputIssue(file, f"'expected_response' must be text, found {type(expected).__name__}",
                                         line=line, path=path))
            continue
        key = (scene, index_key(idx))
        occurrence = seen[key]
        seen[key] += 1
        out.cases.append(DialogueCase(scene, key[1], _text(row.get("context")), _text(expected), occurrence,
                                      len(out.cases)))
    if not out.cases:
        from evaluators.io.shapes import misplaced  # another input's file: one line saying where it goes

        wrong = misplaced(file, data, "persona test cases (CASES, --cases)", accepts=("persona_cases",))
        if wrong is not None:
            out.issues = [wrong]
            return out
    dups = [k for k, n in seen.items() if n > 1]
    if dups:
        sample = ", ".join(f"{s}#{i}" for s, i in dups[:5])
        out.issues.append(InputIssue(
            file, f"{len(dups)} (scene, dialogue_index) keys appear more than once ({sample}...); each appearance is "
                  "a separate case, matched to predictions in file order", severity="warning", kind="duplicate"))
    return out


def renumber(rows: list[PredictionRow]) -> list[PredictionRow]:
    """Give each model's repeated (scene, dialogue_index) rows occurrences 0, 1, ... in order.

    Parameters
    ----------
    rows : list of PredictionRow

    Returns
    -------
    list of PredictionRow
        Same order; a row whose occurrence is already right is the same object.
    """
    from dataclasses import replace

    seen: Counter = Counter()
    out = []
    for r in rows:
        k = (r.model, r.scene, r.dialogue_index)
        out.append(r if r.occurrence == seen[k] else replace(r, occurrence=seen[k]))
        seen[k] += 1
    return out


def load_predictions(data: bytes, file: str = "<predictions>", default_model: str | None = None) -> PredictionSet:
    """Read one predictions file (formats in the module docstring).

    Parameters
    ----------
    data : bytes
        File content.
    file : str
        Name used in issues; its suffix picks the format.
    default_model : str, optional
        Model name for rows without ``model`` (default: the file name without suffix).

    Returns
    -------
    PredictionSet
        Good rows in file order; rows without scene, dialogue_index or a text prediction
        are skipped with a located issue.
    """
    default_model = default_model or Path(file).stem
    out = PredictionSet(files=[file])
    value, flat_rows, issues, lines = _read_json_or_rows(data, file)
    out.issues.extend(issues)
    if value is not None:
        if isinstance(value, dict) and isinstance(value.get("results"), list):
            located = [(row, None, f"results[{i}]") for i, row in enumerate(value["results"])]
        elif isinstance(value, dict) and isinstance(value.get("predictions"), list):
            located = [(row, None, f"predictions[{i}]") for i, row in enumerate(value["predictions"])]
        elif isinstance(value, list):
            located = [(row, None, f"[{i}]") for i, row in enumerate(value)]
        else:
            out.issues.append(InputIssue(file, "expected a report with 'results' or a list of prediction rows",
                                         path="$"))
            located = []
    else:
        located = [(row, line, None) for row, line in zip(flat_rows, lines)]
    rows: list[PredictionRow] = []
    for row, line, path in located:
        if not isinstance(row, dict):
            out.issues.append(InputIssue(file, f"expected an object, found {type(row).__name__}",
                                         line=line, path=path))
            continue
        scene = _text(row.get("scene")).strip()
        idx = row.get("dialogue_index")
        if not scene or idx is None or _text(idx).strip() == "":
            out.issues.append(InputIssue(file, "row without 'scene' or 'dialogue_index' skipped", line=line, path=path))
            continue
        pred = row.get("prediction", row.get("response"))
        if pred is not None and not isinstance(pred, str):
            out.issues.append(InputIssue(file, f"'prediction' must be text, found {type(pred).__name__}",
                                         line=line, path=path))
            continue
        error = row.get("error") or None
        if pred is None and error is None:
            out.issues.append(InputIssue(file, "row without 'prediction' skipped", line=line, path=path))
            continue
        expected, context = row.get("expected_response"), row.get("context")
        rows.append(PredictionRow(
            model=_text(row.get("model")).strip() or default_model, scene=scene, dialogue_index=index_key(idx),
            prediction=pred or "", file=file, line=line, path=path,
            expected_response=expected if isinstance(expected, str) else None,
            error=_text(error) if error else None, context=context if isinstance(context, str) else None,
        ))
    out.rows = renumber(rows)
    return out
