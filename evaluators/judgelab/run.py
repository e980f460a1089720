"""Run one judge version (a prompt template, a model, parameters, a parser) over items, through the one HTTP
layer (:class:`evaluators.memory.llm.ChatLLM`, e.g. :class:`~evaluators.memory.llm.OpenAICompatibleClient`)
and a content-addressed reply cache.

The prompt of an item is ``template.format(question=..., reference=..., answer=...)``.  Every call goes
through the one judge call cache (:class:`evaluators.io.judge_calls.JudgeCallCache`, shared with the
long-memory judge): keyed by (model, template hash, the item's question/reference/answer, max_tokens and
temperature), so a reply is reused exactly when the same model was asked the same template about the same
input, whichever item id, dataset or version asked it, and a run killed halfway resumes without asking
again.  Parsers (:data:`PARSERS`):

- ``yes-in-reply``: right when ``"yes"`` is in the reply, lower-cased (LongMemEval's ``evaluate_qa.py``);
- ``first-word``: right when the reply's first word is ``yes``, ``correct`` or ``right`` (``是``, ``对``,
  ``正确`` too), wrong when it is ``no``, ``incorrect``, ``wrong`` (``否``, ``不``, ``错``, ``错误``); else no
  verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaluators.io.judge_calls import JudgeCallCache, call_key, request_params, run_calls
from evaluators.judgelab.calibration import JudgeVersion
from evaluators.judgelab.inputs import JudgeItem
from evaluators.memory.llm import ChatLLM, LLMError
from evaluators.results import DictMixin

_FIRST_RIGHT = {"yes", "correct", "right", "是", "对", "正确"}
_FIRST_WRONG = {"no", "incorrect", "wrong", "否", "不", "错", "错误", "不对", "不正确"}


def _first_word(reply: str) -> int | None:
    m = re.match(r"\W*([A-Za-z]+|[\u4e00-\u9fff]{1,3})", reply.strip())
    if not m:
        return None
    word = m.group(1).lower()
    for n in (len(word), 3, 2, 1):  # Chinese: the longest known prefix ("正确" before "正")
        w = word[:n]
        if w in _FIRST_RIGHT:
            return 1
        if w in _FIRST_WRONG:
            return 0
    return None


#: Parser name -> ``reply -> 1 / 0 / None``.
PARSERS: dict[str, Callable[[str], int | None]] = {
    "yes-in-reply": lambda reply: int("yes" in reply.lower()),
    "first-word": _first_word,
}


@dataclass(frozen=True)
class JudgeRunResult(DictMixin):
    """One judge version's verdicts.

    Attributes
    ----------
    version : JudgeVersion
    verdicts : dict
        ``item_id -> 1 / 0`` for items with a parsed verdict.
    replies : dict
        ``item_id -> reply text``.
    errors : dict
        ``item_id -> why no verdict`` (the endpoint failed, or the parser found none).
    cached : int
        Replies taken from the cache (no request sent).
    """

    version: JudgeVersion
    verdicts: dict
    replies: dict
    errors: dict
    cached: int


def run_judge(items: Sequence[JudgeItem], template: str, llm: ChatLLM, *, parser: str = "yes-in-reply",
              max_tokens: int | None = 10, name: str = "", cache: JudgeCallCache | None = None,
              workers: int = 4, progress: Callable[[int, int], None] | None = None) -> JudgeRunResult:
    """Judge every item with one prompt template.

    Parameters
    ----------
    items : sequence of JudgeItem
    template : str
        Prompt text with ``{question}``, ``{reference}`` and ``{answer}`` fields (``str.format``; double the
        braces that are text).
    llm : ChatLLM
        The endpoint (its ``model`` is part of the version and of the cache key).
    parser : str
        A key of :data:`PARSERS`.
    max_tokens : int or None
        Sent with every request; a parameter of the version.
    name : str
        The version's display name.
    cache : JudgeCallCache, optional
        The judge call cache: replies reused and added as they arrive (several workers and processes may
        share it); default an in-memory one for this run.
    workers : int
        Items judged at once, on threads (the client bounds requests in flight on its own too).
    progress : callable, optional
        ``progress(done, total)``.

    Returns
    -------
    JudgeRunResult
        ``version = JudgeVersion.make(llm.model, template, {"max_tokens": ..., "temperature": 0}, parser, name)``.

    Raises
    ------
    ValueError
        An unknown parser, or a template with a field other than question, reference and answer.
    """
    if parser not in PARSERS:
        raise ValueError(f"parser must be one of {', '.join(PARSERS)}, not {parser!r}")
    try:
        template.format(question="", reference="", answer="")
    except (KeyError, IndexError) as exc:
        raise ValueError(f"the template may use {{question}}, {{reference}} and {{answer}} only: {exc}") from exc
    parse = PARSERS[parser]
    version = JudgeVersion.make(llm.model, template, {"max_tokens": max_tokens, "temperature": 0}, parser, name)
    if cache is None:
        cache = JudgeCallCache(None)
    params = request_params(llm, max_tokens)
    calls = []
    for item in items:
        fields = {"question": item.question, "reference": item.reference, "answer": item.answer}
        calls.append((template.format(**fields), call_key(llm.model, template, fields, params)))
    outcomes = run_calls(calls, llm, cache, max_tokens=max_tokens, workers=workers, errors=(LLMError,),
                         progress=progress)
    verdicts, replies, errors = {}, {}, {}
    cached = 0
    for item, got in zip(items, outcomes):
        item_id, reply = item.item_id, got.reply
        cached += got.cached
        if reply is None:
            errors[item_id] = f"endpoint: {got.error}"
            continue
        replies[item_id] = reply
        verdict = parse(reply)
        if verdict is None:
            errors[item_id] = f"parser {parser}: no verdict in {reply[:60]!r}"
        else:
            verdicts[item_id] = verdict
    return JudgeRunResult(version, verdicts, replies, errors, cached)
