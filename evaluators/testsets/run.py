"""The test-set run function: inputs + one config -> one :class:`TestSetsReport`.

The Test sets page and ``python -m evaluators testsets`` both call :func:`run_testsets` and
only render or write what it returns; the JSON download of the page and the CLI's
``--output-file`` are both ``report.to_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.io.errors import InputIssue
from evaluators.io.gt_patch import GTPatchSet
from evaluators.io.sources import read_file_bytes
from evaluators.metrics.before_after import Corrections
from evaluators.results import to_jsonable
from evaluators.testsets.evaluate import AnswerSet, MultiTurnReport, SingleTurnReport, evaluate_test_set, load_answers
from evaluators.testsets.schema import TestSet, load_test_set

KINDS = ("single", "multi_turn")


@dataclass(frozen=True)
class TestSetsInputs:
    """A test-set file and an answers file, as bytes with the names quoted in issues (the suffix picks a format)."""

    __test__ = False  # not a pytest class

    items: bytes
    items_name: str
    answers: bytes
    answers_name: str

    @classmethod
    def from_paths(cls, items: str | Path, answers: str | Path) -> TestSetsInputs:
        """Read both files (``OSError`` when one cannot be read or is over the input limit); names as given."""
        return cls(read_file_bytes(items), str(items), read_file_bytes(answers), str(answers))


@dataclass(frozen=True)
class TestSetsConfig:
    """What to score.

    Attributes
    ----------
    kind : str or None
        ``"single"`` or ``"multi_turn"``; ``None`` detects it from the file.
    gt_patch : GTPatchSet or None
        Review corrections of the test set (made for this test-set file), applied in order
        (:mod:`evaluators.testsets.patch`: what a correction means for a keyword-scored item).
    """

    __test__ = False

    kind: str | None = None
    gt_patch: GTPatchSet | None = None

    def __post_init__(self) -> None:
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS} or None (detect), not {self.kind!r}")


@dataclass(frozen=True)
class TestSetsReport:
    """A run's test set, answers and scores.

    Attributes
    ----------
    test_set : TestSet
        With its located issues (items left out).
    answers : AnswerSet
        With its located issues (records left out).
    scores : SingleTurnReport or MultiTurnReport or None
        ``None`` when the test set has no valid item (nothing to score; see ``issues``).  With a GT
        patch: the scores after the corrections.
    before : SingleTurnReport or None
        With a GT patch: the scores against the test set as read.
    corrections : Corrections or None
        With a GT patch: what it did and the mean keyword score before and after.
    """

    __test__ = False

    test_set: TestSet
    answers: AnswerSet
    scores: SingleTurnReport | MultiTurnReport | None
    before: SingleTurnReport | None = None
    corrections: Corrections | None = None

    @property
    def issues(self) -> list[InputIssue]:
        """The input problems of both files, test set first."""
        return list(self.test_set.issues) + list(self.answers.issues)

    @property
    def kind(self) -> str:
        return self.test_set.kind

    def to_dict(self) -> dict[str, Any]:
        """The scores' JSON (the page's download and the CLI's ``--output-file``).

        Raises
        ------
        ValueError
            When there are no scores.
        """
        if self.scores is None:
            raise ValueError(f"{self.test_set.file}: no valid item, nothing was scored")
        out = self.scores.to_dict()
        if self.corrections is not None:  # the scores above are after the corrections
            out["gt_patch"] = to_jsonable(self.corrections)
        return out


def run_testsets(inputs: TestSetsInputs, config: TestSetsConfig | None = None, *, workers: int = 1) -> TestSetsReport:
    """Load both files and score the answers.

    Parameters
    ----------
    inputs : TestSetsInputs
    config : TestSetsConfig, optional
    workers : int
        Worker processes (:func:`evaluators.testsets.evaluate_test_set`); the report is the same.

    Returns
    -------
    TestSetsReport

    Raises
    ------
    InputError
        A file unusable as a whole (undecodable, invalid JSON, no item list).
    GTPatchMismatch
        ``config.gt_patch`` holds a correction made for another test-set file.
    ValueError
        ``config.gt_patch`` on a multi-turn set.
    """
    config = config or TestSetsConfig()
    test_set = load_test_set(inputs.items, inputs.items_name, config.kind)
    answers = load_answers(inputs.answers, inputs.answers_name)
    scores = evaluate_test_set(test_set, answers, workers=workers) if test_set.items else None
    if not config.gt_patch or scores is None:
        return TestSetsReport(test_set, answers, scores)
    from evaluators.io.gt_patch import file_sha256
    from evaluators.testsets.patch import patch_testsets, require_single_turn

    require_single_turn(test_set)
    after, corrections = patch_testsets(test_set, answers, scores, config.gt_patch, inputs.items_name,
                                        file_sha256(inputs.items))
    return TestSetsReport(test_set, answers, after, scores, corrections)
