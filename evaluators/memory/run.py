"""One run of long-term-memory scoring: resolved inputs + one config -> one :class:`MemoryReport`.

The Long Memory page and ``python -m evaluators memory`` both call :func:`run_memory` and
only render or write what it returns, so the page's JSON download and the CLI's JSON
are the same text for the same inputs (:meth:`MemoryReport.to_dict`).

Judge caches (the rules the page used to hold):

- The **store** (``MemoryConfig.judge_store``: the CLI's ``--cache``, the page's local
  cache file per results set, :func:`local_judge_store`) is read and written.  An input
  judge cache (the ``judge_cache`` role of :func:`~evaluators.memory.inputs.resolve_inputs`:
  an upload, the demo's cache) is read only.
- Reading: the store wins when it exists and can be read; otherwise the input cache.  A
  store that cannot be read is a located problem (``judge_cache_problem``), never used.
- Judging (:func:`run_judge`): the store is opened (an unreadable one raises), the input
  cache's entries are copied into it where the store has none for that question, and the
  judge fills in what is missing; the store is written as judgements arrive.
- Which judge scores are reported: :func:`~evaluators.memory.inputs.pick_judge_scores`
  (the judgements that still fit their question, else the stored labels).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from evaluators.io import InputError, InputIssue
from evaluators.io.gt_patch import GTPatchSet
from evaluators.metrics.before_after import Corrections
from evaluators.memory.agreement import (AGREEMENT_RESAMPLES, JudgeAgreement, LongMemEvalReport, judge_agreement,
                                         longmemeval_accuracy)
from evaluators.memory.inputs import ResolvedInputs, pick_judge_scores
from evaluators.memory.judge import JudgeCache, Judgement, JudgeRun, batch_judge
from evaluators.memory import metrics as metrics_mod
from evaluators.memory.locomo_parity import LocomoParityReport, locomo_parity
from evaluators.memory.metrics import QuestionScores, aggregate_rows, resolve_metrics
from evaluators.memory.records import EvalResult, results_to_jsonl
from evaluators.parallel import gc_paused
from evaluators.results import to_jsonable

T = TypeVar("T")
#: ``memo(key, compute) -> value``: a caller's cache (the page's); ``None`` computes every time.
Memo = Callable[[Hashable, Callable[[], T]], T]

#: The input roles named in the report's ``input`` section (labels have their own section).
INPUT_SECTION_ROLES = ("results", "questions", "predictions")


@dataclass(frozen=True)
class MemoryConfig:
    """Every setting of one memory run.

    Attributes
    ----------
    metrics : sequence of str or None
        Metric keys (:data:`~evaluators.memory.metrics.ALL_METRICS`, earlier names accepted);
        ``None``: the defaults that can run here, the others listed in ``unavailable``.
    parity : bool
        LoCoMo's own F1: the ``locomo_f1`` column (added last when not named) and the
        parity table by category.
    ci_resamples : int
        Bootstrap resamples of every mean's 95% interval (0: none).
    workers : int
        Processes scoring the questions (1: in this process).
    judge : object or None
        An LLM client (:class:`~evaluators.memory.llm.ChatLLM`) to run the judge with before
        scoring; ``None`` reads judgements from the caches only.
    judge_mode : str or mapping
        ``"auto"``, one mode for all, or ``{question_type: mode}`` (:func:`batch_judge`).
    judge_store : str or Path or None
        The judge cache file read and written (see the module docstring).
    gt_patch : GTPatchSet or None
        Review corrections of the ground truth (made for ``inputs.gt_file``), applied in order:
        the report is after them, with the scores before beside it (:mod:`evaluators.memory.patch`).
    user_dict : str or None
        A jieba user dictionary (``jieba.load_userdict`` format) for the jieba tokenizations of the
        rank-sensitivity analysis (:func:`evaluators.memory.sensitivity.memory_sensitivity`); its SHA-256
        is written into the report's ``provenance``.  The report's metrics cut text by characters (``char``).
    """

    metrics: Sequence[str] | None = None
    parity: bool = False
    ci_resamples: int = 10_000
    workers: int = 1
    judge: Any = None
    judge_mode: str | Mapping[str, str] = "auto"
    judge_store: str | Path | None = None
    gt_patch: GTPatchSet | None = None
    user_dict: str | None = None

    def metric_names(self) -> tuple[tuple[str, ...], dict[str, str]]:
        """``(names, unavailable)``: the metrics computed, in order, and those left out with their reason.

        Raises
        ------
        ValueError
            An unknown metric name.
        ImportError
            The metric registry cannot be imported.
        """
        names, unavailable = resolve_metrics(list(self.metrics) if self.metrics is not None else None)
        if self.parity and "locomo_f1" not in names:
            names = (*names, "locomo_f1")
        return names, unavailable


@dataclass(frozen=True)
class JudgeCacheChoice:
    """The judge cache a run reads: ``cache`` (``None``: none), its ``name`` for the report, and a ``problem``
    (a store that exists but cannot be read, not used)."""

    cache: JudgeCache | None = None
    name: str = ""
    problem: InputIssue | None = None


@dataclass(frozen=True)
class MemoryReport:
    """Everything one memory run produced; :meth:`to_dict` is the JSON report (page download = CLI output).

    Attributes
    ----------
    inputs : ResolvedInputs
        What the inputs resolved to (records, stored labels, notes, located problems).
    names : tuple of str
        The metrics computed, in column order.
    rows : list of QuestionScores
        One row per question, in input order (the per-question CSV and tables).
    metrics : dict
        :func:`~evaluators.memory.metrics.aggregate_rows` of ``rows``: overall and by-type
        means with intervals, ``unavailable``, ``signature``.
    judgements : dict
        ``question_id -> Judgement`` that still fit their question (cache or this run).
    stale : list of str
        Question ids whose cached judgement no longer fits (not used).
    judge_cache : JudgeCache or None
        The cache the judgements were read from (after a judge run: the store).
    judge : dict or None
        The report's ``judge`` section (cache read, judge run, or where judge scores came from).
    judge_cache_problem : InputIssue or None
        A judge store that exists but cannot be read (also in ``issues``).
    judge_run : JudgeRun or None
        What the judge did when it ran in this call.
    locomo_parity : LocomoParityReport or None
    longmemeval : LongMemEvalReport or None
    agreement : JudgeAgreement or None
        Our judge against the stored labels (when both exist).
    issues : list of InputIssue
        Every located problem (inputs, judge caches).
    before : MemoryReport or None
        With a GT patch: the report of the inputs as read (this one is after the corrections).
    corrections : Corrections or None
        With a GT patch: what it did and the scores before and after, question by question.
    provenance : dict
        How text was cut (:func:`text_provenance`): ``{"char": ..., "jieba": ...}``, each a
        :class:`~evaluators.text.provenance.TextProvenance` as a dict.
    """

    inputs: ResolvedInputs
    names: tuple[str, ...]
    rows: list[QuestionScores]
    metrics: dict[str, Any]
    judgements: dict[str, Judgement] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    judge_cache: JudgeCache | None = None
    judge: dict[str, Any] | None = None
    judge_cache_problem: InputIssue | None = None
    judge_run: JudgeRun | None = None
    locomo_parity: LocomoParityReport | None = None
    longmemeval: LongMemEvalReport | None = None
    agreement: JudgeAgreement | None = None
    issues: list[InputIssue] = field(default_factory=list)
    before: MemoryReport | None = None
    corrections: Corrections | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def results(self) -> list[EvalResult]:
        """The records scored, in input order."""
        return self.inputs.results

    def to_dict(self) -> dict[str, Any]:
        """The JSON report: ``input``, ``issues``, ``labels``, ``judge``, ``metrics``, ``locomo_parity``,
        ``longmemeval``, ``agreement`` (the last five only when they apply)."""
        files = self.inputs.files
        out: dict[str, Any] = {
            "input": {**{role: files.get(role) for role in INPUT_SECTION_ROLES}, "n_questions": len(self.results),
                      "notes": list(self.inputs.notes)},
            "issues": [to_jsonable(i) for i in self.issues],
        }
        stored = self.inputs.stored
        if files.get("labels") and stored is not None:
            out["labels"] = {"file": files["labels"], "n": len(stored.labels), "models": stored.models,
                             "format": stored.format}
        if self.judge is not None:
            out["judge"] = dict(self.judge)
        out["metrics"] = self.metrics
        if self.provenance:
            out["provenance"] = self.provenance
        if self.locomo_parity is not None:
            out["locomo_parity"] = {k: v for k, v in to_jsonable(self.locomo_parity).items() if k != "per_question"}
        if self.longmemeval is not None:
            out["longmemeval"] = to_jsonable(self.longmemeval)
        if self.agreement is not None:
            out["agreement"] = to_jsonable(self.agreement)
        if self.corrections is not None:  # the metrics above are after the corrections
            out["gt_patch"] = to_jsonable(self.corrections)
        return to_jsonable(out)


#: Characters of JSON encoded at once for the digest of :func:`local_judge_store`.
_DIGEST_CHARS = 1 << 20


def local_judge_store(folder: str | Path, results: Sequence[EvalResult]) -> Path:
    """The judge cache file kept for one set of results in ``folder`` (the page's local cache):
    ``memory-<first 16 hex of the SHA-256 of the results' JSONL>.json``."""
    digest = hashlib.sha256()
    encoder = json.JSONEncoder(ensure_ascii=False)  # the text of results_to_jsonl, in pieces
    for r in results:  # line by line: the same digest as the whole JSONL, without a copy of every answer
        if len(r.prediction) + len(r.ground_truth) + len(r.question) < _DIGEST_CHARS:
            digest.update(results_to_jsonl([r]).encode("utf-8"))
            continue
        for part in encoder.iterencode(to_jsonable(r)):  # a long answer: no whole line, no whole bytes copy
            for i in range(0, len(part), _DIGEST_CHARS):
                digest.update(part[i:i + _DIGEST_CHARS].encode("utf-8"))
        digest.update(b"\n")
    digest = digest.hexdigest()[:16]
    return Path(folder) / f"memory-{digest}.json"


def store_state(path: str | Path | None) -> str | None:
    """A string that changes whenever the store file is replaced (inode, mtime, size); ``None`` when absent."""
    if path is None:
        return None
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"


def _direct(_key: Hashable, compute: Callable[[], T]) -> T:
    return compute()


def choose_judge_cache(store: str | Path | None, input_cache: JudgeCache | None, input_name: str = "",
                       *, memo: Memo | None = None, key: Hashable = ()) -> JudgeCacheChoice:
    """The judge cache to read: the store when it exists and can be read, else the input cache.

    Parameters
    ----------
    store : path or None
        The read/write cache (may not exist yet).
    input_cache : JudgeCache or None
        The read-only cache given as input, named ``input_name``.
    memo, key
        The caller's cache and the key of its inputs: the store is read once per file version.
    """
    memo = memo or _direct
    state = store_state(store)
    problem = None
    if state is not None:
        try:
            cache = memo(("mem-judge-disk", key, str(store), state), lambda: JudgeCache(store))
            return JudgeCacheChoice(cache, str(store))
        except InputError as exc:
            problem = InputIssue(exc.issue.file, f"the judge cache cannot be read and is not used: "
                                 f"{exc.issue.message}", path=exc.issue.path, line=exc.issue.line, kind="judge_cache")
    if input_cache is not None:
        return JudgeCacheChoice(input_cache, input_name, problem)
    return JudgeCacheChoice(None, "", problem)


def open_judge_store(store: str | Path | None, input_cache: JudgeCache | None = None) -> JudgeCache:
    """The store opened for a judge run, with the input cache's entries copied in where it has none.

    The store is checked to be writable first (written once), so a run that could not keep its
    judgements fails before any request.

    Raises
    ------
    InputError
        The store exists and is not a judge cache.
    OSError
        The store cannot be written.
    """
    cache = JudgeCache(store)
    if input_cache is not None:
        for qid, entry in input_cache.entries.items():  # copies: the input cache may be shared (the page's)
            cache.entries.setdefault(qid, dict(entry))
    cache.save()
    return cache


def run_judge(inputs: ResolvedInputs, llm: Any, *, store: str | Path | None = None,
              mode: str | Mapping[str, str] = "auto",
              progress: Callable[[int, int], None] | None = None) -> tuple[JudgeRun, JudgeCache]:
    """Judge every question of ``inputs`` not yet judged in the store (or the input cache).

    Returns
    -------
    (JudgeRun, JudgeCache)
        What the judge did, and the store (in memory when ``store`` is ``None``).

    Raises
    ------
    InputError, OSError
        As :func:`open_judge_store` (nothing is sent).
    ValueError
        Duplicate question ids, an unknown mode, questions that need an LLM without one.
    """
    cache = open_judge_store(store, inputs.judge_cache)
    run = batch_judge(inputs.results, llm=llm, mode=mode, cache=cache, progress=progress)
    return run, cache


def text_provenance(config: MemoryConfig) -> dict[str, dict]:
    """How a memory run cuts text: ``char`` (the tokenizer of every text metric of the report) and
    ``jieba`` (the setup of the Tokenization analysis: version, dictionary and user dictionary SHA-256,
    HMM off), each a :class:`~evaluators.text.provenance.TextProvenance` as a dict."""
    from evaluators.text.provenance import JiebaSetup, char_provenance

    return {"char": char_provenance().to_dict(), "jieba": JiebaSetup(user_dict=config.user_dict).provenance().to_dict()}


def _content_key(judge_scores: Mapping[str, Any] | None) -> Hashable:
    return frozenset(judge_scores.items()) if judge_scores else None


@dataclass(frozen=True)
class MemoryPlan:
    """What a memory run decides on the whole input before any question is scored (:func:`plan_memory`): the
    metrics, the judge scores and where they came from.  Every shard of a run (:mod:`evaluators.memory.shards`)
    decides it as one process does.

    Attributes
    ----------
    names : tuple of str
        The metrics computed, in column order.
    unavailable : dict
        Metrics left out, with their reasons.
    judgements : dict
        ``question_id -> Judgement`` that still fit their question.
    stale : list of str
        Question ids whose cached judgement no longer fits.
    judge : dict or None
        The report's ``judge`` section.
    judge_scores : dict
        ``question_id -> score or Judgement`` the questions are scored with (:func:`pick_judge_scores`).
    issues : list of InputIssue
        The inputs' problems, and the judge store's.
    choice : JudgeCacheChoice
        The judge cache read.
    judge_run : JudgeRun or None
        What the judge did when it ran.
    """

    names: tuple[str, ...]
    unavailable: dict[str, str]
    judgements: dict[str, Judgement]
    stale: list[str]
    judge: dict[str, Any] | None
    judge_scores: Mapping[str, Any]
    issues: list[InputIssue]
    choice: JudgeCacheChoice = field(default_factory=JudgeCacheChoice)
    judge_run: JudgeRun | None = None


def plan_memory(inputs: ResolvedInputs, config: MemoryConfig, *, progress: Callable[[int, int], None] | None = None,
                memo: Memo | None = None, key: Hashable = ()) -> MemoryPlan:
    """The judge (run or read from the caches) and the metrics of a run, decided on the whole input
    (the first step of :func:`run_memory`; raises as it does)."""
    memo = memo or _direct
    names, unavailable = config.metric_names()
    results = inputs.results
    issues = list(inputs.issues)
    judge_run = None
    judge: dict[str, Any] | None = None
    stale: list[str] = []
    judgements: dict[str, Judgement] = {}
    choice = JudgeCacheChoice()
    if config.judge is not None:
        judge_run, cache = run_judge(inputs, config.judge, store=config.judge_store, mode=config.judge_mode,
                                     progress=progress)
        judgements = dict(judge_run.judgements)
        judge = {k: v for k, v in to_jsonable(judge_run).items() if k != "judgements"}
        choice = JudgeCacheChoice(cache, str(config.judge_store) if config.judge_store else "")
    else:
        choice = choose_judge_cache(config.judge_store, inputs.judge_cache, inputs.files.get("judge_cache") or "",
                                    memo=memo, key=key)
        if choice.problem is not None:
            issues.append(choice.problem)
        if choice.cache is not None:
            cache = choice.cache
            judgements, stale = memo(("mem-judge-match", key, choice.name, store_state(config.judge_store) or ""),
                                     lambda: cache.matching(results))
            judge = {"cache_path": choice.name, "n_total": len(results), "n_cached": len(judgements),
                     "n_stale": len(stale)}
    judge_scores, judge_source = pick_judge_scores(judgements, inputs.stored, inputs.stored_source)
    if judge_source:
        judge = {**(judge or {}), "source": judge_source}
    return MemoryPlan(names, dict(unavailable), judgements, stale, judge, judge_scores, issues, choice, judge_run)


def aggregate(rows: Sequence[QuestionScores], plan: MemoryPlan, config: MemoryConfig) -> dict[str, Any]:
    """The report's ``metrics`` section of the questions' rows (:func:`aggregate_rows`, intervals included)."""
    return aggregate_rows(rows, plan.names, unavailable=plan.unavailable, ci_resamples=max(0, config.ci_resamples))


def report_of_rows(inputs: ResolvedInputs, config: MemoryConfig, plan: MemoryPlan, rows: list[QuestionScores], *,
                   metrics: dict[str, Any] | None = None, parity: LocomoParityReport | None = None,
                   lme_questions: list[EvalResult] | None = None) -> MemoryReport:
    """The report of a run from its plan and every question's row (the last step of :func:`run_memory`; the merge
    of a run scored in shards calls it on the pooled rows).

    Parameters
    ----------
    inputs : ResolvedInputs
        The run's inputs (``results`` in input order, ``stored``, ``notes``, ``files``).
    config : MemoryConfig
    plan : MemoryPlan
    rows : list of QuestionScores
        One per question of ``inputs.results``, in its order.
    metrics, parity : optional
        The aggregates of ``rows`` (:func:`aggregate`) and the LoCoMo table when already computed (a caller's
        cache); computed here otherwise.
    lme_questions : list of EvalResult, optional
        The questions of LongMemEval's table (default :meth:`ResolvedInputs.longmemeval_questions`).
    """
    if metrics is None:
        metrics = aggregate(rows, plan, config)
    if parity is None and config.parity:
        parity = locomo_parity(inputs.results)
    stored = inputs.stored
    if lme_questions is None:
        lme_questions = inputs.longmemeval_questions()
    lme = longmemeval_accuracy(lme_questions, stored.labels) if lme_questions is not None else None
    judgements = plan.judgements
    agreement = None
    if judgements and stored is not None and stored.labels:
        agreement = judge_agreement(judgements, stored.labels,
                                    n_resamples=AGREEMENT_RESAMPLES if config.ci_resamples else 0)
    return MemoryReport(inputs=inputs, names=plan.names, rows=rows, metrics=metrics, judgements=judgements,
                        stale=plan.stale, judge_cache=plan.choice.cache, judge=plan.judge,
                        judge_cache_problem=plan.choice.problem, judge_run=plan.judge_run, locomo_parity=parity,
                        longmemeval=lme, agreement=agreement, issues=plan.issues, provenance=text_provenance(config))


@gc_paused()  # every question's scores are short-lived, acyclic objects
def run_memory(inputs: ResolvedInputs, config: MemoryConfig | None = None, *,
               progress: Callable[[int, int], None] | None = None, memo: Memo | None = None,
               key: Hashable = ()) -> MemoryReport:
    """Score long-term-memory QA: judge (optional), metrics by type, parity, LongMemEval, agreement.

    Parameters
    ----------
    inputs : ResolvedInputs
        :func:`~evaluators.memory.inputs.resolve_inputs` of the files given by role.
    config : MemoryConfig, optional
    progress : callable, optional
        ``progress(done, total)`` of a judge run.
    memo : callable, optional
        ``memo(key, compute)``: the caller's cache of the expensive steps (reading the store,
        matching the cache, scoring, the parity table), each keyed by ``key`` (the caller's
        content key of ``inputs``) and the settings it depends on.  Default: no cache.
    key : hashable
        Identifies ``inputs`` by content for ``memo`` (never an object id).

    Returns
    -------
    MemoryReport

    Raises
    ------
    ValueError
        Unknown metric or judge mode, duplicate question ids when judging.
    ImportError
        A metric asked for cannot run here (the message names the install command).
    InputError, OSError
        With ``config.judge``: the store cannot be read or written (nothing was sent).
    GTPatchMismatch
        ``config.gt_patch`` holds a correction made for another file than ``inputs.gt_file``.
    """
    config = config or MemoryConfig()
    if config.gt_patch:
        from evaluators.memory.patch import run_with_patch

        return run_with_patch(inputs, config, run_memory, progress=progress, memo=memo, key=key)
    memo = memo or _direct
    plan = plan_memory(inputs, config, progress=progress, memo=memo, key=key)
    results = inputs.results
    settings = f"ci={config.ci_resamples}|workers={config.workers}"

    def score() -> tuple[list[QuestionScores], dict[str, Any]]:
        rows = metrics_mod.score_questions(results, plan.judge_scores, metrics=plan.names, workers=config.workers)
        return rows, aggregate(rows, plan, config)

    rows, metrics = memo(("mem-scores", key, _content_key(plan.judge_scores), plan.names, settings), score)
    parity = memo(("mem-parity", key), lambda: locomo_parity(results)) if config.parity else None
    return report_of_rows(inputs, config, plan, rows, metrics=metrics, parity=parity)
