"""Run one judge version (a prompt template, a model, parameters, a parser) over items, through the one HTTP
layer (:class:`evaluators.memory.llm.ChatLLM`, e.g. :class:`~evaluators.memory.llm.OpenAICompatibleClient`)
and a content-addressed reply cache.

The prompt of an item is ``template.format(question=..., reference=..., answer=...)``.  The cache
(:class:`JudgeReplyCache`, a :class:`~evaluators.io.replies.ReplyStore` in its JSON layout) keys each reply
by the SHA-256 of ``[model, prompt text, max_tokens]``: a reply is reused exactly when the same model was
asked the same text, whichever item, dataset or version asked it.  Parsers (:data:`PARSERS`):

- ``yes-in-reply``: right when ``"yes"`` is in the reply, lower-cased (LongMemEval's ``evaluate_qa.py``);
- ``first-word``: right when the reply's first word is ``yes``, ``correct`` or ``right`` (``是``, ``对``,
  ``正确`` too), wrong when it is ``no``, ``incorrect``, ``wrong`` (``否``, ``不``, ``错``, ``错误``); else no
  verdict.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from evaluators.io.replies import ReplyStore
from evaluators.judgelab.calibration import JudgeVersion
from evaluators.judgelab.inputs import JudgeItem
from evaluators.memory.llm import ChatLLM, LLMError
from evaluators.results import DictMixin

CACHE_FORMAT = "evalboard-judgelab-replies"

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


class JudgeReplyCache(ReplyStore):
    """Judge replies by content (module docstring), kept in one JSON file (or in memory with ``path=None``)."""

    def __init__(self, path=None):
        super().__init__(path, layout="json", format=CACHE_FORMAT, version=1)

    def describe(self) -> str:
        return "judge reply cache"

    def check_entry(self, entry: Mapping[str, Any]) -> None:
        if not isinstance(entry.get("reply"), str):
            raise ValueError("no reply text")


def reply_key(model: str, prompt: str, max_tokens: int | None) -> str:
    """The cache key of a request: SHA-256 (hex) of ``[model, prompt, max_tokens]`` as JSON."""
    return hashlib.sha256(json.dumps([model, prompt, max_tokens], ensure_ascii=False).encode("utf-8")).hexdigest()


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
              max_tokens: int | None = 10, name: str = "", cache: JudgeReplyCache | None = None,
              workers: int = 4) -> JudgeRunResult:
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
    cache : JudgeReplyCache, optional
        Replies reused and added (saved by the caller).
    workers : int
        Items judged at once (the client bounds requests in flight on its own too).

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
    cached = 0

    def one(item: JudgeItem) -> tuple[str, str | None, str | None, bool]:
        prompt = template.format(question=item.question, reference=item.reference, answer=item.answer)
        key = reply_key(llm.model, prompt, max_tokens)
        hit = cache.entries.get(key) if cache is not None else None
        if hit is not None:
            return item.item_id, hit["reply"], None, True
        try:
            reply = llm.complete(prompt, max_tokens=max_tokens)
        except LLMError as exc:
            return item.item_id, None, f"endpoint: {exc}", False
        if cache is not None:
            cache.put(key, {"reply": reply, "model": llm.model})
        return item.item_id, reply, None, False

    verdicts, replies, errors = {}, {}, {}
    with ThreadPoolExecutor(max(1, workers)) as pool:
        for item_id, reply, error, hit in pool.map(one, items):
            cached += hit
            if reply is None:
                errors[item_id] = error
                continue
            replies[item_id] = reply
            verdict = parse(reply)
            if verdict is None:
                errors[item_id] = f"parser {parser}: no verdict in {reply[:60]!r}"
            else:
                verdicts[item_id] = verdict
    return JudgeRunResult(version, verdicts, replies, errors, cached)
