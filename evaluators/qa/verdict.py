"""Fact-check verdicts: map free-form answers (Chinese or English) to T / F / uncertain.

Rules, in order:

1. ``<think>...</think>`` blocks are removed (an unclosed ``<think>`` hides the rest of
   the text; text after a lone ``</think>`` is the answer).  If an ``<answer>...</answer>``
   tag is present, its content (the last one) is used.
2. The text is NFKC-normalized and case-folded.
3. **Whole answer**: stripped of surrounding quotes, brackets and punctuation, the text is
   looked up in a table of verdict spellings (``T``, ``True``, ``成立``, ``Yes``,
   ``supports``, ``F``, ``不成立``, ``No``, ``refutes``, ``U``, ``证据不足``,
   ``NOT ENOUGH INFO`` ...).
4. **Labelled verdict**: the last ``答案：T`` / ``结论: 不成立`` / ``Verdict: F`` /
   ``Answer - yes`` (a label word, then a spelling of the table).
5. **Final verdict phrase**: the *last* verdict phrase in the text (``综合以上分析，该主张成立。``
   -> T).  Negated and uncertain forms are tried before positive ones at every position
   (``不成立`` before ``成立``, ``not supported`` before ``supported``, ``证据不足以支持``
   before ``支持``).  Bare ``yes`` / ``no`` / ``T`` / ``F`` are not searched inside longer
   text (``there is no evidence`` is not a verdict).
6. Otherwise the verdict is ``unparsed`` (kept apart from ``uncertain``).

Integers in a ``label`` field follow the HoVer convention (1 -> T, 0 -> F), as the
earlier script did; booleans map to T / F.

The spellings extend those of the earlier fact-check script (zhenhaodai/ace,
``normalize_verdict``), which matched negated forms first too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from evaluators.results import DictMixin

T, F, UNCERTAIN, UNPARSED = "T", "F", "uncertain", "unparsed"
#: The three verdict classes, in the order of the confusion matrix.
VERDICTS: tuple[str, str, str] = (T, F, UNCERTAIN)

SIGNATURE = "verdict=think-removed, <answer> tag, NFKC+casefold, whole-answer table, labelled verdict, last phrase (negated first)"

#: Whole-answer spellings (compared after NFKC + casefold + trimming punctuation).
EXACT: dict[str, str] = {}
for _label, _words in (
    (T, ["t", "true", "成立", "正确", "正確", "支持", "yes", "supports", "support", "supported",
         "correct", "对", "是", "属实", "屬實", "真", "entailment", "entailed"]),
    (F, ["f", "false", "不成立", "错误", "錯誤", "不支持", "no", "refutes", "refute", "refuted",
         "incorrect", "不正确", "不正確", "错", "否", "不属实", "不屬實", "假", "contradiction", "contradicts"]),
    (UNCERTAIN, ["uncertain", "u", "不确定", "不確定", "证据不足", "證據不足", "无法判断", "無法判斷",
                 "not enough info", "not enough information", "not_enough_info", "notenoughinfo", "nei",
                 "not enough evidence", "insufficient evidence", "insufficient information", "unknown", "未知",
                 "无法确定", "無法確定", "信息不足", "資訊不足", "unverifiable", "neutral", "cannot be determined"]),
):
    for _w in _words:
        EXACT[_w] = _label

# Phrases searched inside longer text.  Order matters: at one position the first
# alternative that matches wins, so negated / uncertain forms come first.
_PHRASES: list[tuple[str, str]] = [
    # uncertain
    ("证据不足以支持", UNCERTAIN), ("證據不足以支持", UNCERTAIN), ("不足以支持", UNCERTAIN), ("不足以判断", UNCERTAIN),
    ("证据不足", UNCERTAIN), ("證據不足", UNCERTAIN), ("信息不足", UNCERTAIN), ("資訊不足", UNCERTAIN),
    ("无法判断", UNCERTAIN), ("無法判斷", UNCERTAIN), ("无法确定", UNCERTAIN), ("無法確定", UNCERTAIN),
    ("无法验证", UNCERTAIN), ("無法驗證", UNCERTAIN), ("不确定", UNCERTAIN), ("不確定", UNCERTAIN),
    # false
    ("不成立", F), ("不能成立", F), ("并不成立", F), ("不正确", F), ("不正確", F), ("不支持", F),
    ("不属实", F), ("不屬實", F), ("错误", F), ("錯誤", F),
    # true
    ("成立", T), ("正确", T), ("正確", T), ("支持", T), ("属实", T), ("屬實", T),
]
_EN_PHRASES: list[tuple[str, str]] = [
    # uncertain
    (r"not enough (?:info|information|evidence)", UNCERTAIN), (r"insufficient (?:evidence|information|info)", UNCERTAIN),
    (r"cannot be (?:determined|verified)", UNCERTAIN), (r"can ?not (?:determine|verify)", UNCERTAIN),
    (r"can't (?:be )?(?:determined?|verif(?:y|ied))", UNCERTAIN), (r"uncertain", UNCERTAIN), (r"unverifiable", UNCERTAIN),
    # false
    (r"not (?:true|correct|supported|accurate)", F), (r"(?:does not|doesn't|do not|don't) support", F),
    (r"unsupported", F), (r"untrue", F), (r"false", F), (r"incorrect", F), (r"refute[sd]?", F),
    # true
    (r"true", T), (r"correct", T), (r"supports", T), (r"supported", T),
]


def _build_phrase_regex() -> tuple[re.Pattern[str], dict[str, str]]:
    parts = []
    labels: dict[str, str] = {}
    for i, (phrase, label) in enumerate(_PHRASES):
        name = f"z{i}"
        labels[name] = label
        parts.append(f"(?P<{name}>{re.escape(phrase)})")
    for i, (pattern, label) in enumerate(_EN_PHRASES):
        name = f"e{i}"
        labels[name] = label
        parts.append(f"(?P<{name}>(?<![a-z]){pattern}(?![a-z]))")
    return re.compile("|".join(parts)), labels


_PHRASE_RE, _PHRASE_LABELS = _build_phrase_regex()

_LABEL_WORDS = r"(?:最终答案|最終答案|答案|结论|結論|判断|判斷|判定|结果|結果|裁定|final answer|final verdict|verdict|answer|label|conclusion|prediction)"
_EXACT_ALT = "|".join(sorted((re.escape(k) for k in EXACT), key=len, reverse=True))
_LABELLED_RE = re.compile(
    rf"(?<![a-z]){_LABEL_WORDS}\s*(?:是|为|為|is)?\s*[:：=\-]?\s*[\"'“”‘’「」『』\[\(（【*]*\s*(?P<v>{_EXACT_ALT})(?![a-z])"
)
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_ANSWER_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)
_TRIM = " \t\r\n.。!！?？,，;；:：\"'“”‘’「」『』[]()（）【】《》<>*`_~-—"


@dataclass(frozen=True)
class Verdict(DictMixin):
    """A normalized verdict and how it was found.

    Attributes
    ----------
    label : str
        ``"T"``, ``"F"``, ``"uncertain"`` or ``"unparsed"``.
    rule : str
        ``"exact"`` (whole answer), ``"labelled"`` (after a label such as ``答案：``),
        ``"last-phrase"`` (final verdict phrase of a longer text), ``"hover-int"``,
        ``"bool"``, ``"empty"`` or ``"none"`` (no verdict found).
    matched : str or None
        The text that decided the verdict.
    """

    label: str
    rule: str
    matched: str | None = None


def strip_think(text: str) -> str:
    """Remove ``<think>...</think>`` reasoning blocks.

    An unclosed ``<think>`` removes everything after it; text before a lone ``</think>``
    (reasoning whose opening tag was cut off) is removed as well.

    Parameters
    ----------
    text : str
        A model's raw output.

    Returns
    -------
    str
        The text outside the reasoning blocks (not stripped).

    Examples
    --------
    >>> strip_think("<think>maybe F</think> T").strip()
    'T'
    """
    text = _THINK_BLOCK.sub(" ", text)
    close = list(_THINK_CLOSE.finditer(text))
    if close:
        text = text[close[-1].end():]
    m = _THINK_OPEN.search(text)
    if m:
        text = text[: m.start()]
    return text


def extract_answer(text: str) -> str:
    """The answer part of a model output: ``<think>`` removed, last ``<answer>`` tag content if any.

    Parameters
    ----------
    text : str
        Raw model output.

    Returns
    -------
    str
        Stripped answer text (may be empty).
    """
    if "<" not in text:  # no <think> or <answer> tag: the common case, no copies
        return text.strip()
    text = strip_think(text)
    tags = _ANSWER_TAG.findall(text)
    if tags:
        return tags[-1].strip()
    return text.strip()


def normalize_verdict(value: Any) -> Verdict:
    """Normalize a verdict (ground truth or model output) to T / F / uncertain / unparsed.

    Parameters
    ----------
    value : str, int, bool or None
        The raw value; see the module docstring for the rules.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> normalize_verdict("该主张不成立").label
    'F'
    >>> normalize_verdict("<think>可能成立？</think>综合以上分析，该主张成立。").label
    'T'
    >>> normalize_verdict("NOT ENOUGH INFO").label
    'uncertain'
    """
    if value is None:
        return Verdict(UNPARSED, "empty")
    if isinstance(value, bool):
        return Verdict(T if value else F, "bool", str(value))
    if isinstance(value, int):
        if value in (0, 1):
            return Verdict(T if value == 1 else F, "hover-int", str(value))
        return Verdict(UNPARSED, "none", str(value))
    if isinstance(value, float):
        if value != value:  # NaN
            return Verdict(UNPARSED, "empty")
        value = str(value)
    if not isinstance(value, str):
        return Verdict(UNPARSED, "none")
    text, key = _whole_answer(value)
    if not text.strip():
        return Verdict(UNPARSED, "empty")
    if key in EXACT:
        return Verdict(EXACT[key], "exact", key)
    labelled = list(_LABELLED_RE.finditer(text))
    phrases = list(_PHRASE_RE.finditer(text))
    last_label = labelled[-1] if labelled else None
    last_phrase = phrases[-1] if phrases else None
    if last_label is not None and (last_phrase is None or last_label.end() >= last_phrase.end()):
        word = last_label.group("v")
        return Verdict(EXACT[word], "labelled", last_label.group(0).strip())
    if last_phrase is not None:
        return Verdict(_PHRASE_LABELS[last_phrase.lastgroup], "last-phrase", last_phrase.group(0))
    return Verdict(UNPARSED, "none")


def _whole_answer(value: str) -> tuple[str, str]:
    """``(text, key)``: the answer NFKC-normalized and case-folded, and the key looked up in :data:`EXACT`."""
    text = unicodedata.normalize("NFKC", extract_answer(value)).casefold()
    return text, " ".join(text.strip(_TRIM).split())


def is_verdict_like(value: Any) -> bool:
    """True when ``value`` is a short verdict spelling (used to detect fact-check data).

    Only whole-answer spellings, booleans and 0/1 count; a sentence that merely contains
    a verdict word does not.  The same as ``normalize_verdict(value).rule in ("exact", "bool",
    "hover-int")``, without searching longer texts for verdict phrases.

    Parameters
    ----------
    value : object
        A ground truth or prediction as parsed (str, bool, int ...).

    Returns
    -------
    bool

    Examples
    --------
    >>> is_verdict_like("SUPPORTS"), is_verdict_like(1), is_verdict_like("The claim is supported.")
    (True, True, False)
    """
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return value in (0, 1)
    if isinstance(value, float):
        if value != value:
            return False
        value = str(value)
    if not isinstance(value, str):
        return False
    text, key = _whole_answer(value)
    return bool(text.strip()) and key in EXACT
