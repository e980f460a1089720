"""Extraction audit: which verdicts and choices the parser read, missed or found ambiguous, per system (issue 31).

A fact-check or multiple-choice score is only as good as the step that turns a model's
free text into a label.  The verdict parser (:mod:`evaluators.qa.verdict`) counts its misses
(``unparsed``); this module shows them:

- :func:`parse_choice` reads a multiple-choice answer (``答案：A、C``, ``我選擇 B``, ``選 A``,
  full-width ``Ａ``, ``the answer is (B)``) as a set of letters;
- :func:`audit` counts, per system, the parsed, unparsed and ambiguous extractions with
  examples (ambiguous: the text states different labels, e.g. ``答案：A …… 答案：B`` or both
  成立 and 不成立 without a labelled verdict, or ``A 或 B``);
- :func:`review_payloads` turns the unparsed (and ambiguous) ones into review items;
- :func:`rule_change` re-reads every answer with a user's mapping file (:func:`load_rules`:
  label -> extra spellings) and gives the per-system score delta and the items that moved.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.io.sources import read_file_bytes
from evaluators.qa import verdict as verdicts
from evaluators.results import DictMixin

PARSED, UNPARSED, AMBIGUOUS = "parsed", "unparsed", "ambiguous"
KINDS = ("verdict", "choice")

_SEP = r"\s*(?:[、,，/&和及与與]|and)\s*"
_LETTERS = rf"[A-F](?:{_SEP}[A-F])*"
_WHOLE = re.compile(rf"^[\(（【\[]?\s*({_LETTERS})\s*[\)）】\]]?$")
_LABELLED = re.compile(
    rf"(?:(?i:最终答案|最終答案|正确答案|正確答案|答案|选项|選項|final answer|the answer is|answer)"
    rf"\s*(?:是|为|為|(?i:is))?\s*[:：=]?\s*[\(（【\[「\"“]?\s*)(?<![A-Za-z])({_LETTERS})(?![A-Za-z])")
_CHOSEN = re.compile(rf"(?:我?选择|我?選擇|我?选|我?選|(?i:i choose|i pick|i select|choose|option))\s*[:：]?\s*"
                     rf"[\(（【\[]?\s*(?<![A-Za-z])({_LETTERS})(?![A-Za-z])")
_OR = re.compile(rf"(?<![A-Za-z])[A-F]\s*(?:或者|或|还是|還是|(?i:or))\s*[A-F](?![A-Za-z])")


@dataclass(frozen=True)
class Extraction(DictMixin):
    """What was read from one answer.

    Attributes
    ----------
    label : str or None
        ``T`` / ``F`` / ``uncertain`` for verdicts; ``"A"`` or ``"A,C"`` (sorted letters) for choices;
        ``None`` when unparsed.
    status : str
        ``parsed``, ``unparsed`` or ``ambiguous`` (a label was chosen but the text states others too).
    rule : str
        The rule that decided (``exact``, ``labelled``, ``chosen``, ``last-phrase``, ``user-mapping``, ``none``).
    matched : str or None
        The text that decided.
    """

    label: str | None
    status: str
    rule: str
    matched: str | None = None


def _letters(group: str) -> str:
    return ",".join(sorted(set(re.findall(r"[A-F]", group))))


def _prepared(text: str) -> str:
    return unicodedata.normalize("NFKC", verdicts.extract_answer(text))


def parse_choice(value: Any, rules: Mapping[str, Sequence[str]] | None = None) -> Extraction:
    """Read a multiple-choice answer as a set of letters A-F.

    Rules in order: the whole answer is letters (``A``, ``Ａ``, ``(B)``, ``A、C``); the last labelled
    answer (``答案：A、C``, ``the answer is (B)``); the last choice verb (``我選擇 B``, ``選 A``);
    then the user mapping (:func:`load_rules`); else unparsed.  Ambiguous: labelled/chosen answers
    that name different letters, or ``A 或 B`` / ``A or B``.

    Parameters
    ----------
    value : object
        The model's raw answer (``<think>`` blocks are dropped, text NFKC-normalized).
    rules : mapping of str to sequence of str, optional
        A user mapping (:func:`load_rules`): label -> extra spellings.

    Returns
    -------
    Extraction
        ``label`` the sorted letters joined by commas (``"A,C"``), or ``None`` when unparsed.

    Examples
    --------
    >>> parse_choice("答案：A、C").label, parse_choice("我選擇 B").label, parse_choice("A 或 B，答案：A").status
    ('A,C', 'B', 'ambiguous')
    """
    if value is None or not isinstance(value, str) or not value.strip():
        return Extraction(None, UNPARSED, "empty")
    text = _prepared(value)
    core = text.strip().strip("。.！!")
    m = _WHOLE.match(core)
    if m:
        return Extraction(_letters(m.group(1)), PARSED, "exact", m.group(0))
    found = [(x.end(), _letters(x.group(1)), "labelled", x.group(0)) for x in _LABELLED.finditer(text)]
    found += [(x.end(), _letters(x.group(1)), "chosen", x.group(0)) for x in _CHOSEN.finditer(text)]
    if found:
        found.sort()
        end, label, rule, matched = found[-1]
        ambiguous = len({f[1] for f in found}) > 1 or _OR.search(text) is not None
        return Extraction(label, AMBIGUOUS if ambiguous else PARSED, rule, matched.strip())
    mapped = _mapped(text, rules)
    if mapped is not None:
        return mapped
    return Extraction(None, UNPARSED, "none")


def parse_verdict(value: Any, rules: Mapping[str, Sequence[str]] | None = None) -> Extraction:
    """:func:`evaluators.qa.verdict.normalize_verdict` with its status, and a user mapping on top.

    Ambiguous: decided by the last verdict phrase while the text also states another verdict
    (phrases of different labels, e.g. 成立 and 不成立), or by a labelled verdict while another
    labelled verdict says otherwise.  A user mapping (:func:`load_rules`) decides an unparsed answer,
    and a phrase-decided one when its spelling occurs later in the text than the built-in phrase.

    Parameters
    ----------
    value : object
        The model's raw answer (text, bool or 0/1).
    rules : mapping of str to sequence of str, optional
        A user mapping (:func:`load_rules`): label -> extra spellings.

    Returns
    -------
    Extraction
        ``label`` ``T``, ``F`` or ``uncertain``, or ``None`` when unparsed.

    Examples
    --------
    >>> parse_verdict("结论：不成立").label, parse_verdict("也许吧").status
    ('F', 'unparsed')
    """
    v = verdicts.normalize_verdict(value)
    if v.label == verdicts.UNPARSED:
        if isinstance(value, str):
            mapped = _mapped(_prepared(value).casefold(), rules, casefold=True)
            if mapped is not None:
                return mapped
        return Extraction(None, UNPARSED, v.rule, v.matched)
    if not isinstance(value, str) or v.rule == "exact":
        return Extraction(v.label, PARSED, v.rule, v.matched)
    text = _prepared(value).casefold()
    if v.rule == "last-phrase" and rules:
        mapped = _mapped(text, rules, casefold=True)
        at = text.rfind(v.matched or "")
        if mapped is not None and mapped.matched is not None and text.rfind(mapped.matched) > at:
            return mapped
    if v.rule == "labelled":
        labels = {verdicts.EXACT.get(m.group("v")) for m in verdicts._LABELLED_RE.finditer(text)}
    else:
        labels = {verdicts._PHRASE_LABELS[m.lastgroup] for m in verdicts._PHRASE_RE.finditer(text)}
    return Extraction(v.label, AMBIGUOUS if len(labels) > 1 else PARSED, v.rule, v.matched)


def _mapped(text: str, rules: Mapping[str, Sequence[str]] | None, casefold: bool = False) -> Extraction | None:
    """The label of the user mapping spelling that occurs last in ``text`` (whole answer first)."""
    if not rules:
        return None
    best: tuple[int, str, str] | None = None
    stripped = text.strip().strip("。.！!")
    for label, spellings in rules.items():
        for s in spellings:
            key = unicodedata.normalize("NFKC", s)
            key = key.casefold() if casefold else key
            if not key:
                continue
            if stripped == key:
                return Extraction(label, PARSED, "user-mapping", key)
            at = text.rfind(key)
            if at >= 0 and (best is None or at + len(key) > best[0]):
                best = (at + len(key), label, key)
    if best is None:
        return None
    return Extraction(best[1], PARSED, "user-mapping", best[2])


def load_rules(source: str | Path | bytes | Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """A user's mapping file: JSON ``{label: [spelling, ...]}`` (``{"T": ["站得住脚"], "A": ["第一项"]}``).

    Parameters
    ----------
    source : str, Path, bytes or mapping
        A file path (size-capped read), its bytes (UTF-8, BOM allowed) or the parsed object.

    Returns
    -------
    dict of str to tuple of str

    Raises
    ------
    ValueError
        Not a JSON object of lists of strings.
    """
    if isinstance(source, Mapping):
        data: Any = source
    else:
        raw = source if isinstance(source, bytes) else read_file_bytes(source)  # size-capped
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"the mapping file is not UTF-8 JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ValueError("the mapping file must be a JSON object {label: [spelling, ...]}")
    out: dict[str, tuple[str, ...]] = {}
    for label, words in data.items():
        if isinstance(words, str):
            words = [words]
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ValueError(f"label {label!r}: expected a list of strings")
        out[str(label)] = tuple(w for w in words if w.strip())
    return out


# -------------------------------------------------------------------------------------------------------- audit


@dataclass(frozen=True)
class AuditItem(DictMixin):
    """One answer of one system as read by the parser."""

    system: str
    id: str
    text: str
    gold: str | None
    extraction: Extraction
    question: str | None = None


@dataclass(frozen=True)
class SystemAudit(DictMixin):
    """Per-system counts and examples (at most ``examples`` of each status)."""

    system: str
    n: int
    parsed: int
    unparsed: int
    ambiguous: int
    accuracy: float | None
    examples: dict[str, list[AuditItem]] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtractionAudit(DictMixin):
    """Result of :func:`audit`: one :class:`SystemAudit` per system, every item, the kind and rules used."""

    kind: str
    systems: tuple[SystemAudit, ...]
    items: tuple[AuditItem, ...]
    rules: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def unparsed(self, include_ambiguous: bool = False) -> list[AuditItem]:
        """The items whose answer was not read (and, if asked, those read ambiguously).

        Parameters
        ----------
        include_ambiguous : bool
            Also the ambiguous ones.

        Returns
        -------
        list of AuditItem
            In audit order (system, then record).
        """
        wanted = {UNPARSED, AMBIGUOUS} if include_ambiguous else {UNPARSED}
        return [i for i in self.items if i.extraction.status in wanted]


def _gold_label(kind: str, gold: Any) -> str | None:
    if gold is None:
        return None
    if kind == "verdict":
        g = verdicts.normalize_verdict(gold)
        return None if g.label == verdicts.UNPARSED else g.label
    g = parse_choice(gold if isinstance(gold, str) else str(gold))
    return g.label


def audit_items(items: Sequence[tuple[str, str, Any, Any]] | Sequence[Mapping[str, Any]], kind: str = "verdict",
                rules: Mapping[str, Sequence[str]] | None = None, examples: int = 5) -> ExtractionAudit:
    """Audit raw answers: ``(system, id, answer text, gold)`` tuples or dicts with those keys (and ``question``).

    Parameters
    ----------
    items : sequence
        The answers, any order.
    kind : {"verdict", "choice"}
    rules : mapping, optional
        A user mapping (:func:`load_rules`).
    examples : int
        Examples kept per system and status.

    Raises
    ------
    ValueError
        Unknown kind.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    parse = parse_verdict if kind == "verdict" else parse_choice
    out: list[AuditItem] = []
    for it in items:
        if isinstance(it, Mapping):
            system, rid, text, gold, question = (it.get("system") or "", str(it.get("id")), it.get("text"),
                                                 it.get("gold"), it.get("question"))
        else:
            (system, rid, text, gold), question = it, None
        out.append(AuditItem(str(system), rid, text if isinstance(text, str) else ("" if text is None else str(text)),
                             _gold_label(kind, gold), parse(text, rules), question))
    systems = []
    for name in dict.fromkeys(i.system for i in out):
        mine = [i for i in out if i.system == name]
        counts = {s: sum(1 for i in mine if i.extraction.status == s) for s in (PARSED, UNPARSED, AMBIGUOUS)}
        golds = [i for i in mine if i.gold is not None]
        acc = sum(1 for i in golds if i.extraction.label == i.gold) / len(golds) if golds else None
        ex = {s: [i for i in mine if i.extraction.status == s][:examples] for s in (UNPARSED, AMBIGUOUS, PARSED)}
        systems.append(SystemAudit(name, len(mine), counts[PARSED], counts[UNPARSED], counts[AMBIGUOUS], acc, ex))
    return ExtractionAudit(kind, tuple(systems), tuple(out), dict(rules or {}))


def audit(runs: Mapping[str, Sequence[Any]], kind: str = "verdict", rules: Mapping[str, Sequence[str]] | None = None,
          examples: int = 5) -> ExtractionAudit:
    """Audit the runs of a QA / fact-check result (``QARun.runs()``: system -> QARecordResult).

    The raw prediction (before ``<think>`` handling) is read; the gold is the record's gold
    verdict (fact-check) or its first gold answer (choices).

    Parameters
    ----------
    runs : mapping of str to sequence of QARecordResult
        System -> its records; records not scored (no GT, GT verdict unparsed) are left out.
    kind : {"verdict", "choice"}
        What is extracted.
    rules : mapping of str to sequence of str, optional
        A user mapping (:func:`load_rules`): label -> extra spellings.
    examples : int
        Examples kept per status and system.

    Returns
    -------
    ExtractionAudit
        Per system: parsed / unparsed / ambiguous counts, accuracy against the gold (``None``
        without gold) and examples; and every item.
    """
    items = []
    for system, records in runs.items():
        for r in records:
            if r.status not in ("scored", "missing_prediction"):
                continue
            text = r.prediction_raw if isinstance(r.prediction_raw, str) else r.prediction
            gold = r.gold_verdict if kind == "verdict" else (r.gold_answers[0] if r.gold_answers else None)
            items.append({"system": system, "id": r.id, "text": text, "gold": gold, "question": r.question})
    return audit_items(items, kind, rules, examples)


def review_payloads(result: ExtractionAudit, include_ambiguous: bool = True) -> list[dict[str, Any]]:
    """Review items (``kind: "qa"`` payloads, as :func:`evaluators.review.items.qa_items`) of the unparsed answers.

    Each carries the raw answer, the gold, the system and why it is there (``extraction``:
    ``unparsed`` or ``ambiguous`` with the rule and the text that decided).

    Parameters
    ----------
    result : ExtractionAudit
    include_ambiguous : bool
        Also the ambiguous answers.

    Returns
    -------
    list of dict
        One payload per answer, ``exact_match`` and ``token_f1`` ``None``.
    """
    out = []
    for i in result.unparsed(include_ambiguous):
        e = i.extraction
        out.append({"kind": "qa", "id": i.id, "question": i.question or "", "ground_truth": i.gold or "",
                    "prediction": i.text, "system": i.system, "exact_match": None, "token_f1": None,
                    "verdict": e.label or "unparsed", "gold_verdict": i.gold,
                    "extraction": {"status": e.status, "rule": e.rule, "matched": e.matched, "kind": result.kind}})
    return out


@dataclass(frozen=True)
class MovedItem(DictMixin):
    """An answer read differently after a rule change."""

    system: str
    id: str
    text: str
    gold: str | None
    before: str | None
    after: str | None
    rule_after: str


@dataclass(frozen=True)
class SystemDelta(DictMixin):
    """A system's accuracy and unparsed count before and after a rule change."""

    system: str
    accuracy_before: float | None
    accuracy_after: float | None
    delta: float | None
    unparsed_before: int
    unparsed_after: int
    moved: int


@dataclass(frozen=True)
class RuleChange(DictMixin):
    """Result of :func:`rule_change`."""

    kind: str
    systems: tuple[SystemDelta, ...]
    moved: tuple[MovedItem, ...]


def rule_change(before: ExtractionAudit, rules: Mapping[str, Sequence[str]]) -> RuleChange:
    """Re-read ``before``'s answers with ``rules`` added: per-system accuracy delta and the items that moved.

    Parameters
    ----------
    before : ExtractionAudit
        An audit (its own user mapping, if any, is not kept: ``rules`` replaces it).
    rules : mapping of str to sequence of str
        The user mapping to try, on top of the built-in rules.

    Returns
    -------
    RuleChange
        Per system: accuracy before and after and their difference (``None`` without gold),
        unparsed counts, answers that moved; and each moved answer.
    """
    after = audit_items([{"system": i.system, "id": i.id, "text": i.text, "gold": i.gold, "question": i.question}
                         for i in before.items], before.kind, rules)
    # audit_items re-derives the gold label from the gold label itself (idempotent for T/F/uncertain and letters)
    moved = [MovedItem(a.system, a.id, a.text, a.gold, b.extraction.label, a.extraction.label, a.extraction.rule)
             for b, a in zip(before.items, after.items) if b.extraction.label != a.extraction.label]
    deltas = []
    for sb, sa in zip(before.systems, after.systems):
        d = None if sb.accuracy is None or sa.accuracy is None else sa.accuracy - sb.accuracy
        deltas.append(SystemDelta(sb.system, sb.accuracy, sa.accuracy, d, sb.unparsed, sa.unparsed,
                                  sum(1 for m in moved if m.system == sb.system)))
    return RuleChange(before.kind, tuple(deltas), tuple(moved))
