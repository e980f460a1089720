"""LLM-as-judge for long-term-memory QA, with a resumable JSON cache.

Modes (:data:`MODES`):

==================  ==========================================================  ===========
mode                how                                                         score
==================  ==========================================================  ===========
continuous          EvalBoard's graded prompt; JSON reply ``{score, reasoning}``  0.0-1.0, step 0.2
adversarial         rule, no LLM: :func:`is_unanswerable` on the prediction      0 or 1
temporal_reasoning  LongMemEval's official temporal prompt (off-by-one days ok)  0 or 1
knowledge_update    LongMemEval's official knowledge-update prompt               0 or 1
preference          LongMemEval's official preference (rubric) prompt            0 or 1
default_binary      LongMemEval's official prompt for the other types            0 or 1
abstention          LongMemEval's official abstention prompt                     0 or 1
==================  ==========================================================  ===========

Binary modes read the reply as LongMemEval's ``evaluate_qa.py`` does: correct when
``'yes' in reply.lower()``, asked with ``max_tokens=10`` and temperature 0.

Every LLM call goes through the one judge call cache (:class:`evaluators.io.judge_calls.JudgeCallCache`, shared
with the judge lab's ``judge run``), keyed by (model, the mode's template, question / ground truth / prediction,
max_tokens and temperature): with a SQLite file (``batch_judge(calls=...)``, the CLI's ``--judge-calls``) several
workers and runs share the replies and a killed run resumes without asking again.  :class:`JudgeCache` (JSON, by
question id) is the record of the judgements themselves (parsed, with their fingerprint): the file the page
uploads and downloads, that ``--cache`` reads and writes and that agreement reads as stored labels.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators.io.judge_calls import JudgeCallCache, call_key, request_params
from evaluators.io.readers import loads_json_line
from evaluators.io.replies import ReplyStore
from evaluators.memory.prompts import BINARY_PROMPTS, CONTINUOUS
from evaluators.memory.records import EvalResult
from evaluators.memory.unanswerable import is_unanswerable
from evaluators.results import DictMixin

if TYPE_CHECKING:  # the client (httpx, tenacity) is imported only where an LLM judges
    from evaluators.memory.llm import ChatLLM

MODES: tuple[str, ...] = ("continuous", "adversarial", "temporal_reasoning", "knowledge_update", "preference",
                          "default_binary", "abstention")

#: Question type -> mode used by ``mode="auto"`` (abstention questions use ``abstention``,
#: LoCoMo's adversarial ones ``adversarial``; types not listed use ``continuous``).
AUTO_MODES: dict[str, str] = {
    "adversarial": "adversarial",
    "temporal_reasoning": "temporal_reasoning",
    "knowledge_update": "knowledge_update",
    "single_session_preference": "preference",
    "single_session_user": "default_binary",
    "single_session_assistant": "default_binary",
    "multi_session": "default_binary",
}

BINARY_MAX_TOKENS = 10  # as LongMemEval's evaluate_qa.py
CONTINUOUS_MAX_TOKENS = 300
CACHE_FORMAT = "evalboard-memory-judge-cache"
CACHE_VERSION = 1


@dataclass(frozen=True)
class Judgement(DictMixin):
    """The judge's verdict on one answer.

    Attributes
    ----------
    score : float or None
        In [0, 1] (binary modes: 0.0 or 1.0; continuous: a multiple of 0.2); ``None``
        when the judge could not give one (see ``error``).
    mode : str
        One of :data:`MODES`.
    reasoning : str
        The judge's reasoning (continuous), its reply (binary) or the rule applied
        (adversarial).
    reply : str or None
        The raw reply text, ``None`` for the rule-based mode or when no reply came.
    error : str or None
        ``"malformed reply: ..."`` or ``"request failed: ..."``; ``None`` when scored.
    note : str or None
        A caveat on a usable score (e.g. a continuous score rounded to the 0.2 grid).
    model : str or None
        The judge model (``"rule"`` for adversarial).
    """

    score: float | None
    mode: str
    reasoning: str = ""
    reply: str | None = None
    error: str | None = None
    note: str | None = None
    model: str | None = None

    @property
    def ok(self) -> bool:
        """True when a score was given."""
        return self.score is not None and self.error is None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Judgement:
        """Inverse of ``to_dict``; raises ``ValueError`` naming the bad field.

        Parameters
        ----------
        data : mapping
            ``score`` (number in [0, 1] or null), ``mode`` (one of :data:`MODES`), and optionally
            ``reasoning``, ``reply``, ``error``, ``note``, ``model``.

        Returns
        -------
        Judgement

        Raises
        ------
        ValueError
            A score that is not a number in [0, 1] or null, or an unknown mode.
        """
        score = data.get("score")
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= float(score) <= 1.0:
                raise ValueError(f"'score' must be a number in [0, 1] or null, found {score!r}")
            score = float(score)
        mode = data.get("mode")
        if mode not in MODES:
            raise ValueError(f"'mode' must be one of {MODES}, found {mode!r}")
        return cls(score=score, mode=mode, reasoning=str(data.get("reasoning") or ""), reply=data.get("reply"),
                   error=data.get("error"), note=data.get("note"), model=data.get("model"))


def auto_mode(result: EvalResult) -> str:
    """The judge mode ``mode="auto"`` picks for a question (see :data:`AUTO_MODES`).

    Parameters
    ----------
    result : EvalResult
        The question (its type and abstention flag are read).

    Returns
    -------
    str
        One of :data:`MODES`: ``adversarial`` for LoCoMo's adversarial type, ``abstention`` for
        an abstention question, the type's LongMemEval mode, else ``continuous``.
    """
    if result.question_type == "adversarial":
        return "adversarial"
    if result.abstention:
        return "abstention"
    return AUTO_MODES.get(result.question_type, "continuous")


def _extract_json_object(reply: str) -> dict[str, Any]:
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, flags=re.S)
    if fenced:
        text = fenced.group(1).strip()
    try:
        value = loads_json_line(text)
    except ValueError:  # invalid JSON, or nested too deeply (InputError)
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("no JSON object in the reply") from None
        try:
            value = loads_json_line(text[start:end + 1])
        except ValueError as exc:
            raise ValueError(f"the JSON object does not parse ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(value, dict):
        raise ValueError("the reply is JSON but not an object")
    return value


def parse_continuous_reply(reply: str, model: str | None = None) -> Judgement:
    """Read a continuous-mode reply ``{"score": x, "reasoning": "..."}``.

    The object may be wrapped in a code fence or surrounded by text.  A score in
    [0, 1] off the 0.2 grid is rounded to the nearest step (with a ``note``).

    Parameters
    ----------
    reply : str
        The judge model's reply text.
    model : str, optional
        The judge model's name, kept in the judgement.

    Examples
    --------
    >>> parse_continuous_reply('{"score": 0.7, "reasoning": "close"}').score  # halves round up
    0.8

    Returns
    -------
    Judgement
        With ``error="malformed reply: ..."`` and ``score=None`` when the reply has no
        JSON object, no numeric ``score`` or a score outside [0, 1].
    """
    try:
        obj = _extract_json_object(reply)
        raw = obj.get("score")
        if isinstance(raw, str):
            raw = float(raw.strip())
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or math.isnan(raw):
            raise ValueError("'score' is missing or not a number")
        if not 0.0 <= raw <= 1.0:
            raise ValueError(f"'score' {raw} is outside [0, 1]")
    except ValueError as exc:
        return Judgement(score=None, mode="continuous", reply=reply, error=f"malformed reply: {exc}", model=model)
    score = min(1.0, math.floor(raw * 5 + 0.5 + 1e-9) / 5)  # nearest step, halves up
    note = None if abs(score - raw) < 1e-9 else f"score {raw} rounded to the 0.2 grid"
    return Judgement(score=score, mode="continuous", reasoning=str(obj.get("reasoning") or "").strip(), reply=reply,
                     note=note, model=model)


def parse_binary_reply(reply: str, mode: str, model: str | None = None) -> Judgement:
    """Read a yes/no reply as LongMemEval's official script does: correct when
    ``'yes' in reply.lower()``.  A reply with neither "yes" nor "no" is scored 0 (as
    officially) with a ``note``.

    Parameters
    ----------
    reply : str
        The judge model's reply.
    mode : str
        The binary mode the prompt was sent in (kept in the judgement).
    model : str, optional
        The judge model's name.

    Returns
    -------
    Judgement
        Score 1.0 or 0.0; the reply is kept as the reasoning.

    References
    ----------
    Wu et al. (2025), "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive Memory",
    ICLR; its ``src/evaluation/evaluate_qa.py``.

    Examples
    --------
    >>> parse_binary_reply("Yes.", "default_binary").score, parse_binary_reply("No", "default_binary").score
    (1.0, 0.0)
    """
    low = reply.lower()
    score = 1.0 if "yes" in low else 0.0
    note = None if ("yes" in low or "no" in low) else "reply has neither yes nor no; read as no (official rule)"
    return Judgement(score=score, mode=mode, reasoning=reply.strip(), reply=reply, note=note, model=model)


def build_prompt(question: str, ground_truth: str, prediction: str, mode: str) -> str | None:
    """The prompt sent for ``mode`` (``None`` for the rule-based ``adversarial``).

    Parameters
    ----------
    question, ground_truth, prediction : str
        Filled into the mode's template (``question``, ``answer``, ``response``).
    mode : str
        One of :data:`MODES`.

    Returns
    -------
    str or None

    Raises
    ------
    KeyError
        A mode that is neither ``continuous``, ``adversarial`` nor a LongMemEval binary mode.

    References
    ----------
    Wu et al. (2025), "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive Memory",
    ICLR; its ``src/evaluation/evaluate_qa.py`` prompts (binary modes).
    """
    if mode == "adversarial":
        return None
    template = CONTINUOUS if mode == "continuous" else BINARY_PROMPTS[mode]
    return template.format(question=question, answer=ground_truth, response=prediction)


def judge_answer(question: str, ground_truth: str, prediction: str, *, llm: ChatLLM | None = None,
                 mode: str = "continuous", calls: JudgeCallCache | None = None) -> Judgement:
    """Judge one answer.

    Parameters
    ----------
    question, ground_truth, prediction : str
        The question, the reference (a rubric for ``preference``, an explanation for
        ``abstention``) and the system's answer.
    llm : ChatLLM, optional
        Required by every mode except ``adversarial``.
    mode : str
        One of :data:`MODES`.
    calls : JudgeCallCache, optional
        The judge call cache the request goes through (a reply stored for the same model, template, input
        and parameters is reused); ``None``: the request is sent directly.

    Returns
    -------
    Judgement
        A malformed reply or a failed request is recorded in ``error`` (score
        ``None``), never raised.

    Raises
    ------
    ValueError
        Unknown mode, or a mode other than ``adversarial`` without ``llm``.

    References
    ----------
    LongMemEval ``src/evaluation/evaluate_qa.py`` (binary prompts and reading);
    LoCoMo ``task_eval/evaluation.py`` (adversarial questions are answered correctly by
    saying the information is not available).
    """
    if mode not in MODES:
        raise ValueError(f"unknown judge mode {mode!r}; expected one of {', '.join(MODES)}")
    if mode == "adversarial":
        if is_unanswerable(prediction):
            return Judgement(score=1.0, mode=mode, reasoning="The answer declines (unanswerable check): correct for "
                             "a question whose answer is not in the conversation.", model="rule")
        return Judgement(score=0.0, mode=mode, reasoning="The answer gives an answer, but the question is "
                         "adversarial: the information is not in the conversation.", model="rule")
    if llm is None:
        raise ValueError(f"judge mode {mode!r} needs an LLM (llm=...); only 'adversarial' is rule-based")
    from evaluators.memory.llm import LLMError

    prompt = build_prompt(question, ground_truth, prediction, mode)
    model = getattr(llm, "model", None)
    max_tokens = CONTINUOUS_MAX_TOKENS if mode == "continuous" else BINARY_MAX_TOKENS
    try:
        if calls is None:
            reply = llm.complete(prompt, max_tokens=max_tokens)
        else:
            template = CONTINUOUS if mode == "continuous" else BINARY_PROMPTS[mode]
            ck = call_key(str(model), template, {"question": question, "answer": ground_truth, "response": prediction},
                          request_params(llm, max_tokens))
            reply, _ = calls.call(llm, prompt, ck, max_tokens=max_tokens)
    except LLMError as exc:
        prefix = "malformed reply" if exc.kind == "malformed" else "request failed"
        return Judgement(score=None, mode=mode, error=f"{prefix}: {exc}", model=model)
    if mode == "continuous":
        return parse_continuous_reply(reply, model)
    return parse_binary_reply(reply, mode, model)


def fingerprint(result: EvalResult, mode: str) -> str:
    """Hash of what a judgement depends on: the prompt template of ``mode``, the question,
    ground truth and prediction.  A cached judgement is reused only when it matches.

    Parameters
    ----------
    result : EvalResult
        The question with its ground truth and prediction.
    mode : str
        One of :data:`MODES`.

    Returns
    -------
    str
        The first 20 hex digits of a SHA-256.

    Raises
    ------
    KeyError
        An unknown mode.
    """
    template = "rule:is_unanswerable" if mode == "adversarial" else (
        CONTINUOUS if mode == "continuous" else BINARY_PROMPTS[mode])
    blob = json.dumps([mode, template, result.question, result.ground_truth, result.prediction], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


class JudgeCache(ReplyStore):
    """Judgements keyed by ``question_id``, stored as one JSON file (a :class:`~evaluators.io.replies.ReplyStore`
    in its JSON layout: the one reply store, shared with dialogue live mode's checkpoint).

    File layout::

        {"format": "evalboard-memory-judge-cache", "version": 1,
         "entries": {"<question_id>": {"fingerprint": "...", "question_type": "...",
                                       "score": 0.8, "mode": "continuous", "reasoning": "...",
                                       "reply": "...", "error": null, "note": null, "model": "..."}}}

    Parameters
    ----------
    path : str or Path, optional
        Where to read and write; ``None`` keeps the cache in memory only.

    Raises
    ------
    InputError
        When an existing file is not a judge cache (invalid JSON, wrong layout, over the size
        cap); single bad entries are skipped and listed in ``issues``.
    """

    def __init__(self, path: str | Path | None = None):
        super().__init__(path, layout="json", format=CACHE_FORMAT, version=CACHE_VERSION)

    def describe(self) -> str:
        return "judge cache"

    def check_entry(self, entry: Mapping[str, Any]) -> None:
        """Refuse an entry that is not a judgement (the reply store skips and lists it).

        Parameters
        ----------
        entry : mapping
            One cached entry.

        Raises
        ------
        ValueError
            As :meth:`Judgement.from_dict`.
        """
        Judgement.from_dict(entry)

    @classmethod
    def from_bytes(cls, data: bytes, file: str = "<judge cache>") -> JudgeCache:
        """An in-memory cache read from uploaded bytes.

        Parameters
        ----------
        data : bytes
            A judge cache file (JSON).
        file : str
            Its name, for located problems.

        Returns
        -------
        JudgeCache
            Bad entries skipped and listed in ``issues``.

        Raises
        ------
        InputError
            Not a judge cache (invalid JSON, wrong layout, over the size cap).
        """
        cache = cls(None)
        cache.load_bytes(data, file)
        return cache

    @classmethod
    def from_value(cls, value: Any, file: str = "<judge cache>") -> JudgeCache:
        """An in-memory cache from an already parsed JSON value (see :meth:`from_bytes`).

        Parameters
        ----------
        value : object
            The parsed file.
        file : str
            Its name.

        Returns
        -------
        JudgeCache

        Raises
        ------
        InputError
            Not a judge cache's layout.
        """
        cache = cls(None)
        cache.load_value(value, file)
        return cache

    def get(self, question_id: str, fp: str | None = None) -> Judgement | None:
        """The cached judgement, or ``None`` when absent or (with ``fp``) stale.

        Parameters
        ----------
        question_id : str
        fp : str, optional
            The current :func:`fingerprint`; ``None``: not checked.

        Returns
        -------
        Judgement or None
        """
        entry = self.entries.get(question_id)
        if entry is None or (fp is not None and entry.get("fingerprint") != fp):
            return None
        return Judgement.from_dict(entry)

    def judgements(self) -> dict[str, Judgement]:
        """Every cached judgement by question id (fingerprints not checked)."""
        return {qid: Judgement.from_dict(e) for qid, e in self.entries.items()}

    def matching(self, results: Iterable[EvalResult]) -> tuple[dict[str, Judgement], list[str]]:
        """The cached judgements that still fit the results.

        Parameters
        ----------
        results : iterable of EvalResult
            The run's questions.

        Returns
        -------
        (judgements, stale)
            ``question_id -> Judgement`` for entries whose fingerprint matches the result
            under the entry's mode, and the ids of entries that no longer match (question,
            ground truth or prediction changed since they were judged).
        """
        found: dict[str, Judgement] = {}
        stale: list[str] = []
        for r in results:
            entry = self.entries.get(r.question_id)
            if entry is None:
                continue
            if entry.get("fingerprint") == fingerprint(r, entry["mode"]):
                found[r.question_id] = Judgement.from_dict(entry)
            else:
                stale.append(r.question_id)
        return found, stale

    def subset(self, question_ids: Iterable[str]) -> JudgeCache:
        """An in-memory cache with the entries of these question ids only.

        Parameters
        ----------
        question_ids : iterable of str
            Ids not in the cache are ignored.

        Returns
        -------
        JudgeCache
            Entries copied.
        """
        out = JudgeCache(None)
        out.entries = {q: dict(self.entries[q]) for q in question_ids if q in self.entries}
        return out

    def put(self, question_id: str, fp: str, judgement: Judgement, question_type: str = "") -> None:  # type: ignore[override]
        """Store a judgement (thread-safe; call :meth:`save` to write).

        Parameters
        ----------
        question_id : str
        fp : str
            Its :func:`fingerprint`.
        judgement : Judgement
        question_type : str
            Kept with the entry.
        """
        super().put(question_id, {"fingerprint": fp, "question_type": question_type, **judgement.to_dict()})


@dataclass
class JudgeRun(DictMixin):
    """What :func:`batch_judge` did.

    Attributes
    ----------
    judgements : dict
        ``question_id -> Judgement`` for every question given (errors included).
    n_total : int
        Questions given.
    n_cached : int
        Judgements reused from the cache (no call).
    n_judged : int
        Judgements made in this run (LLM calls and rule-based ones).
    n_errors : int
        Judgements without a score (malformed replies, failed requests).
    modes : dict
        ``mode -> number of questions``.
    cache_path : str or None
    """

    judgements: dict[str, Judgement] = field(default_factory=dict)
    n_total: int = 0
    n_cached: int = 0
    n_judged: int = 0
    n_errors: int = 0
    modes: dict[str, int] = field(default_factory=dict)
    cache_path: str | None = None

    def scores(self) -> dict[str, float | None]:
        """``question_id -> score`` (``None`` where the judge failed)."""
        return {qid: j.score for qid, j in self.judgements.items()}


def resolve_mode(result: EvalResult, mode: str | Mapping[str, str]) -> str:
    """The mode for one question: ``"auto"`` (:func:`auto_mode`), one mode for all, or a
    mapping ``question_type -> mode`` (types not in it use :func:`auto_mode`).

    Parameters
    ----------
    result : EvalResult
        The question.
    mode : str or mapping of str to str
        ``"auto"``, a mode of :data:`MODES`, or question type -> mode.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        The mode chosen is not one of :data:`MODES`.
    """
    if isinstance(mode, Mapping):
        chosen = mode.get(result.question_type) or auto_mode(result)
    else:
        chosen = auto_mode(result) if mode == "auto" else mode
    if chosen not in MODES:
        raise ValueError(f"unknown judge mode {chosen!r}; expected 'auto' or one of {', '.join(MODES)}")
    return chosen


def batch_judge(results: Iterable[EvalResult], *, llm: ChatLLM | None = None, mode: str | Mapping[str, str] = "auto",
                cache_path: str | Path | None = None, cache: JudgeCache | None = None,
                progress: Callable[[int, int], None] | None = None, max_workers: int | None = None,
                save_every_s: float = 2.0, calls: JudgeCallCache | None = None) -> JudgeRun:
    """Judge many answers, reusing and filling a JSON cache keyed by question id.

    Parameters
    ----------
    results : iterable of EvalResult
        Question ids must be unique.
    llm : ChatLLM, optional
        Needed only for questions that are not in the cache and not rule-based.
    mode : str or mapping
        ``"auto"`` (mode by question type, :data:`AUTO_MODES`), one of :data:`MODES` for
        all, or ``{question_type: mode}``.
    cache_path : str or Path, optional
        JSON cache file (:class:`JudgeCache`); read when it exists, written as
        judgements arrive (at most every ``save_every_s`` seconds, and at the end, also
        when interrupted), so a stopped run resumes where it was.
    cache : JudgeCache, optional
        An already open cache (instead of ``cache_path``).
    progress : callable, optional
        ``progress(done, total)`` called from the calling thread after each question.
    max_workers : int, optional
        Threads sending requests; default ``llm.config.concurrency`` or 4.
    save_every_s : float
        Minimum seconds between cache writes during the run.
    calls : JudgeCallCache, optional
        The judge call cache every LLM call goes through (module docstring); default an in-memory one for
        this run (the same prompt is asked once).

    Returns
    -------
    JudgeRun
        A cached judgement is reused when its fingerprint (mode's prompt, question,
        ground truth, prediction) matches and it has no error; everything else is
        judged again.  When every question is cached, no LLM call is made.

    Raises
    ------
    ValueError
        Duplicate question ids; an unknown mode; questions that need an LLM and are
        not cached while ``llm`` is ``None`` (the message gives the count).
    """
    results = list(results)
    ids = [r.question_id for r in results]
    if len(set(ids)) != len(ids):
        dup = next(q for q in ids if ids.count(q) > 1)
        raise ValueError(f"duplicate question_id {dup!r}: the judge cache is keyed by question id")
    if cache is None:
        cache = JudgeCache(cache_path)
    run = JudgeRun(n_total=len(results), cache_path=str(cache.path) if cache.path else None)
    todo: list[tuple[EvalResult, str, str]] = []
    for r in results:
        m = resolve_mode(r, mode)
        run.modes[m] = run.modes.get(m, 0) + 1
        fp = fingerprint(r, m)
        cached = cache.get(r.question_id, fp)
        if cached is not None and cached.ok:
            run.judgements[r.question_id] = cached
            run.n_cached += 1
        else:
            todo.append((r, m, fp))
    need_llm = [t for t in todo if t[1] != "adversarial"]
    if need_llm and llm is None:
        raise ValueError(f"{len(need_llm)} question(s) are not in the judge cache and need an LLM judge "
                         f"(modes: {', '.join(sorted({t[1] for t in need_llm}))}); configure an endpoint")
    done = run.n_cached
    if progress:
        progress(done, run.n_total)
    last_save = time.monotonic()
    if calls is None:
        calls = JudgeCallCache(None)

    def work(item: tuple[EvalResult, str, str]) -> Judgement:
        r, m, _ = item
        return judge_answer(r.question, r.ground_truth, r.prediction, llm=llm, mode=m, calls=calls)

    workers = max_workers or getattr(getattr(llm, "config", None), "concurrency", None) or 4
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        futures = {pool.submit(work, t): t for t in todo}
        for fut in as_completed(futures):
            r, m, fp = futures[fut]
            judgement = fut.result()
            cache.put(r.question_id, fp, judgement, r.question_type)
            run.judgements[r.question_id] = judgement
            run.n_judged += 1
            done += 1
            if progress:
                progress(done, run.n_total)
            if time.monotonic() - last_save >= save_every_s:
                cache.save()
                last_save = time.monotonic()
    except BaseException:
        # Interrupted (Ctrl-C, a page rerun): drop queued requests, keep what arrived.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown()
    finally:
        cache.save()
    run.judgements = {q: run.judgements[q] for q in ids if q in run.judgements}
    run.n_errors = sum(1 for j in run.judgements.values() if not j.ok)
    return run
