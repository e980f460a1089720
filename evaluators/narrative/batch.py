"""Batches of narrative documents: pairing, scoring every readable pair, micro and macro totals.

Micro totals pool the raw counts of all documents and recompute the ratios (e.g. micro
``character_f1`` from the summed matched / predicted / GT counts; micro ``boundary_score``
from the summed boundary edits).  Macro totals are the mean over documents of each
document's value, leaving out documents where the value is ``None``; ``n_documents`` says
how many entered each mean.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from dataclasses import dataclass, field
from typing import Any

from evaluators.io.errors import InputError, InputIssue
from evaluators.io.sources import InputFile, pair_files
from evaluators.metrics.statistics import bootstrap_ci
from evaluators.parallel import map_ordered
from evaluators.narrative.base import COMPONENTS, DEFAULT_CONFIG, NarrativeConfig
from evaluators.narrative.composite import (
    NarrativeEvaluator,
    NarrativeResult,
    get_metrics_summary,
    weighted_overall,
)
from evaluators.metrics.segmentation import boundary_similarity_from_counts
from evaluators.narrative.loader import load_document
from evaluators.narrative.patch import apply_document_patch
from evaluators.narrative.sentiment import label_scores, macro_average
from evaluators.results import CommonItems, common_items, mean_or_none, prf, safe_div, to_jsonable
from evaluators.schema.narrative import ACTION_FIELDS


@dataclass
class DocumentOutcome:
    """One paired document: its result, or the error that kept it from being scored.

    Attributes
    ----------
    story_id : str
    gt_file, pred_file : str
    result : NarrativeResult or None
    error : InputIssue or None
        Set when a file of the pair is unusable (undecodable, invalid JSON ...).
    encodings : dict
        ``{"gt": ..., "pred": ...}`` encodings used to decode the files.
    rendered : str or None
        This entry's JSON (as in a batch report's ``documents``) written by the ``render``
        function given to :func:`score_pairs`, in the process that scored it; ``result`` is
        then :meth:`~evaluators.narrative.NarrativeResult.without_rows` and :meth:`to_dict`
        reads the rendered entry.  ``None`` without ``render``.
    """

    story_id: str
    gt_file: str
    pred_file: str
    result: NarrativeResult | None = None
    error: InputIssue | None = None
    encodings: dict[str, str | None] = field(default_factory=dict)
    rendered: str | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (an entry of a batch report's ``documents``)."""
        if self.rendered is not None:
            return json.loads(self.rendered)
        return {"story_id": self.story_id, "gt_file": self.gt_file, "pred_file": self.pred_file,
                "encodings": dict(self.encodings), "error": self.error.to_dict() if self.error else None,
                "result": self.result.to_dict() if self.result else None}


@dataclass(frozen=True)
class NarrativeReport:
    """Scores of a batch with the files that could not be paired or read (what :func:`run_narrative` returns).

    Attributes
    ----------
    documents : list of DocumentOutcome
        In story-id order.
    unpaired_gt, unpaired_pred : list of str
        File names without a partner.
    issues : list of InputIssue
        Pairing warnings and unusable files.
    micro, macro : dict
        Aggregates with the keys of :func:`evaluators.narrative.get_metrics_summary` plus
        ``component_scores``; ``macro["n_documents"]`` counts the documents in each mean.
    signature : str
    before : NarrativeReport or None
        With a GT patch (:mod:`evaluators.narrative.patch`): the run without the corrections
        (this report is the run with them).
    corrections : Corrections or None
        With a GT patch: what it did per GT file and the scores before and after
        (:class:`~evaluators.metrics.before_after.Corrections`); written as ``gt_patch``.
    """

    documents: list[DocumentOutcome]
    unpaired_gt: list[str]
    unpaired_pred: list[str]
    issues: list[InputIssue]
    micro: dict[str, Any]
    macro: dict[str, Any]
    signature: str
    before: NarrativeReport | None = field(default=None, repr=False)
    corrections: Any = None

    @property
    def scored(self) -> list[NarrativeResult]:
        """Results of the documents that could be scored."""
        return [d.result for d in self.documents if d.result is not None]

    def all_issues(self) -> list[InputIssue]:
        """Every input problem: the batch's (pairing, unusable files) then each scored document's."""
        return list(self.issues) + [i for r in self.scored for i in r.issues]

    def problem_counts(self) -> dict[str, int]:
        """The one count of problems shown by the page banner, the overview and the CLI.

        Returns
        -------
        dict
            ``pairs_not_scored`` (pairs whose file could not be used at all), ``input_errors``
            and ``input_warnings`` (located input problems, :meth:`all_issues`; an error left a
            record or a file out, the rest was scored), ``scoring_notes`` (each document's
            ``warnings``: offset repairs, pairs aligned without text evidence, labels outside
            the taxonomy; listed in the Alignment view and the report).
        """
        issues = self.all_issues()
        errors = sum(i.severity == "error" for i in issues)
        return {"pairs_not_scored": sum(d.result is None for d in self.documents), "input_errors": errors,
                "input_warnings": len(issues) - errors,
                "scoring_notes": sum(len(r.warnings) for r in self.scored)}

    def to_dict(self) -> dict[str, Any]:
        return {"documents": [d.to_dict() for d in self.documents], **self.tail_dict()}

    def tail_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` without ``documents`` (the keys written after them); ``gt_patch`` with corrections."""
        out = {
            "unpaired_gt": self.unpaired_gt,
            "unpaired_pred": self.unpaired_pred,
            "issues": [i.to_dict() for i in self.issues],
            "micro": self.micro,
            "macro": self.macro,
            "problem_counts": self.problem_counts(),
            "signature": self.signature,
        }
        if self.corrections is not None:
            out["gt_patch"] = self.corrections
        return to_jsonable(out)


#: The former name of :class:`NarrativeReport`.
BatchResult = NarrativeReport


def micro_aggregate(results: list[NarrativeResult], config: NarrativeConfig = DEFAULT_CONFIG) -> dict[str, Any]:
    """Pool the raw counts of ``results`` and recompute every headline ratio (see the module docstring).

    Parameters
    ----------
    results : list of NarrativeResult
        The scored documents of a run.
    config : NarrativeConfig
        Its component weights give the micro overall score.

    Returns
    -------
    dict
        Each headline metric from counts summed over documents (``None`` where a denominator
        is 0), ``component_scores`` and ``overall_score`` (:func:`weighted_overall` of them);
        documents without GT characters are not counted for characters.
    """
    s: Counter[str] = Counter()

    def add(key: str, value: float) -> None:
        s[key] += value

    overlaps: list[float] = []
    label_counts: dict[str, list[int]] = {}
    for r in results:
        c = r.characters
        if c.n_ground_truth:  # documents without GT characters are gt_incomplete: not counted
            add("c_tp", c.n_matched), add("c_pred", c.n_predicted), add("c_gt", c.n_ground_truth)
        add("c_arch", c.archetype_correct), add("c_arch_t", c.archetype_total)
        rel = r.relationships
        for k in ("total_relationships_correct", "total_relationships_pred", "total_relationships_gt",
                  "strict_correct", "level1_correct", "level1_total", "level2_correct", "level2_total",
                  "pairs_covered", "pairs_total"):
            add(k, getattr(rel, k))
        sen = r.sentiment
        for k in ("total_sentiment_correct", "total_sentiment_pred", "total_sentiment_gt", "polarity_correct",
                  "polarity_total"):
            add(k, getattr(sen, k))
        for lab, v in sen.per_label.items():
            lc = label_counts.setdefault(lab, [0, 0, 0])
            lc[0] += v["tp"]
            lc[1] += v["fp"]
            lc[2] += v["fn"]
        a = r.action_layer
        for f, n in a.field_correct.items():
            add(f"a_{f}_c", n)
            add(f"a_{f}_t", a.field_total[f])
        add("a_complete", a.complete_matches), add("a_partial", a.partial_matches)
        add("a_events", a.n_events_evaluated)
        t = r.text_span
        add("t_pk", t.pk_disagreements), add("t_wd", t.window_diff_disagreements), add("t_win", t.windows)
        if t.boundary_score is not None:
            add("t_m", t.exact_matches)
            add("t_u", t.insertions + t.deletions + t.near_misses)
            add("t_w", t.weighted_edits)
            add("t_docs", 1)
        overlaps.extend(t.overlap_scores)

    out: dict[str, Any] = {}
    cp, cr, cf = prf(s["c_tp"], s["c_pred"], s["c_gt"])
    out.update(character_precision=cp, character_recall=cr, character_f1=cf,
               character_archetype_accuracy=safe_div(s["c_arch"], s["c_arch_t"]))
    n_gold = s["total_relationships_gt"]
    rp, rr, rf = prf(s["total_relationships_correct"], s["total_relationships_pred"], n_gold,
                     precision_needs_gold=True)
    _, _, sf = prf(s["strict_correct"], s["total_relationships_pred"], n_gold)
    out.update(relationship_precision=rp, relationship_recall=rr, relationship_f1=rf,
               relationship_strict_f1=sf,
               level1_accuracy=safe_div(s["level1_correct"], s["level1_total"]),
               level2_accuracy=safe_div(s["level2_correct"], s["level2_total"]),
               relationship_pair_coverage=safe_div(s["pairs_covered"], s["pairs_total"]))
    n_sgt = s["total_sentiment_gt"]
    sp, sr, sf1 = prf(s["total_sentiment_correct"], s["total_sentiment_pred"], n_sgt, precision_needs_gold=True)
    macro_f = None
    if label_counts and n_sgt:
        macro_f = macro_average({lab: label_scores(*c) for lab, c in label_counts.items()}, "f1")
    out.update(sentiment_precision=sp, sentiment_recall=sr, sentiment_f1=sf1,
               sentiment_macro_f1=macro_f,
               sentiment_polarity_accuracy=safe_div(s["polarity_correct"], s["polarity_total"]))
    for f in ACTION_FIELDS:
        out[f"action_{f}_accuracy"] = safe_div(s[f"a_{f}_c"], s[f"a_{f}_t"])
    out["action_layer_complete_match"] = safe_div(s["a_complete"], s["a_events"])
    out["action_layer_partial_match"] = safe_div(s["a_partial"], s["a_events"])
    out["action_layer_field_accuracy"] = safe_div(sum(s[f"a_{f}_c"] for f in ACTION_FIELDS),
                                                  sum(s[f"a_{f}_t"] for f in ACTION_FIELDS))
    out["boundary_score"] = (boundary_similarity_from_counts(s["t_m"], s["t_u"], s["t_w"])
                             if s["t_docs"] else None)
    out["pk"] = safe_div(s["t_pk"], s["t_win"])
    out["window_diff"] = safe_div(s["t_wd"], s["t_win"])
    out["overlap_ratio"] = mean_or_none(overlaps)
    comps = {"characters": out["character_f1"], "relationships": out["relationship_f1"],
             "sentiment": out["sentiment_f1"], "action_layer": out["action_layer_field_accuracy"],
             "text_span": out["boundary_score"]}
    overall, _, _ = weighted_overall(comps, config.weights)
    return {"overall_score": overall, "component_scores": comps, **out}


#: Bootstrap resamples and seed of the document-level confidence intervals of the macro scores.
CI_RESAMPLES = 10_000
CI_SEED = 0


def macro_aggregate(results: list[NarrativeResult], ci_resamples: int = CI_RESAMPLES) -> dict[str, Any]:
    """Mean over documents of each document's value (``None`` values left out; counts in ``n_documents``).

    The overall score and each component score also get a 95% percentile bootstrap interval
    with documents as the resampling unit (``overall_score_ci_low``/``_ci_high``,
    ``component_ci_low``/``component_ci_high`` by component; ``ci`` names the settings;
    :func:`evaluators.metrics.statistics.bootstrap_ci`).  ``ci_resamples=0`` leaves them out.

    Parameters
    ----------
    results : list of NarrativeResult
    ci_resamples : int
        Bootstrap resamples (0: no interval).

    Returns
    -------
    dict
        Each headline metric's mean over documents in [0, 1] (``None`` when no document has it),
        ``component_scores``, and ``n_documents`` for the overall score and each component.

    References
    ----------
    Efron & Tibshirani (1993), ch. 13 (percentile interval, documents resampled).
    """
    values: dict[str, list[float]] = {}
    for r in results:
        summary = get_metrics_summary(r)
        for c in COMPONENTS:
            summary[f"component:{c}"] = r.component_scores[c]
        for k, v in summary.items():
            if v is not None:
                values.setdefault(k, []).append(v)

    def mean(k: str) -> float | None:
        return sum(values[k]) / len(values[k]) if values.get(k) else None

    keys = ["overall_score"] + [k for k in get_metrics_summary(results[0]) if k != "overall_score"] if results else []
    out: dict[str, Any] = {k: mean(k) for k in keys}
    out["component_scores"] = {c: mean(f"component:{c}") for c in COMPONENTS}
    out["n_documents"] = {"overall_score": len(values.get("overall_score", ())),
                          **{c: len(values.get(f"component:{c}", ())) for c in COMPONENTS}}
    if ci_resamples:
        def ci(k: str) -> tuple[float | None, float | None]:
            if not values.get(k):
                return None, None
            b = bootstrap_ci(values[k], n_resamples=ci_resamples, seed=CI_SEED, unit="document")
            return b.ci_low, b.ci_high

        out["overall_score_ci_low"], out["overall_score_ci_high"] = ci("overall_score")
        bounds = {c: ci(f"component:{c}") for c in COMPONENTS}
        out["component_ci_low"] = {c: lo for c, (lo, _) in bounds.items()}
        out["component_ci_high"] = {c: hi for c, (_, hi) in bounds.items()}
        out["ci"] = (f"bootstrap(percentile, mean, n_resamples={ci_resamples}, level=0.95, seed={CI_SEED}, "
                     "unit=document)")
    return out


def evaluate_batch(gt_files: list[InputFile], pred_files: list[InputFile], config: NarrativeConfig | None = None,
                   progress: Callable[[int, int, str], None] | None = None, *, workers: int = 1,
                   render: Callable[[DocumentOutcome], str] | None = None,
                   on_document: Callable[[DocumentOutcome], None] | None = None) -> NarrativeReport:
    """Pair files by story id and score every readable pair.

    Parameters
    ----------
    gt_files, pred_files : list of InputFile
        Files (zip archives already expanded, see :func:`evaluators.io.expand_archives`).
    config : NarrativeConfig, optional
    progress : callable, optional
        Called as ``progress(done, total, story_id)`` after each pair (CLI progress bar, page progress).
    workers : int
        Worker processes (see :func:`score_pairs`).
    render, on_document : callable, optional
        See :func:`score_pairs`.

    Returns
    -------
    NarrativeReport
        Unpaired files are listed; a pair with an unusable file has its ``error`` set and the
        others are still scored.
    """
    pairing = pair_files(gt_files, pred_files)
    return score_pairs(pairing.pairs, config, progress, issues=pairing.issues,
                       unpaired_gt=pairing.unpaired_gt, unpaired_pred=pairing.unpaired_pred, workers=workers,
                       render=render, on_document=on_document)


def _score_pair(evaluator: NarrativeEvaluator, sid: str, g: InputFile, p: InputFile) -> DocumentOutcome:
    """One pair scored, or the located reason it could not be."""
    outcome = DocumentOutcome(sid, g.name, p.name)
    try:
        for f in (g, p):
            if f.issue is not None:
                raise InputError(f.issue)
        gl = load_document(g.data, g.name)
        if getattr(g, "patch", None):  # review corrections of this story (evaluators.narrative.patch)
            gl = apply_document_patch(gl, g.patch)
        outcome.encodings["gt"] = gl.encoding
        pl = load_document(p.data, p.name)
        outcome.encodings["pred"] = pl.encoding
        outcome.result = evaluator.evaluate(pl, gl, story_id=sid)
    except InputError as exc:
        outcome.error = exc.issue
    except Exception as exc:  # noqa: BLE001 - one bad pair must not lose the rest of the batch
        outcome.error = InputIssue(p.name, f"could not be scored against {g.name}: {type(exc).__name__}: {exc}",
                                   kind="internal")
    return outcome


def _score_chunk(config: NarrativeConfig, render: Callable[[DocumentOutcome], str] | None,
                 pairs: list[tuple[str, InputFile, InputFile]]) -> Iterator[DocumentOutcome]:
    """:func:`_score_pair` over pairs, one outcome at a time (all pairs in one process, or a worker's chunk),
    each rendered by ``render`` when given (in the worker: writing the report is parallel too)."""
    evaluator = NarrativeEvaluator(config)
    for sid, g, p in pairs:
        outcome = _score_pair(evaluator, sid, g, p)
        if render is not None:
            outcome.rendered = render(outcome)
            if outcome.result is not None:
                outcome.result = outcome.result.without_rows()
        yield outcome


#: Document pairs per chunk sent to a worker process.
CHUNK_PAIRS = 8


def score_pairs(pairs: list[tuple[str, InputFile, InputFile]], config: NarrativeConfig | None = None,
                progress: Callable[[int, int, str], None] | None = None, *, issues: list[InputIssue] | None = None,
                unpaired_gt: list[str] | None = None, unpaired_pred: list[str] | None = None,
                workers: int = 1, render: Callable[[DocumentOutcome], str] | None = None,
                on_document: Callable[[DocumentOutcome], None] | None = None) -> NarrativeReport:
    """Score already paired files ``(story_id, gt_file, pred_file)``; see :func:`evaluate_batch`.

    ``workers > 1`` scores chunks of :data:`CHUNK_PAIRS` pairs in worker processes
    (:mod:`evaluators.parallel`); the result is identical to ``workers=1``.

    ``render(outcome) -> str`` (picklable: a module-level function) writes each outcome's JSON
    entry where it is scored, into ``outcome.rendered`` (the result then comes back without its
    rows, see :class:`DocumentOutcome`); ``on_document(outcome)`` is called here with
    each outcome in input order as soon as it is there (e.g. to write it while the rest is scored).

    Parameters
    ----------
    pairs : list of (str, InputFile, InputFile)
        ``(story_id, gt_file, pred_file)``.
    config : NarrativeConfig, optional
    progress : callable, optional
        ``progress(done, total, story_id)``.
    issues : list of InputIssue, optional
        Problems found before scoring (pairing), kept in the report.
    unpaired_gt, unpaired_pred : list of str, optional
        Files left without a partner, kept in the report.
    workers : int
        Worker processes.
    render : callable, optional
    on_document : callable, optional

    Returns
    -------
    NarrativeReport
        Documents in input order (a pair that failed carries its error, also in ``issues``), micro
        and macro aggregates (``{}`` when no document was scored).
    """
    config = config or DEFAULT_CONFIG
    docs: list[DocumentOutcome] = []
    total = len(pairs)
    for outcome in map_ordered(partial(_score_chunk, config, render), pairs, workers, chunk_size=CHUNK_PAIRS):
        docs.append(outcome)
        if on_document is not None:
            on_document(outcome)
        if progress is not None:
            progress(len(docs), total, outcome.story_id)
    return report_of_outcomes(docs, config, issues=issues, unpaired_gt=unpaired_gt, unpaired_pred=unpaired_pred)


def report_of_outcomes(docs: list[DocumentOutcome], config: NarrativeConfig | None = None, *,
                       issues: list[InputIssue] | None = None, unpaired_gt: list[str] | None = None,
                       unpaired_pred: list[str] | None = None) -> NarrativeReport:
    """The report of scored pairs (in input order): every pair's error joins ``issues``, then the micro and macro
    aggregates are computed once; what :func:`score_pairs` returns, and what a merge of shards returns.

    Parameters
    ----------
    docs : list of DocumentOutcome
        Every pair's outcome, in input order.
    config : NarrativeConfig, optional
        The settings they were scored with.
    issues : list of InputIssue, optional
        Problems found before scoring (pairing).
    unpaired_gt, unpaired_pred : list of str, optional
        Files left without a partner.

    Returns
    -------
    NarrativeReport
    """
    config = config or DEFAULT_CONFIG
    issues = list(issues or []) + [d.error for d in docs if d.error is not None]
    scored = [d.result for d in docs if d.result is not None]
    return NarrativeReport(
        documents=list(docs),
        unpaired_gt=list(unpaired_gt or []),
        unpaired_pred=list(unpaired_pred or []),
        issues=issues,
        micro=micro_aggregate(scored, config) if scored else {},
        macro=macro_aggregate(scored) if scored else {},
        signature=config.signature,
    )


def system_labels(first: str, others: list[str] | tuple[str, ...]) -> list[str]:
    """The names of the systems compared: ``first``, then each other prediction set after its file name.

    Parameters
    ----------
    first : str
        The first system's name (:func:`evaluators.io.sources.system_name` of its files).
    others : sequence of str
        The other systems' file (or zip, or folder) names, in order.

    Returns
    -------
    list of str
        ``[first, *others]`` as labels: a name without its extension (``system <n>`` when that is empty, n
        counting ``first`` as 1), with ``'`` added until it differs from every label before it.
    """
    labels = [first]
    for i, name in enumerate(others):
        label = name.rsplit(".", 1)[0] or f"system {i + 2}"
        while label in labels:
            label += "'"
        labels.append(label)
    return labels


def systems_matrix(batches: dict[str, NarrativeReport]) -> list[dict[str, Any]]:
    """Documents x systems: one row per story id with each system's overall and component scores.

    Parameters
    ----------
    batches : dict
        System name -> its batch against the same ground truth.

    Returns
    -------
    list of dict
        ``story_id``, then per system ``<system>: overall_score`` and ``<system>: <component>``
        (``None`` where the system has no scored document for that story or the score is
        undefined), and ``spread``: the highest minus the lowest overall score among the systems
        that have one (``None`` with fewer than two).  Stories in order of first appearance.
    """
    rows: dict[str, dict[str, Any]] = {}
    names = list(batches)
    for name, batch in batches.items():
        for r in batch.scored:
            row = rows.setdefault(r.story_id, {"story_id": r.story_id,
                                               **{f"{s}: overall_score": None for s in names}})
            row[f"{name}: overall_score"] = r.overall_score
            for c in COMPONENTS:
                row[f"{name}: {c}"] = r.component_scores[c]
    for row in rows.values():
        values = [row[f"{s}: overall_score"] for s in names if row[f"{s}: overall_score"] is not None]
        row["spread"] = max(values) - min(values) if len(values) > 1 else None
    return list(rows.values())


def systems_common(batches: dict[str, NarrativeReport]) -> CommonItems:
    """The stories every system scored (an overall score), and each system's own n
    (:func:`evaluators.results.common_items`): systems are compared on these.

    Parameters
    ----------
    batches : dict of str to NarrativeReport
        System name -> its run against the same ground truth.

    Returns
    -------
    CommonItems
        Unit ``stories``.
    """
    return common_items({name: [r.story_id for r in b.scored if r.overall_score is not None]
                         for name, b in batches.items()}, unit="stories")


def systems_macro(batches: dict[str, NarrativeReport], common: CommonItems | None = None,
                  ci_resamples: int = CI_RESAMPLES) -> dict[str, dict[str, Any]]:
    """Each system's macro scores (:func:`macro_aggregate`, with intervals) over the common stories only.

    The system's own ``macro`` when every system scored the same stories; ``{}`` for every system
    when no story is common (there is nothing to compare on).

    Parameters
    ----------
    batches : dict of str to NarrativeReport
        System name -> its run against the same ground truth.
    common : CommonItems, optional
        Default :func:`systems_common`.
    ci_resamples : int
        Bootstrap resamples of the intervals.

    Returns
    -------
    dict of str to dict
        System -> its :func:`macro_aggregate`.
    """
    common = common if common is not None else systems_common(batches)
    if common.same:
        return {name: b.macro or {} for name, b in batches.items()}
    if not common.n_common:
        return {name: {} for name in batches}
    keep = set(common.ids)
    return {name: macro_aggregate([r for r in b.scored if r.story_id in keep], ci_resamples)
            for name, b in batches.items()}


def compare_two_systems(batches: dict[str, NarrativeReport], a: str, b: str, *, n_resamples: int = 10_000,
                        seed: int = 0):
    """Paired comparison of two systems' overall scores over the stories both scored (documents paired).

    Parameters
    ----------
    batches : dict of str to NarrativeReport
        System name -> its run against the same ground truth.
    a, b : str
        Two systems (``b`` compared against ``a``).
    n_resamples : int
        Resamples of the paired bootstrap and the randomization test.
    seed : int

    Returns
    -------
    evaluators.metrics.statistics.PairedScores
        Keys are story ids.

    Raises
    ------
    ValueError
        When the two systems share no scored story.
    """
    from evaluators.metrics.statistics import compare_paired_scores

    return compare_paired_scores({r.story_id: r.overall_score for r in batches[a].scored},
                                 {r.story_id: r.overall_score for r in batches[b].scored}, a, b,
                                 n_resamples=n_resamples, seed=seed)
