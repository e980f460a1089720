"""Does an answer say that the question cannot be answered?  English and Chinese.

Used by the rule-based ``adversarial`` judge mode (LoCoMo category 5 and any abstention
question): a prediction is correct there when it declines to answer.
"""

from __future__ import annotations

import re

from evaluators.text.tokenize import normalize

#: Whole answers (after NFKC, lower-casing and trimming punctuation) that decline.
EXACT_UNANSWERABLE: frozenset[str] = frozenset({
    "n/a", "na", "none", "null", "unknown", "unanswerable", "not answerable", "no answer", "no idea",
    "idk", "not applicable", "no information", "not mentioned",
    "无", "无答案", "未知", "不知道", "不清楚", "无法回答", "不可回答", "无可奉告", "没有", "未提及",
})

#: English phrases that decline, matched as words anywhere in the answer (lower-cased).
ENGLISH_PATTERNS: tuple[str, ...] = (
    r"not (?:been |ever )?mentioned",
    r"never (?:been )?mentioned",
    r"(?:does|did|do)(?: not|n't) (?:mention|say|specify|state|include|contain)",
    r"no mention",
    r"no (?:relevant |specific |such |available |further )?(?:information|info|data|record|details?|evidence)",
    r"not enough (?:information|info|context|details?)",
    r"(?:insufficient|limited) (?:information|info|context)",
    r"information (?:is |was )?(?:not available|unavailable|missing|not provided|not given|incomplete)",
    r"not (?:provided|specified|stated)",
    r"(?:cannot|can ?not|can't|unable to|not able to) (?:be )?(?:answer(?:ed)?|determine[d]?|tell|know|"
    r"infer|recall|confirm)",
    r"(?:don't|do not|doesn't|does not) (?:know|have (?:any |that |this |the )?(?:information|info|details?|"
    r"record|data))",
    r"(?:is|are) (?:not )?unanswerable",
    r"no way to (?:know|tell|determine)",
    r"not (?:possible|able) to (?:answer|determine|tell)",
)

#: Chinese phrases that decline, matched as substrings.
CHINESE_PATTERNS: tuple[str, ...] = (
    r"未(?:曾)?(?:被)?提(?:及|到|起)", r"没(?:有)?(?:被)?提(?:及|到|起)", r"并未提", r"从未提",
    r"无法(?:回答|确定|判断|得知|知道|获知|找到|推断|给出)", r"不能(?:回答|确定|判断)", r"无从(?:得知|知晓|判断)",
    r"(?:没有|无|缺乏|缺少)(?:任何)?(?:相关|足够|具体|有关)?(?:的)?(?:信息|资料|记录|数据|内容|线索)",
    r"信息不足", r"(?:资料|信息)(?:不全|缺失|有限)", r"不知道", r"不清楚", r"未(?:说明|指明|透露|记录|描述)",
    r"没有(?:说明|指明|透露|记录|描述)", r"无法作答",
)

_EN = re.compile(r"\b(?:" + "|".join(ENGLISH_PATTERNS) + r")\b")
_ZH = re.compile("|".join(CHINESE_PATTERNS))
_TRIM = re.compile(r"^[\s\W_]+|[\s\W_]+$")


def is_unanswerable(text: object) -> bool:
    """True when ``text`` declines to answer (says the information is not there).

    Parameters
    ----------
    text : str or None
        An answer in English or Chinese (other values are converted with ``str``).

    Returns
    -------
    bool
        True for an empty answer (``None``, ``""``, whitespace), for an answer that is
        exactly one of :data:`EXACT_UNANSWERABLE` ("n/a", "unanswerable", "无法回答" ...)
        after NFKC normalisation, lower-casing and trimming punctuation, and for an
        answer containing one of :data:`ENGLISH_PATTERNS` ("not mentioned",
        "cannot answer", "no information" ...) or :data:`CHINESE_PATTERNS`
        ("未提及", "无法回答", "没有相关信息" ...).

    Notes
    -----
    A superset of the LoCoMo benchmark's own adversarial check, which accepts an
    answer containing "no information available" or "not mentioned"
    (snap-research/LoCoMo ``task_eval/evaluation.py``); the LoCoMo parity mode keeps the
    benchmark's exact check (:func:`evaluators.memory.locomo_parity.locomo_adversarial_correct`).
    """
    if text is None:
        return True
    norm = normalize(str(text)).replace("’", "'").replace("‘", "'")
    if not norm.strip():
        return True
    trimmed = _TRIM.sub("", norm)
    if not trimmed or trimmed in EXACT_UNANSWERABLE:
        return True
    collapsed = re.sub(r"\s+", " ", norm)
    return bool(_EN.search(collapsed) or _ZH.search(collapsed))
