"""Score keyword test sets (single turn) and expected-point coverage (multi-turn) against answers.

Answers come from a predictions file keyed by item id (and turn for multi-turn):

- a JSON object ``{id: answer}``, ``{id: {"answer": ..., "human_score": 4}}``, or for
  multi-turn ``{id: {"1": answer, "2": answer}}`` / ``{id: [answer_turn1, answer_turn2]}``;
- or records (JSON array, JSONL, CSV) with ``id``, optional ``turn``, an answer field
  (``answer``, ``prediction``, ``response``, ``final_answer``, ``output``, ``model_answer``)
  and optionally ``human_score`` (1-5 rubric, see :data:`evaluators.testsets.schema.RUBRIC`)
  or ``turns: [{"turn", "answer"}]``.

Missing-answer policy: an item with keywords but no answer is scored 0.0 (listed as
missing; an error, in the denominators); an item without keywords has no automatic score
(``None``, listed, not in the denominators).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from evaluators import __version__
from evaluators.io import InputError, InputIssue, read_records
from evaluators.io.readers import add_json_records, read_json_document, records_field, sniff_bytes
from evaluators.metrics.statistics import bootstrap_ci
from evaluators.parallel import map_ordered
from evaluators.results import DictMixin, mean_or_none, safe_div
from evaluators.testsets.schema import CATEGORIES, DIFFICULTIES, Dialogue, ExpectedPoint, HumanScore, TestItem, TestSet
from evaluators.testsets.scoring import KEYWORD_RECALL, PointCoverage, keyword_score, point_coverage

#: The single-turn rule: the signature of the registered metric ``keyword_recall`` (:mod:`evaluators.metrics.keywords`).
KEYWORD_RULE = KEYWORD_RECALL.signature
ANSWER_FIELDS = ("answer", "prediction", "response", "final_answer", "output", "model_answer")
POINT_RULE = ("expected point covered: 'keywords' rule when the point lists keywords (all must appear), "
              "else 'verbatim' (the point text appears, NFKC+casefold, whitespace/punctuation ignored)")
AGGREGATION = "mean_score: mean over scored items (macro over items); keyword_recall: found / total keywords (micro)"
_SCORE = TypeAdapter(HumanScore)


def signature(kind: str) -> str:
    """Signature of a test-set evaluation.

    Parameters
    ----------
    kind : {"single", "multi_turn"}

    Returns
    -------
    str
        EvalBoard's version and the keyword (single) or expected-point (multi-turn) rule.
    """
    rule = KEYWORD_RULE if kind == "single" else POINT_RULE
    return f"evalboard {__version__}; testsets/{kind}: {rule}"


@dataclass(frozen=True)
class Answer(DictMixin):
    """An answer to one item (or one turn) with an optional human score on the 1-5 rubric."""

    text: str
    human_score: int | None = None


@dataclass
class AnswerSet(DictMixin):
    """Answers keyed by ``(item id, turn)``; ``turn`` is ``None`` for single-turn answers."""

    file: str
    answers: dict[tuple[str, int | None], Answer] = field(default_factory=dict)
    issues: list[InputIssue] = field(default_factory=list)


def _human(value: Any, file: str, where: dict[str, Any], issues: list[InputIssue]) -> int | None:
    if value is None or value == "":
        return None
    try:
        return _SCORE.validate_python(int(value) if isinstance(value, str) and value.strip().isdigit() else value)
    except (ValidationError, ValueError):
        issues.append(InputIssue(file, f"human_score must be an integer from 1 to 5, got {value!r}", **where))
        return None


def _answer_of(value: Any) -> tuple[str | None, Any]:
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping):
        for f in ANSWER_FIELDS:
            if isinstance(value.get(f), str):
                return value[f], value.get("human_score")
    return None, None


def load_answers(data: bytes, file: str = "<predictions>") -> AnswerSet:
    """Read a predictions file (formats in the module docstring).

    Parameters
    ----------
    data : bytes
        The file's bytes (JSON, JSONL or CSV; UTF-8 or GB18030).
    file : str
        Its name, for located problems.

    Returns
    -------
    AnswerSet
        Answers and located issues (a record without id or answer is reported and skipped).

    Raises
    ------
    InputError
        When the bytes cannot be decoded or a JSON document does not parse.
    """
    out = AnswerSet(file)
    value, parsed = None, None
    fmt = sniff_bytes(data, file)
    if fmt == "json":
        value, parsed = read_json_document(data, file)
        if parsed.errors:
            raise InputError(parsed.errors[0])
    elif data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        try:
            value, parsed = read_json_document(data, file)  # a JSON object in a file without a .json name
        except InputError as exc:  # not decodable as a whole: JSONL read line by line below
            if exc.issue.kind != "decode":
                raise
            value, parsed = None, None
        if parsed is not None and parsed.errors:  # JSONL after all
            value, parsed = None, None
    is_record = isinstance(value, Mapping) and "id" in value and any(f in value for f in ANSWER_FIELDS + ("turns",))
    if value is not None and not is_record:
        if isinstance(value, dict) and records_field(value) is None:
            for key, v in value.items():
                where = {"path": str(key)}
                ans, score = _answer_of(v)
                if ans is not None:
                    out.answers[(str(key), None)] = Answer(ans, _human(score, file, where, out.issues))
                elif isinstance(v, list):
                    for t, item in enumerate(v, start=1):
                        a, s = _answer_of(item)
                        if a is not None:
                            out.answers[(str(key), t)] = Answer(a, _human(s, file, {"path": f"{key}[{t - 1}]"}, out.issues))
                        else:
                            out.issues.append(InputIssue(file, "expected an answer string for this turn",
                                                         path=f"{key}[{t - 1}]"))
                elif isinstance(v, Mapping):
                    for t, item in v.items():
                        a, s = _answer_of(item)
                        if a is not None and str(t).strip().isdigit():
                            out.answers[(str(key), int(t))] = Answer(a, _human(s, file, {"path": f"{key}.{t}"}, out.issues))
                        else:
                            out.issues.append(InputIssue(file, "expected an answer string or {turn: answer}",
                                                         path=f"{key}.{t}"))
                else:
                    out.issues.append(InputIssue(file, "expected an answer string", path=str(key)))
            return out
    rs = add_json_records(value, parsed) if parsed is not None else read_records(data, file, fmt, line_by_line=True)
    out.issues.extend(rs.issues)
    for rec in rs.records:
        where = rec.where()
        rid = rec.data.get("id")
        if rid is None or not str(rid).strip():
            out.issues.append(InputIssue(file, "answer record without 'id'", **where))
            continue
        rid = str(rid).strip()
        if isinstance(rec.data.get("turns"), list):
            for k, t in enumerate(rec.data["turns"]):
                a, s = _answer_of(t)
                num = t.get("turn", k + 1) if isinstance(t, Mapping) else k + 1
                if a is None:
                    out.issues.append(InputIssue(file, "turn without an answer", **where))
                    continue
                out.answers[(rid, int(num))] = Answer(a, _human(s, file, where, out.issues))
            continue
        a, s = _answer_of(rec.data)
        if a is None:
            out.issues.append(InputIssue(file, f"no answer field (expected one of {', '.join(ANSWER_FIELDS)})", **where))
            continue
        turn = rec.data.get("turn")
        try:
            turn = int(turn) if turn not in (None, "") else None
        except (TypeError, ValueError):
            out.issues.append(InputIssue(file, f"turn must be an integer, got {turn!r}", **where))
            continue
        out.answers[(rid, turn)] = Answer(a, _human(s, file, where, out.issues))
    return out


# ---------------------------------------------------------------- single turn


@dataclass(frozen=True)
class ItemResult(DictMixin):
    """Score of one single-turn item.

    Attributes
    ----------
    status : str
        ``scored``, ``missing_prediction`` (scored 0.0) or ``no_keywords`` (no score).
    score : float or None
        Fraction of keywords found, in [0, 1]: the registered metric ``keyword_recall``
        (:mod:`evaluators.metrics.keywords`); ``None`` without keywords.
    """

    id: str
    category: str
    difficulty: str
    question: str
    expected_answer: str
    answer: str | None
    status: str
    keywords: tuple[str, ...]
    found: tuple[str, ...]
    missing: tuple[str, ...]
    score: float | None
    human_score: int | None


@dataclass(frozen=True)
class GroupStats(DictMixin):
    """Aggregate of a set of items.

    Attributes
    ----------
    n_items : int
        Items in the group.
    n_scored : int
        Items with an automatic score (the denominator of ``mean_score``).
    mean_score : float or None
        Mean keyword score (``keyword_recall`` of each item, macro over items).
    keywords_found, keywords_total : int
        Pooled keyword counts.
    keyword_recall : float or None
        ``keywords_found / keywords_total``: ``keyword_recall`` micro over items (pooled counts).
    mean_human_score : float or None
        Mean of the 1-5 human scores given (``n_human`` of them).
    mean_score_ci_low, mean_score_ci_high : float or None
        95% percentile bootstrap interval of ``mean_score``, items resampled
        (:func:`evaluators.metrics.statistics.bootstrap_ci`, :data:`CI_RESAMPLES`, seed 0).
    """

    n_items: int
    n_scored: int
    mean_score: float | None
    keywords_found: int
    keywords_total: int
    keyword_recall: float | None
    mean_human_score: float | None
    n_human: int
    mean_score_ci_low: float | None = None
    mean_score_ci_high: float | None = None


#: Bootstrap resamples of the item-level interval of the mean keyword score.
CI_RESAMPLES = 10_000


def _stats(rows: Sequence[ItemResult]) -> GroupStats:
    scored = [r for r in rows if r.score is not None]
    found = sum(len(r.found) for r in scored)
    total = sum(len(r.keywords) for r in scored)
    humans = [r.human_score for r in rows if r.human_score is not None]
    ci = bootstrap_ci([r.score for r in scored], n_resamples=CI_RESAMPLES, seed=0, unit="item") if scored else None
    return GroupStats(len(rows), len(scored), mean_or_none(r.score for r in scored), found, total,
                      safe_div(found, total), mean_or_none(humans), len(humans),
                      ci.ci_low if ci else None, ci.ci_high if ci else None)


@dataclass(frozen=True)
class SingleTurnReport(DictMixin):
    """Result of :func:`evaluate_single`.

    Attributes
    ----------
    overall : GroupStats
    by_category, by_difficulty : dict of str to GroupStats
        In the schema's order, only values present.
    items : tuple of ItemResult
    missing_prediction, no_keywords : tuple of str
        Item ids.
    extra_answers : tuple of str
        Answer ids that match no item.
    issues : tuple of InputIssue
        Test-set and answer-file problems.
    """

    __test__ = False

    file: str
    answers_file: str
    kind: str
    overall: GroupStats
    by_category: dict[str, GroupStats]
    by_difficulty: dict[str, GroupStats]
    items: tuple[ItemResult, ...]
    missing_prediction: tuple[str, ...]
    no_keywords: tuple[str, ...]
    extra_answers: tuple[str, ...]
    issues: tuple[InputIssue, ...]
    rule: str = KEYWORD_RULE
    aggregation: str = AGGREGATION
    signature: str = ""


def answer_for(answers: AnswerSet, item_id: str) -> Answer | None:
    """The answer of a single-turn item: keyed without a turn, else as turn 1.

    Parameters
    ----------
    answers : AnswerSet
    item_id : str

    Returns
    -------
    Answer or None
    """
    a = answers.answers.get((item_id, None))
    return a if a is not None else answers.answers.get((item_id, 1))


#: Items (single-turn) or dialogues (multi-turn) per chunk sent to a worker process.
CHUNK_ITEMS = 500


def item_result(item: TestItem, a: Any) -> ItemResult:
    """One single-turn item keyword-scored against its answer (``None``: no answer).

    Parameters
    ----------
    item : TestItem
    a : Answer or None
        Its answer; a blank text counts as no answer.

    Returns
    -------
    ItemResult
        Status ``scored``, ``missing_prediction`` (score 0.0: every keyword missing) or
        ``no_keywords`` (score ``None``).
    """
    text = a.text if a is not None and a.text.strip() else None
    ks = keyword_score(text or "", item.keywords)
    if ks.score is None:
        status = "no_keywords"
    elif text is None:
        status = "missing_prediction"
    else:
        status = "scored"
    return ItemResult(item.id, item.category, item.difficulty, item.question, item.expected_answer, text,
                      status, tuple(item.keywords), ks.found, ks.missing, ks.score,
                      a.human_score if a is not None else None)


def _score_items(pairs: list[tuple[TestItem, Any]]) -> list[ItemResult]:
    """:func:`item_result` over ``(item, answer)`` pairs (in a worker process when ``workers > 1``)."""
    return [item_result(item, a) for item, a in pairs]


def evaluate_single(test_set: TestSet, answers: AnswerSet, *, workers: int = 1) -> SingleTurnReport:
    """Keyword-score each item of a single-turn set.

    Parameters
    ----------
    test_set : TestSet
        ``kind == "single"``.
    answers : AnswerSet
        Answers keyed by item id.
    workers : int
        Worker processes over chunks of :data:`CHUNK_ITEMS` items (:mod:`evaluators.parallel`);
        the report is identical to ``workers=1``.

    Returns
    -------
    SingleTurnReport

    Raises
    ------
    ValueError
        If ``test_set`` is a multi-turn set.
    """
    if test_set.kind != "single":
        raise ValueError("evaluate_single needs a single-turn test set; use evaluate_multi_turn")
    pairs = [(item, answer_for(answers, item.id)) for item in test_set.items]
    rows = list(map_ordered(_score_items, pairs, workers, chunk_size=CHUNK_ITEMS))
    return single_report(test_set, answers, rows)


def single_report(test_set: TestSet, answers: AnswerSet, rows: Sequence[ItemResult]) -> SingleTurnReport:
    """The report of single-turn item results ``rows`` (one per item of ``test_set``, in order): the
    aggregates (overall, by category, by difficulty, with intervals) and the id lists made from them.

    Parameters
    ----------
    test_set : TestSet
    answers : AnswerSet
        Its answers (ids of no item are reported as extra).
    rows : sequence of ItemResult
        One per item, in order.

    Returns
    -------
    SingleTurnReport
    """
    rows = list(rows)
    ids = {r.id for r in rows}  # the items' ids (one row per item)
    extra = tuple(sorted({k for k, _ in answers.answers if k not in ids}))
    return SingleTurnReport(
        file=test_set.file, answers_file=answers.file, kind="single", overall=_stats(rows),
        by_category={c: _stats([r for r in rows if r.category == c])
                     for c in [*CATEGORIES, *sorted({r.category for r in rows} - set(CATEGORIES))]
                     if any(r.category == c for r in rows)},
        by_difficulty={d: _stats([r for r in rows if r.difficulty == d]) for d in DIFFICULTIES
                       if any(r.difficulty == d for r in rows)},
        items=tuple(rows),
        missing_prediction=tuple(r.id for r in rows if r.status == "missing_prediction"),
        no_keywords=tuple(r.id for r in rows if r.status == "no_keywords"),
        extra_answers=extra,
        issues=tuple(test_set.issues) + tuple(answers.issues),
        signature=signature("single"),
    )


# ---------------------------------------------------------------- multi-turn


@dataclass(frozen=True)
class TurnResult(DictMixin):
    """Coverage of one turn's expected points.

    Attributes
    ----------
    status : str
        ``scored`` or ``missing_prediction`` (nothing covered, counted).
    coverage : float
        ``n_covered / n_points`` in [0, 1].
    """

    dialogue_id: str
    turn: int
    user: str
    requires_context: bool
    answer: str | None
    status: str
    points: tuple[PointCoverage, ...]
    n_points: int
    n_covered: int
    coverage: float
    human_score: int | None


@dataclass(frozen=True)
class DialogueResult(DictMixin):
    """Coverage of one dialogue.

    Attributes
    ----------
    coverage_micro : float or None
        Covered points / all points of the dialogue.
    coverage_macro : float or None
        Mean of the turn coverages.
    """

    id: str
    scenario: str
    turns: tuple[TurnResult, ...]
    n_points: int
    n_covered: int
    coverage_micro: float | None
    coverage_macro: float | None


@dataclass(frozen=True)
class CoverageStats(DictMixin):
    """Coverage over a set of turns: ``micro`` (pooled points) and ``macro`` (mean over turns)."""

    n_turns: int
    n_points: int
    n_covered: int
    coverage_micro: float | None
    coverage_macro: float | None


def _coverage(turns: Sequence[TurnResult]) -> CoverageStats:
    n_p = sum(t.n_points for t in turns)
    n_c = sum(t.n_covered for t in turns)
    return CoverageStats(len(turns), n_p, n_c, safe_div(n_c, n_p), mean_or_none(t.coverage for t in turns))


@dataclass(frozen=True)
class MultiTurnReport(DictMixin):
    """Result of :func:`evaluate_multi_turn`.

    Attributes
    ----------
    overall : CoverageStats
        Over all turns.
    dialogue_macro : float or None
        Mean of the dialogues' micro coverage (macro over dialogues).
    by_requires_context : dict of str to CoverageStats
        ``"with context"`` / ``"without context"`` turns.
    dialogues : tuple of DialogueResult
    missing_prediction : tuple of str
        ``"<dialogue id>#<turn>"`` of turns without an answer.
    extra_answers : tuple of str
        Answer keys that match no turn.
    """

    file: str
    answers_file: str
    kind: str
    overall: CoverageStats
    dialogue_macro: float | None
    by_requires_context: dict[str, CoverageStats]
    dialogues: tuple[DialogueResult, ...]
    missing_prediction: tuple[str, ...]
    extra_answers: tuple[str, ...]
    issues: tuple[InputIssue, ...]
    rule: str = POINT_RULE
    signature: str = ""


def _dialogue_result(d: Dialogue, turn_answers: list[Any]) -> DialogueResult:
    """Expected-point coverage of one dialogue's turns (in turn order) against their answers."""
    turns = []
    for t, a in zip(sorted(d.turns, key=lambda t: t.turn), turn_answers):
        text = a.text if a is not None and a.text.strip() else None
        points = tuple(point_coverage(text or "", p.point, p.keywords) if isinstance(p, ExpectedPoint)
                       else point_coverage(text or "", p) for p in t.expected_points)
        n_cov = sum(p.covered for p in points)
        turns.append(TurnResult(d.id, t.turn, t.user, t.requires_context, text,
                                "scored" if text is not None else "missing_prediction", points, len(points),
                                n_cov, n_cov / len(points), a.human_score if a is not None else None))
    c = _coverage(turns)
    return DialogueResult(d.id, d.scenario, tuple(turns), c.n_points, c.n_covered, c.coverage_micro, c.coverage_macro)


def _score_dialogues(work: list[tuple[Dialogue, list[Any]]]) -> list[DialogueResult]:
    """:func:`_dialogue_result` over a chunk (in a worker process when ``workers > 1``)."""
    return [_dialogue_result(d, turn_answers) for d, turn_answers in work]


def evaluate_multi_turn(test_set: TestSet, answers: AnswerSet, *, workers: int = 1) -> MultiTurnReport:
    """Expected-point coverage per turn and per dialogue.

    Parameters
    ----------
    test_set : TestSet
        ``kind == "multi_turn"``.
    answers : AnswerSet
        Answers keyed by ``(dialogue id, turn)``.
    workers : int
        Worker processes over chunks of dialogues; the report is identical to ``workers=1``.

    Returns
    -------
    MultiTurnReport

    Raises
    ------
    ValueError
        If ``test_set`` is a single-turn set.
    """
    if test_set.kind != "multi_turn":
        raise ValueError("evaluate_multi_turn needs a multi-turn test set; use evaluate_single")
    work = []
    for d in test_set.items:
        turns = sorted(d.turns, key=lambda t: t.turn)
        work.append((d, [answers.answers.get((d.id, t.turn)) for t in turns]))
    return multi_turn_report(test_set, answers, map_ordered(_score_dialogues, work, workers, chunk_size=CHUNK_ITEMS))


def multi_turn_report(test_set: TestSet, answers: AnswerSet, dialogues: Iterable[DialogueResult]) -> MultiTurnReport:
    """The report of multi-turn dialogue results (one per dialogue of ``test_set``, in order): the coverages
    overall, by dialogue and by context, and the id lists made from them.

    Parameters
    ----------
    test_set : TestSet
        Its ``file`` and ``issues`` are reported.
    answers : AnswerSet
        Its answers (keys of no turn are reported as extra).
    dialogues : iterable of DialogueResult
        One per dialogue, in order.

    Returns
    -------
    MultiTurnReport
    """
    dialogues = list(dialogues)
    all_turns = [t for d in dialogues for t in d.turns]
    used = {(t.dialogue_id, t.turn) for t in all_turns}
    extra = tuple(sorted(f"{k}#{t}" if t is not None else k for k, t in answers.answers if (k, t) not in used))
    return MultiTurnReport(
        file=test_set.file, answers_file=answers.file, kind="multi_turn", overall=_coverage(all_turns),
        dialogue_macro=mean_or_none(d.coverage_micro for d in dialogues),
        by_requires_context={
            label: _coverage([t for t in all_turns if t.requires_context is flag])
            for label, flag in (("with context", True), ("without context", False))
            if any(t.requires_context is flag for t in all_turns)
        },
        dialogues=tuple(dialogues),
        missing_prediction=tuple(f"{t.dialogue_id}#{t.turn}" for t in all_turns if t.status == "missing_prediction"),
        extra_answers=extra,
        issues=tuple(test_set.issues) + tuple(answers.issues),
        signature=signature("multi_turn"),
    )


def evaluate_test_set(test_set: TestSet, answers: AnswerSet, *, workers: int = 1) -> SingleTurnReport | MultiTurnReport:
    """:func:`evaluate_single` or :func:`evaluate_multi_turn` by the set's kind (``workers``: see them).

    Parameters
    ----------
    test_set : TestSet
    answers : AnswerSet
    workers : int

    Returns
    -------
    SingleTurnReport or MultiTurnReport
    """
    if test_set.kind == "multi_turn":
        return evaluate_multi_turn(test_set, answers, workers=workers)
    return evaluate_single(test_set, answers, workers=workers)
