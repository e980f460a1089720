"""Narrative runs in shards: one shard's document pairs scored (:func:`score_shard`) and the report of the pooled
shards (:func:`merged_report`), equal to the single-process batch report (see :mod:`evaluators.shards`).

Every shard pairs the whole input (the same pairing, issues and unpaired files as one process), deals the pairs
to the shards by story id (:func:`evaluators.shards.assign`) and scores its own pairs with the per-pair function
of the batch (:func:`evaluators.narrative.batch._score_chunk`).  A pair's outcome travels as typed JSON
(:mod:`evaluators.io.typed_json`); the merge puts the outcomes back in input order and builds the report with
:func:`evaluators.narrative.batch.report_of_outcomes`, the single-process run's code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evaluators.io.errors import InputIssue
from evaluators.io.sources import pair_files, story_id
from evaluators.narrative.batch import DocumentOutcome, NarrativeReport, _score_chunk, report_of_outcomes
from evaluators.narrative.run import NarrativeInputs
from evaluators.narrative.settings import NarrativeSettings
from evaluators.shards import assign, assignment_digest

#: The per-item columns of a narrative shard file: the pair's position, its story id, its outcome (typed JSON).
COLUMNS = ("index", "id", "outcome")


@dataclass(frozen=True)
class NarrativeShard:
    """One shard of a narrative run, scored.

    Attributes
    ----------
    n_pairs : int
        Pairs of the whole input.
    assignment : str
        :func:`evaluators.shards.assignment_digest` of the whole input's assignment.
    issues : list of InputIssue
        The pairing's issues (the whole input's), before any pair's error.
    unpaired_gt, unpaired_pred : list of str
        Files without a partner (the whole input's).
    positions : list of int
        This shard's pairs' positions among all pairs.
    outcomes : list of DocumentOutcome
        This shard's pairs, scored, in input order.
    """

    n_pairs: int
    assignment: str
    issues: list[InputIssue]
    unpaired_gt: list[str]
    unpaired_pred: list[str]
    positions: list[int] = field(repr=False)
    outcomes: list[DocumentOutcome] = field(repr=False)

    @property
    def keys(self) -> list[tuple[None, str]]:
        """This shard's items: ``(None, story id)``."""
        return [(None, o.story_id) for o in self.outcomes]


def score_shard(inputs: NarrativeInputs, settings: NarrativeSettings, shard: int, n_shards: int,
                seed: int = 0) -> NarrativeShard:
    """Score shard ``shard`` of ``n_shards`` of a narrative run (no GT patch).

    Parameters
    ----------
    inputs : NarrativeInputs
        The run's files (``gt_patch`` must be ``None``).
    settings : NarrativeSettings
        The run's settings.
    shard, n_shards : int
        1-based shard of ``n_shards``.
    seed : int
        Seed of the assignment.

    Returns
    -------
    NarrativeShard
    """
    if inputs.gt_patch:
        raise ValueError("narrative shards do not take a GT patch yet")
    if inputs.single_pair:
        g, p = inputs.gt[0], inputs.pred[0]
        pairs, issues, unpaired_gt, unpaired_pred = [(story_id(g.name), g, p)], [], [], []
    else:
        pairing = pair_files(list(inputs.gt), list(inputs.pred))
        pairs, issues = pairing.pairs, list(pairing.issues)
        unpaired_gt, unpaired_pred = list(pairing.unpaired_gt), list(pairing.unpaired_pred)
    shards = assign([(None, sid) for sid, _, _ in pairs], n_shards, seed)
    positions = [k for k, s in enumerate(shards) if s == shard]
    outcomes = list(_score_chunk(settings.config, None, [pairs[k] for k in positions]))
    return NarrativeShard(len(pairs), assignment_digest(shards), issues, unpaired_gt, unpaired_pred, positions,
                          outcomes)


def shard_rows(result: NarrativeShard) -> list[list]:
    """The shard's rows in :data:`COLUMNS` order (the outcome as typed JSON)."""
    from evaluators.io.typed_json import encode

    return [[k, o.story_id, encode(o)] for k, o in zip(result.positions, result.outcomes)]


def merged_report(settings: NarrativeSettings, columns: Sequence[str], rows: Sequence[Sequence], *,
                  issues: Sequence[InputIssue], unpaired_gt: Sequence[str],
                  unpaired_pred: Sequence[str]) -> NarrativeReport:
    """The batch report of the pooled rows of every shard, computed once (:func:`report_of_outcomes`).

    Parameters
    ----------
    settings : NarrativeSettings
        The run's settings (their issues lead the report's, as :func:`evaluators.narrative.run.run_narrative`
        puts them).
    columns : sequence of str
        :data:`COLUMNS`.
    rows : sequence of sequence
        Every pair's row, any order (sorted here by position).
    issues : sequence of InputIssue
        The pairing's issues.
    unpaired_gt, unpaired_pred : sequence of str
        Files without a partner.

    Raises
    ------
    ValueError
        Other columns, a position twice, or an outcome that does not decode.
    """
    from evaluators.io.typed_json import decode

    if tuple(columns) != COLUMNS:
        raise ValueError(f"the shard's columns are not those of narrative pairs: {', '.join(columns)}")
    ordered = sorted(rows, key=lambda r: r[0])
    for a, b in zip(ordered, ordered[1:]):
        if a[0] == b[0]:
            raise ValueError(f"pair {a[0] + 1} stands in two shards")
    docs: list[Any] = [decode(r[2]) for r in ordered]
    if not all(isinstance(d, DocumentOutcome) for d in docs):
        raise ValueError("a row's outcome is not a narrative document outcome")
    report = report_of_outcomes(docs, settings.config, issues=list(issues), unpaired_gt=list(unpaired_gt),
                                unpaired_pred=list(unpaired_pred))
    if settings.issues:
        report = replace(report, issues=list(settings.issues) + list(report.issues))
    return report


__all__ = ["COLUMNS", "NarrativeShard", "merged_report", "score_shard", "shard_rows"]
