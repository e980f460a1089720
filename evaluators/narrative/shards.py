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
from functools import partial
from typing import Any

from evaluators.io.errors import InputIssue
from evaluators.io.gt_patch import GTPatchSet
from evaluators.io.sources import pair_files, story_id
from evaluators.narrative.batch import CHUNK_PAIRS, DocumentOutcome, NarrativeReport, _score_chunk, report_of_outcomes
from evaluators.narrative.run import NarrativeInputs
from evaluators.narrative.settings import NarrativeSettings
from evaluators.parallel import map_ordered
from evaluators.shards import assign, assignment_digest, pooled_rows

#: The per-item columns of a narrative shard file: the pair's position, its story id, its outcome and, with a GT
#: patch, its outcome on the corrected GT (typed JSON).
COLUMNS = ("index", "id", "outcome", "after")


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
    patched : dict or None
        With a GT patch: the pairing of the corrected GT files (``issues``, ``unpaired_gt``, ``unpaired_pred``)
        and what the patch did (``applications``, ``patch_issues``: :class:`evaluators.narrative.patch.PatchedGT`).
    after : list of DocumentOutcome
        With a GT patch: this shard's pairs scored on the corrected GT files.
    """

    n_pairs: int
    assignment: str
    issues: list[InputIssue]
    unpaired_gt: list[str]
    unpaired_pred: list[str]
    positions: list[int] = field(repr=False)
    outcomes: list[DocumentOutcome] = field(repr=False)
    patched: dict[str, Any] | None = field(default=None, repr=False)
    after: list[DocumentOutcome] = field(default_factory=list, repr=False)

    @property
    def keys(self) -> list[tuple[None, str]]:
        """This shard's items: ``(None, story id)``."""
        return [(None, o.story_id) for o in self.outcomes]


def _pairs(gt, pred, single_pair: bool) -> tuple[list, list[InputIssue], list[str], list[str]]:
    """The pairs of a run's files, as :func:`evaluators.narrative.run.run_narrative` pairs them, with the pairing's
    issues and the files without a partner."""
    if single_pair:
        g, p = gt[0], pred[0]
        return [(story_id(g.name), g, p)], [], [], []
    pairing = pair_files(list(gt), list(pred))
    return pairing.pairs, list(pairing.issues), list(pairing.unpaired_gt), list(pairing.unpaired_pred)


def score_shard(inputs: NarrativeInputs, settings: NarrativeSettings, shard: int, n_shards: int,
                seed: int = 0, *, workers: int = 1) -> NarrativeShard:
    """Score shard ``shard`` of ``n_shards`` of a narrative run.

    With ``inputs.gt_patch`` the shard's pairs are scored twice, as the single-process run scores every pair: on
    the GT files as read and on the corrected ones (:func:`evaluators.narrative.patch.patch_gt_files`); the merge
    compares them.

    Parameters
    ----------
    inputs : NarrativeInputs
        The run's files.
    settings : NarrativeSettings
        The run's settings.
    shard, n_shards : int
        1-based shard of ``n_shards``.
    seed : int
        Seed of the assignment.
    workers : int
        Processes scoring chunks of the shard's pairs (:func:`evaluators.parallel.map_ordered`, as the single
        process scores them); the outcomes are the same for any count.

    Returns
    -------
    NarrativeShard

    Raises
    ------
    GTPatchMismatch
        No line of the patch was made for a GT file of the run.
    """
    pairs, issues, unpaired_gt, unpaired_pred = _pairs(inputs.gt, inputs.pred, inputs.single_pair)
    shards = assign([(None, sid) for sid, _, _ in pairs], n_shards, seed)
    positions = [k for k, s in enumerate(shards) if s == shard]
    def score(work: list) -> list[DocumentOutcome]:
        return list(map_ordered(partial(_score_chunk, settings.config, None), [work[k] for k in positions], workers,
                                chunk_size=CHUNK_PAIRS))

    outcomes = score(pairs)
    result = NarrativeShard(len(pairs), assignment_digest(shards), issues, unpaired_gt, unpaired_pred, positions,
                            outcomes)
    if not inputs.gt_patch:
        return result
    from evaluators.narrative.patch import patch_gt_files

    patched = patch_gt_files(inputs.gt, inputs.gt_patch)  # as the run after the corrections (its adapter)
    pairs_after, issues_after, gt_after, pred_after = _pairs(patched.files, inputs.pred, inputs.single_pair)
    if [sid for sid, _, _ in pairs_after] != [sid for sid, _, _ in pairs]:
        raise ValueError("the corrected GT files pair otherwise than the files as read")
    after = score(pairs_after)
    return replace(result, after=after, patched={
        "issues": issues_after, "unpaired_gt": gt_after, "unpaired_pred": pred_after,
        "applications": patched.applications, "patch_issues": patched.issues})


def shard_rows(result: NarrativeShard) -> list[list]:
    """The shard's rows in :data:`COLUMNS` order (the outcome as typed JSON)."""
    from evaluators.io.typed_json import encode

    after = result.after or [None] * len(result.outcomes)
    return [[k, o.story_id, encode(o), None if a is None else encode(a)]
            for k, o, a in zip(result.positions, result.outcomes, after)]


def merged_report(settings: NarrativeSettings, columns: Sequence[str], rows: Sequence[Sequence], *,
                  issues: Sequence[InputIssue], unpaired_gt: Sequence[str],
                  unpaired_pred: Sequence[str], patched: tuple[GTPatchSet, dict[str, Any]] | None = None
                  ) -> NarrativeReport:
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
    patched : (GTPatchSet, dict), optional
        With a GT patch: the patch and :attr:`NarrativeShard.patched` (decoded); the report is then the run after
        the corrections with its ``before`` and ``corrections``, as
        :func:`evaluators.narrative.run.run_narrative` makes them (:func:`run_before_after`, the narrative
        adapter), its two runs the pooled ones.

    Raises
    ------
    ValueError
        Other columns, a position twice, or an outcome that does not decode.
    """
    from evaluators.io.typed_json import decode

    ordered = pooled_rows(columns, COLUMNS, rows, what="narrative pairs", item="pair")
    def report(column: int, issues, unpaired_gt, unpaired_pred) -> NarrativeReport:
        docs: list[Any] = [None if r[column] is None else decode(r[column]) for r in ordered]
        if not all(isinstance(d, DocumentOutcome) for d in docs):
            raise ValueError("a row's outcome is not a narrative document outcome")
        out = report_of_outcomes(docs, settings.config, issues=list(issues), unpaired_gt=list(unpaired_gt),
                                 unpaired_pred=list(unpaired_pred))
        return replace(out, issues=list(settings.issues) + list(out.issues)) if settings.issues else out

    before = report(2, issues, unpaired_gt, unpaired_pred)
    if patched is None:
        return before
    from evaluators.metrics.before_after import PatchedInputs, run_before_after
    from evaluators.narrative.patch import adapter

    patches, done = patched
    after = report(3, done["issues"], done["unpaired_gt"], done["unpaired_pred"])
    pooled = replace(adapter(lambda _: before, lambda _: after),  # what the shards' patch did, carried
                     patch=lambda x, _: PatchedInputs(x, tuple(done["applications"]), tuple(done["patch_issues"])))
    _, _, corrections, patch_issues = run_before_after(NarrativeInputs((), ()), patches, pooled)
    return replace(after, issues=list(after.issues) + list(patch_issues), before=before, corrections=corrections)


__all__ = ["COLUMNS", "NarrativeShard", "merged_report", "score_shard", "shard_rows"]
