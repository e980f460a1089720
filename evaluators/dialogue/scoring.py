"""Score persona-dialogue replies per case, per scene and per model, and compare models.

Per case, every chosen metric of :mod:`evaluators.metrics` is computed on (prediction,
expected_response), each text tokenized once (:class:`~evaluators.metrics.registry.PairScorer`).
The combined score is a weighted mean (:func:`combine`); by default the earlier
persona script's weights: exact 0.5, fuzzy 0.2, edit 0.1, semantic 0.1, keyword 0.1.

Case status (missing-GT policy of DESIGN.md):

``compared``  expected and prediction present: metrics computed.
``missing``   expected present, no prediction (no row, empty reply, or an endpoint error):
              a wrong answer; every metric is 0.0 and the case is in the denominators.
``no_gt``     expected_response empty: nothing to compare; metrics ``None``, not counted.

Aggregates are means over cases (macro over cases) of the per-case values, with the
counts of scored, missing and skipped cases beside them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable, Iterator

from evaluators.dialogue.inputs import DialogueCase, PredictionRow
from evaluators.dialogue.matching import Matching, match_predictions
from evaluators.io import InputIssue
from evaluators.metrics.before_after import Corrections
from evaluators.metrics.overlap import CorpusBleu, corpus_bleu
from evaluators.metrics.statistics import bootstrap_ci
from evaluators.metrics.registry import PairScorer, get_metric
from evaluators.parallel import map_ordered
from evaluators.policy import is_empty
from evaluators.results import DictMixin, mean_or_none
from evaluators.text.tokenize import TextView

#: Default weights of the combined score (the earlier persona script's).
DEFAULT_WEIGHTS: dict[str, float] = {
    "exact_match_normalized": 0.5, "fuzzy_ratio": 0.2, "edit_similarity": 0.1, "semantic_similarity": 0.1,
    "keyword_jaccard": 0.1,
}
#: Metrics computed by default (the combined score's plus three overlap metrics).
DEFAULT_METRICS: tuple[str, ...] = tuple(DEFAULT_WEIGHTS) + ("token_f1_char", "rougeL", "bleu4")

#: Keys of the earlier script's JSON report -> our metric with the same definition (difflib mode).
#: Its other keys (``edit_distance``, ``sentence_bert``, ``combined_score``) had other definitions
#: than ours: our values are written under our own names only (``metrics_all``, ``combined``).
LEGACY_NAMES: dict[str, str] = {
    "exact_match": "exact_match_strip", "fuzzy_match": "fuzzy_ratio_difflib",
    "keyword_similarity": "keyword_jaccard_difflib",
}

STATUS_COMPARED, STATUS_MISSING, STATUS_NO_GT = "compared", "missing", "no_gt"


@dataclass(frozen=True)
class CombinedWeights(DictMixin):
    """How the combined score is weighted once unavailable metrics are known.

    Attributes
    ----------
    requested : dict
        Weights asked for.
    used : dict
        Weights actually applied (sum 1): the available metrics' requested weights
        divided by their sum.
    redistributed : tuple of str
        Metrics whose weight was spread over the others because they are unavailable.
    note : str
        A sentence saying so, shown with the combined score.
    """

    requested: dict[str, float]
    used: dict[str, float]
    redistributed: tuple[str, ...]
    note: str


def combined_weights(weights: dict[str, float], unavailable: Iterable[str] = ()) -> CombinedWeights:
    """Normalize ``weights`` over the available metrics.

    Parameters
    ----------
    weights : dict
        ``{metric: weight >= 0}``.
    unavailable : iterable of str
        Metrics that cannot be computed here.

    Returns
    -------
    CombinedWeights

    Raises
    ------
    ValueError
        A negative weight, or no available metric with a positive weight.

    Examples
    --------
    Default weights without semantic similarity: 0.5, 0.2, 0.1, 0.1 over 0.9, i.e.
    exact 0.5/0.9 = 0.5556, fuzzy 0.2222, edit 0.1111, keyword 0.1111.
    """
    if any(w < 0 for w in weights.values()):
        raise ValueError("weights must be >= 0")
    unavailable = set(unavailable)
    gone = tuple(m for m, w in weights.items() if m in unavailable and w > 0)
    kept = {m: w for m, w in weights.items() if m not in unavailable and w > 0}
    total = sum(kept.values())
    if total <= 0:
        raise ValueError("no available metric has a positive weight")
    used = {m: w / total for m, w in kept.items()}
    note = ("weights as requested" if not gone else
            f"{', '.join(gone)} unavailable: {sum(weights[m] for m in gone):g} of weight redistributed "
            f"proportionally over {', '.join(kept)}")
    return CombinedWeights(dict(weights), used, gone, note)


def combine(scores: dict[str, float | None], weights: CombinedWeights) -> float | None:
    """Weighted mean of per-case scores with the weights in use.

    A cosine (range [-1, 1]) enters clipped to [0, 1].  Returns ``None`` when a weighted
    metric has no value for this case (no ground truth).

    Parameters
    ----------
    scores : dict of str to (float or None)
        Metric -> the case's value.
    weights : CombinedWeights
        Its ``used`` weights (renormalised over the metrics that can run, summing to 1).

    Returns
    -------
    float or None
        In [0, 1].

    References
    ----------
    The earlier persona-dialogue evaluation script's weighted score (its default weights are
    :data:`DEFAULT_WEIGHTS`).
    """
    total = 0.0
    for m, w in weights.used.items():
        v = scores.get(m)
        if v is None:
            return None
        total += w * min(1.0, max(0.0, v))
    return total


@dataclass(frozen=True)
class DialogueConfig(DictMixin):
    """What to compute.

    Attributes
    ----------
    metrics : tuple of str
        Registered metric names shown per case (the weighted ones are always computed).
    weights : dict
        Combined-score weights.
    mode : str
        ``"default"`` or ``"difflib"`` (exact, fuzzy and keyword as the earlier script).
    user_dict : str or None
        A jieba user dictionary (path) loaded for the jieba metrics (``keyword_jaccard``); its SHA-256
        is in those metrics' signatures.
    """

    metrics: tuple[str, ...] = DEFAULT_METRICS
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    mode: str = "default"
    user_dict: str | None = None

    def metric_names(self) -> list[str]:
        """Chosen metrics followed by weighted ones not chosen, without repeats."""
        return list(dict.fromkeys(list(self.metrics) + [m for m, w in self.weights.items() if w > 0]))


@dataclass(frozen=True)
class CaseResult(DictMixin):
    """One model's reply to one case, scored.

    Attributes
    ----------
    model, scene, dialogue_index : str
    occurrence : int
    context, expected_response, prediction : str
    status : str
        ``compared``, ``missing`` or ``no_gt`` (see the module docstring).
    metrics : dict
        ``{metric: value or None}``; ``None`` for unavailable metrics and ``no_gt`` cases.
    combined_score : float or None
    error : str or None
        The endpoint error when the reply is missing because a live call failed.
    source : str
        Where the prediction came from (``file:line``), ``""`` when missing.
    """

    model: str
    scene: str
    dialogue_index: str
    occurrence: int
    context: str
    expected_response: str
    prediction: str
    status: str
    metrics: dict[str, float | None]
    combined_score: float | None
    error: str | None = None
    source: str = ""


@dataclass(frozen=True)
class GroupSummary(DictMixin):
    """Means over the cases of one model (``scene`` ``None``) or one (model, scene).

    Attributes
    ----------
    n_cases : int
        Cases in the group.
    n_scored : int
        Cases in the denominators (compared + missing).
    n_missing : int
        Cases without a usable reply (scored 0).
    n_errors : int
        Missing cases whose reply failed with an endpoint error.
    n_no_gt : int
        Cases skipped because the expected response is empty.
    means : dict
        ``{metric: mean or None}`` over scored cases.
    combined_score : float or None
        Mean combined score over scored cases.
    aggregation : str
    combined_score_ci_low, combined_score_ci_high : float or None
        95% percentile bootstrap interval of ``combined_score``, cases resampled
        (:func:`evaluators.metrics.statistics.bootstrap_ci`, seed 0, :data:`CI_RESAMPLES`);
        set for the per-model summaries, ``None`` for per-scene ones.
    """

    model: str
    scene: str | None
    n_cases: int
    n_scored: int
    n_missing: int
    n_errors: int
    n_no_gt: int
    means: dict[str, float | None]
    combined_score: float | None
    aggregation: str = "macro over cases (mean of per-case values)"
    combined_score_ci_low: float | None = None
    combined_score_ci_high: float | None = None


@dataclass(frozen=True)
class ModelComparison(DictMixin):
    """Which model wins where, on the cases every compared model has in common.

    Attributes
    ----------
    models : list of str
    n_shared : int
        Cases scored for every model.
    wins : dict
        ``{model: cases where it alone has the highest combined score}``.
    ties : int
        Shared cases where the best score is shared.
    pairwise : dict
        ``{a: {b: cases where a scores higher than b}}`` over cases both have.
    best_by_scene : dict
        ``{scene: model with the highest mean combined score}`` (ties joined with " = ").
    winners : dict
        ``{"scene#index#occurrence": winning model or "tie"}``.
    """

    models: list[str]
    n_shared: int
    wins: dict[str, int]
    ties: int
    pairwise: dict[str, dict[str, int]]
    best_by_scene: dict[str, str]
    winners: dict[str, str]


@dataclass(frozen=True)
class DialogueReport(DictMixin):
    """Everything computed for one cases file and one or more models (what ``run_dialogue`` returns).

    With a GT patch (:mod:`evaluators.dialogue.patch`) the scores are after the corrections;
    ``before`` is the report of the cases as read and ``corrections`` what the patch did, with the
    models' scores before and after.
    """

    config: DialogueConfig
    metric_info: list[dict]
    weights: CombinedWeights
    cases_file: str
    n_cases: int
    models: list[str]
    results: list[CaseResult]
    by_model: list[GroupSummary]
    by_scene: list[GroupSummary]
    comparison: ModelComparison | None
    corpus_bleu: dict[str, CorpusBleu]
    issues: list[InputIssue]
    matching: dict
    before: DialogueReport | None = None
    corrections: Corrections | None = None

    @property
    def signatures(self) -> dict[str, str]:
        """``{metric: signature}`` of the metrics computed."""
        return {m["name"]: m["signature"] for m in self.metric_info}


#: The former name of :class:`DialogueReport`.
DialogueEvaluation = DialogueReport


#: Bootstrap resamples of the per-model interval of the combined score.
CI_RESAMPLES = 10_000


def _summaries(results: list[CaseResult], names: list[str], by_scene: bool) -> list[GroupSummary]:
    groups: dict[tuple, list[CaseResult]] = defaultdict(list)
    for r in results:
        groups[(r.model, r.scene if by_scene else None)].append(r)
    out = []
    for (model, scene), rs in groups.items():
        scored = [r for r in rs if r.status != STATUS_NO_GT]
        combined = [r.combined_score for r in scored if r.combined_score is not None]
        ci = (bootstrap_ci(combined, n_resamples=CI_RESAMPLES, seed=0, unit="case")
              if combined and not by_scene and CI_RESAMPLES else None)
        out.append(GroupSummary(
            model=model, scene=scene, n_cases=len(rs), n_scored=len(scored),
            n_missing=sum(r.status == STATUS_MISSING for r in rs), n_errors=sum(r.error is not None for r in rs),
            n_no_gt=len(rs) - len(scored),
            means={m: mean_or_none(r.metrics.get(m) for r in scored) for m in names},
            combined_score=mean_or_none(combined),
            combined_score_ci_low=ci.ci_low if ci else None, combined_score_ci_high=ci.ci_high if ci else None,
        ))
    return out


def compare_models(results: list[CaseResult], tol: float = 1e-9) -> ModelComparison | None:
    """Per-case winners, win counts, pairwise wins and best model per scene.

    Returns ``None`` with fewer than two models.

    Parameters
    ----------
    results : list of CaseResult
        Every model's case results.
    tol : float
        Combined scores within ``tol`` of the best tie for the win.

    Returns
    -------
    ModelComparison or None
    """
    models = list(dict.fromkeys(r.model for r in results))
    if len(models) < 2:
        return None
    per_case: dict[tuple, dict[str, float]] = defaultdict(dict)
    scene_scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.combined_score is not None:
            per_case[(r.scene, r.dialogue_index, r.occurrence)][r.model] = r.combined_score
            scene_scores[r.scene][r.model].append(r.combined_score)
    wins = dict.fromkeys(models, 0)
    pairwise = {a: dict.fromkeys((b for b in models if b != a), 0) for a in models}
    ties = n_shared = 0
    winners = {}
    for key, scores in per_case.items():
        for a in scores:
            for b in scores:
                if a != b and scores[a] > scores[b] + tol:
                    pairwise[a][b] += 1
        if len(scores) < len(models):
            continue
        n_shared += 1
        best = max(scores.values())
        top = [m for m, s in scores.items() if s >= best - tol]
        name = f"{key[0]}#{key[1]}#{key[2]}"
        if len(top) == 1:
            wins[top[0]] += 1
            winners[name] = top[0]
        else:
            ties += 1
            winners[name] = "tie"
    best_by_scene = {}
    for scene, by_model in scene_scores.items():
        means = {m: sum(v) / len(v) for m, v in by_model.items()}
        best = max(means.values())
        best_by_scene[scene] = " = ".join(m for m, v in means.items() if v >= best - tol)
    return ModelComparison(models, n_shared, wins, ties, pairwise, best_by_scene, winners)


#: (model, case) pairs per chunk sent to a worker process.
CHUNK_CASES = 500


def _case_result(scorer: PairScorer, weights: CombinedWeights, names: list[str], ref_views: dict[tuple, TextView],
                 model: str, case: DialogueCase, row: PredictionRow | None) -> CaseResult:
    """One model's reply to one case, scored (``ref_views`` caches each expected reply's tokens)."""
    prediction = row.prediction if row else ""
    error = row.error if row else None
    if is_empty(case.expected_response):
        status, scores = STATUS_NO_GT, dict.fromkeys(names)
    elif is_empty(prediction):
        status = STATUS_MISSING
        scores = {m: (None if m in scorer.unavailable else 0.0) for m in names}
    else:
        status = STATUS_COMPARED
        ref = ref_views.setdefault(case.key, TextView(case.expected_response))
        scores = scorer.score_views(TextView(prediction), ref)
    combined = None if status == STATUS_NO_GT else combine(scores, weights)
    return CaseResult(model, case.scene, case.dialogue_index, case.occurrence, case.context, case.expected_response,
                      prediction, status, scores, combined, error, row.where() if row else "")


def _score_chunk(config: DialogueConfig, items: list[tuple[str, DialogueCase, PredictionRow | None]]
                 ) -> Iterator[CaseResult]:
    """:func:`_case_result` over ``(model, case, row)`` items, one at a time (all in one process, or a chunk)."""
    scorer, names, weights = build_scorer(config)
    ref_views: dict[tuple, TextView] = {}
    for item in items:
        yield _case_result(scorer, weights, names, ref_views, *item)


def build_scorer(config: DialogueConfig) -> tuple[PairScorer, list[str], CombinedWeights]:
    """The scorer of ``config``, the metric names it scores (a mode's variants named as such) and the weights.

    Parameters
    ----------
    config : DialogueConfig
        Metrics, mode, weights and jieba user dictionary.

    Returns
    -------
    (PairScorer, list of str, CombinedWeights)
        One scorer for every pair of a run (each text tokenized once for all its metrics), the
        metric names in report order, and the combined score's weights over the metrics that can
        run here (see :func:`combined_weights`).  Used by scoring and by the review patch of dialogue
        (:mod:`evaluators.dialogue.patch`), so both score a reply alike.
    """
    scorer = PairScorer(config.metric_names(), modes=config.mode, user_dict=config.user_dict)
    weights = {scorer.resolved.get(m, m): w for m, w in config.weights.items()}
    return scorer, list(scorer.metrics), combined_weights(weights, scorer.unavailable)


def evaluate_dialogue(cases: list[DialogueCase], rows: list[PredictionRow], config: DialogueConfig | None = None,
                      *, cases_file: str = "<cases>", issues: Iterable[InputIssue] = (),
                      progress: Callable[[int, int], None] | None = None, workers: int = 1) -> DialogueEvaluation:
    """Score every model's replies against the cases.

    Parameters
    ----------
    cases : list of DialogueCase
    rows : list of PredictionRow
        All models' rows (any order; occurrences numbered per model).
    config : DialogueConfig, optional
    cases_file : str
        Name shown in reports.
    issues : iterable of InputIssue
        Reading issues to carry into the result.
    progress : callable, optional
        ``progress(done, total)`` after each scored case.
    workers : int
        Worker processes scoring chunks of :data:`CHUNK_CASES` replies (:mod:`evaluators.parallel`);
        the result is identical to ``workers=1``.

    Returns
    -------
    DialogueEvaluation

    Raises
    ------
    KeyError
        An unknown metric name in the config.
    ValueError
        Invalid weights (see :func:`combined_weights`).
    """
    evaluation, items = plan_dialogue(cases, rows, config, cases_file=cases_file, issues=issues)
    total = len(items)
    results: list[CaseResult] = []
    for r in map_ordered(partial(_score_chunk, evaluation.config), items, workers, chunk_size=CHUNK_CASES):
        results.append(r)
        if progress:
            progress(len(results), total)
    return with_results(evaluation, results)


def plan_dialogue(cases: list[DialogueCase], rows: list[PredictionRow], config: DialogueConfig | None = None, *,
                  cases_file: str = "<cases>", issues: Iterable[InputIssue] = ()
                  ) -> tuple[DialogueEvaluation, list[tuple[str, DialogueCase, PredictionRow | None]]]:
    """What :func:`evaluate_dialogue` decides before any reply is scored: the replies matched to the cases, and the
    run without results (its metrics, weights, models, issues and matching counts).

    Returns
    -------
    (DialogueEvaluation, list of (model, case, row or None))
        The evaluation with no results yet (:func:`with_results` adds them and the aggregates) and the
        (model, case, matched row) items to score, model by model, in case order.

    Raises
    ------
    KeyError, ValueError
        As :func:`evaluate_dialogue`.
    """
    config = config or DialogueConfig()
    scorer, names, weights = build_scorer(config)
    matching: Matching = match_predictions(cases, rows)
    models = matching.models
    items = [(model, case, matching.matched[model].get(case.key)) for model in models for case in cases]
    info = [scorer.metrics[n].info() if n in scorer.metrics else get_metric(n).info() for n in names]
    all_issues = list(issues) + matching.issues()
    summary = {
        "n_unmatched": len(matching.unmatched), "n_duplicates": len(matching.duplicates),
        "n_expected_mismatch": len(matching.expected_mismatch), "n_context_mismatch": len(matching.context_mismatch),
        "n_missing": {m: len(v) for m, v in matching.missing.items()},
        "n_matched": {m: len(v) for m, v in matching.matched.items()},
    }
    return DialogueEvaluation(
        config=config, metric_info=info, weights=weights, cases_file=cases_file, n_cases=len(cases), models=models,
        results=[], by_model=[], by_scene=[], comparison=None, corpus_bleu={}, issues=all_issues, matching=summary,
    ), items


def with_results(evaluation: DialogueEvaluation, results: list[CaseResult]) -> DialogueEvaluation:
    """``evaluation`` with ``results`` and every aggregate made from them (per model with intervals, per
    scene, the model comparison, corpus BLEU).

    Parameters
    ----------
    evaluation : DialogueEvaluation
        A scored persona run.
    results : list of CaseResult
        The case results to aggregate (re-scored after corrections, for example).

    Returns
    -------
    DialogueEvaluation
        A copy.
    """
    import dataclasses

    names = [m["name"] for m in evaluation.metric_info]
    bleu = {}
    for model in evaluation.models:
        pairs = [(r.prediction, r.expected_response) for r in results if r.model == model and r.status != STATUS_NO_GT]
        bleu[model] = corpus_bleu([p for p, _ in pairs], [e for _, e in pairs])
    return dataclasses.replace(evaluation, results=results, by_model=_summaries(results, names, False),
                               by_scene=_summaries(results, names, True), comparison=compare_models(results),
                               corpus_bleu=bleu)


def case_key(r: CaseResult | DialogueCase) -> str:
    """A case's key across models: ``scene#dialogue_index#occurrence`` (also the id a GT patch names it by).

    Parameters
    ----------
    r : CaseResult or DialogueCase

    Returns
    -------
    str
    """
    return f"{r.scene}#{r.dialogue_index}#{r.occurrence}"


def model_replies(evaluation: DialogueEvaluation) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
    """Model -> ``(case key, reply, (expected reply,))`` of its scored cases (cases without an expected reply
    left out): the runs of :func:`evaluators.metrics.sensitivity.rank_sensitivity` for the persona task.

    Parameters
    ----------
    evaluation : DialogueEvaluation
        A scored persona run.

    Returns
    -------
    dict of str to list of (str, str, tuple of str)
    """
    return {m: [(case_key(r), r.prediction, (r.expected_response,)) for r in evaluation.results
                if r.model == m and r.status != "no_gt"] for m in evaluation.models}


def case_matrix(evaluation: DialogueEvaluation) -> list[dict]:
    """Cases x models: one row per case with each model's reply and combined score.

    Parameters
    ----------
    evaluation : DialogueEvaluation
        A scored persona run.

    Returns
    -------
    list of dict
        Keys ``case`` (:func:`case_key`), ``scene``, ``dialogue_index``, ``expected_response``,
        ``<model>: combined_score``, ``<model>: prediction`` per model (``None`` where the model
        has no result), and ``spread``: the highest minus the lowest combined score of the
        models that have one (``None`` with fewer than two), in [0, 1].
    """
    rows: dict[str, dict] = {}
    for r in evaluation.results:
        row = rows.setdefault(case_key(r), {"case": case_key(r), "scene": r.scene,
                                            "dialogue_index": r.dialogue_index,
                                            "expected_response": r.expected_response,
                                            **{f"{m}: combined_score": None for m in evaluation.models},
                                            **{f"{m}: prediction": None for m in evaluation.models}})
        row[f"{r.model}: combined_score"] = r.combined_score
        row[f"{r.model}: prediction"] = r.prediction
    for row in rows.values():
        values = [row[f"{m}: combined_score"] for m in evaluation.models if row[f"{m}: combined_score"] is not None]
        row["spread"] = max(values) - min(values) if len(values) > 1 else None
    return list(rows.values())


def compare_two_models(evaluation: DialogueEvaluation, model_a: str, model_b: str, *, n_resamples: int = 10_000,
                       seed: int = 0):
    """Paired comparison of two models' combined scores over the cases both were scored on.

    Parameters
    ----------
    evaluation : DialogueEvaluation
        A scored persona run.
    model_a, model_b : str
        Two models (``model_b`` compared against ``model_a``).
    n_resamples : int
        Resamples of the paired bootstrap and the randomization test.
    seed : int

    Returns
    -------
    evaluators.metrics.statistics.PairedScores
        Paired bootstrap interval and p-value of the mean difference (B - A), approximate
        randomization p-value, won / lost / tied per case (keys from :func:`case_key`).

    Raises
    ------
    ValueError
        When the two models share no scored case.
    """
    from evaluators.metrics.statistics import compare_paired_scores

    a = {case_key(r): r.combined_score for r in evaluation.results if r.model == model_a}
    b = {case_key(r): r.combined_score for r in evaluation.results if r.model == model_b}
    return compare_paired_scores(a, b, model_a, model_b, n_resamples=n_resamples, seed=seed)
