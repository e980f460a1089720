"""Agreement of a review session's annotators, and of the automatic verdict with them.

The statistics (Cohen's kappa plain and weighted, Fleiss' kappa, Krippendorff's alpha) are
defined once, in :mod:`evaluators.metrics.agreement`; this module holds the review rules: which
decisions count (submitted ones), which fields are rated (the label, nominal; the 1-5 score,
ordinal), how annotator pairs and the Fleiss table are formed, and what the automatic verdict
of each item kind is.

Speed (issue 30: the Agreement view of 100,000 items in about a second): the decisions are read
as columns in one query (:func:`rating_columns`), coded as an items x annotators matrix with
numpy, and every bootstrap interval is drawn as multinomial counts of the distinct rating
patterns (:mod:`evaluators.metrics.agreement`: the same bootstrap over items, Efron & Tibshirani
1993), so the cost grows with the number of patterns, not of items.  The figures can also be
split by slice (:func:`agreement_by_slice`: system, question type) and over time
(:func:`agreement_over_time`), each slice with its own interval and under-30 flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations, islice
from operator import itemgetter
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np
import sqlalchemy as sa

from evaluators.metrics.agreement import (
    AGREEMENT_RESAMPLES, MIN_ITEMS, AgreementFigure, agreement_figure, cohen_kappa_codes_ci, fleiss_kappa_ci,
    krippendorff_alpha_counts_ci, mean_pairwise_cohen_kappa_codes_ci, sorted_labels,
)
from evaluators.review.items import automatic_score
from evaluators.review.labels import human_verdict
from evaluators.review.schema import decisions_table, items_table

#: :func:`automatic_scores` reads the payloads of at most this many first items for the score's name.
SOURCE_ITEMS = 64


def _figure_fields(fig: AgreementFigure) -> dict[str, Any]:
    """The interval fields of a figure, flat, for a table row."""
    return {"ci_low": fig.ci_low, "ci_high": fig.ci_high, "meaningful": fig.meaningful, "note": fig.note}


@dataclass(frozen=True)
class RatingColumns:
    """A session's submitted decisions as columns (what the agreement figures read), in one order.

    Attributes
    ----------
    item_id : list of int
    annotator : list of str
    label : list of (str or None)
    score : list of (int or None)
        The 1-5 score; ``None`` where not given.
    """

    item_id: list
    annotator: list
    label: list
    score: list

    @cached_property
    def coded(self) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
        """``(annotators, annotator code per row, item ids, item index per row)``: the sorted names and
        item ids, coded once for both fields."""
        names = sorted(set(self.annotator))
        who_index = {a: i for i, a in enumerate(names)}
        who = np.fromiter(map(who_index.__getitem__, self.annotator), dtype=np.int64, count=len(self.annotator))
        item_ids, item_of = np.unique(np.asarray(self.item_id, dtype=np.int64).reshape(len(self.item_id)),
                                      return_inverse=True)
        return names, who, item_ids, item_of.ravel()

    @classmethod
    def of(cls, decisions: Sequence[Any]) -> RatingColumns:
        """The submitted ones of ``decisions`` (:class:`~evaluators.review.store.Decision`), in their order."""
        kept = [d for d in decisions if d.status == "submitted"]
        return cls([d.item_id for d in kept], [d.annotator for d in kept], [d.label for d in kept],
                   [d.score for d in kept])


def rating_columns(store: Any, session_id: int) -> RatingColumns:
    """A session's submitted decisions read straight into columns (one query, no object per decision).

    The same decisions as :meth:`~evaluators.review.store.ReviewStore.ratings` (submitted ones), in
    the order the database gives them (as that method).

    Parameters
    ----------
    store : ReviewStore
    session_id : int

    Returns
    -------
    RatingColumns
    """
    d = decisions_table
    q = (sa.select(d.c.item_id, d.c.annotator, d.c.label, d.c.score)
         .where(d.c.session_id == int(session_id), d.c.status == "submitted"))
    with store.engine.connect() as c:
        # the driver's own cursor: plain tuples, no row object per decision (a third of the read at 200,000
        # decisions); the only values bound are an int and a constant, written into the statement
        sql = str(q.compile(dialect=c.dialect, compile_kwargs={"literal_binds": True}))
        cursor = c.connection.dbapi_connection.cursor()
        try:
            cursor.execute(sql)
            rows = cursor.fetchall()
        finally:
            cursor.close()
    return RatingColumns(*(list(map(itemgetter(j), rows)) for j in range(4)))


def cached_rating_columns(store: Any, session_id: int) -> RatingColumns:
    """:func:`rating_columns`, read once per change of the session (the store's cache): the label
    and score figures and the automatic verdict's share one read.

    Parameters
    ----------
    store : ReviewStore
    session_id : int

    Returns
    -------
    RatingColumns
    """
    return store._cached(session_id, "rating_columns", lambda: rating_columns(store, session_id))


def _coded(columns: RatingColumns, field: str):
    """The ratings of ``field`` as an items x annotators matrix of value codes (-1: not rated).

    Returns ``(codes, item_ids, first, annotators, values)``: rows in item id order, ``first`` the
    position of each item's first rating in the columns (the order items were first rated),
    columns the sorted annotators, codes indexing ``values``
    (:func:`~evaluators.metrics.agreement.sorted_labels`).
    """
    column = getattr(columns, field)
    values = sorted_labels(set(column) - {None})
    value_index = {v: i for i, v in enumerate(values)}
    value_index[None] = -1
    code = np.fromiter(map(value_index.__getitem__, column), dtype=np.int64, count=len(column))
    keep = code >= 0
    if not keep.any():
        return np.zeros((0, 0), dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [], values
    names, who_all, all_ids, item_of = columns.coded
    present, who = np.unique(who_all[keep], return_inverse=True)  # the annotators who gave this field
    annotators = [names[i] for i in present.tolist()]
    rated = np.zeros(all_ids.size, dtype=bool)
    rated[item_of[keep]] = True
    item_ids = all_ids[rated]
    renumber = np.cumsum(rated) - 1
    rows = renumber[item_of[keep]]
    first = np.full(item_ids.size, len(column), dtype=np.int64)
    np.minimum.at(first, rows, np.flatnonzero(keep))  # each item's first rating of this field
    codes = np.full((item_ids.size, len(annotators)), -1, dtype=np.int64)
    codes[rows.ravel(), who.ravel()] = code[keep]
    return codes, item_ids, first, annotators, values


def _value_counts(codes: np.ndarray, n_values: int) -> np.ndarray:
    """Per row, how many of its codes equal each value: shape (rows, n_values)."""
    if not n_values or not codes.size:
        return np.zeros((codes.shape[0] if codes.ndim == 2 else 0, n_values), dtype=np.int64)
    r, c = np.nonzero(codes >= 0)
    return np.bincount(r * n_values + codes[r, c], minlength=codes.shape[0] * n_values).reshape(-1, n_values)


def session_agreement(decisions: Sequence[Any], *, n_resamples: int = AGREEMENT_RESAMPLES,
                      seed: int = 0) -> dict[str, Any]:
    """Agreement of a session's submitted decisions, for the labels and for the 1-5 scores.

    Every figure comes with a 95% percentile bootstrap interval over its items and the number
    of items behind it, and is flagged under :data:`~evaluators.metrics.agreement.MIN_ITEMS`
    items (:class:`~evaluators.metrics.agreement.AgreementFigure`).  The ratings are coded as
    an items x annotators matrix once (numpy, no Python loop per item after the read), and each
    interval is drawn as multinomial counts of the distinct rating patterns (the same bootstrap
    over items; :mod:`evaluators.metrics.agreement`), so 100,000 items cost milliseconds.

    Parameters
    ----------
    decisions : sequence of :class:`~evaluators.review.store.Decision`, or RatingColumns
        Only submitted decisions count.
    n_resamples : int
        Bootstrap resamples per interval (0: none).
    seed : int

    Returns
    -------
    dict
        ``{"label": {...}, "score": {...}}``, each with ``n_items`` (items rated by two or more
        annotators), ``n_annotators``, ``cohen_kappa_mean`` (mean over annotator pairs with
        shared items; quadratic weights for scores) and ``pairs`` (each with ``n_items``,
        ``cohen_kappa``, ``ci_low``, ``ci_high``, ``meaningful``, ``note``), ``fleiss_kappa``
        (over the items rated by the most common number of raters, ``fleiss_items``) and
        ``krippendorff_alpha`` (nominal for labels, ordinal for scores); ``figures`` maps
        ``cohen_kappa_mean``, ``fleiss_kappa`` and ``krippendorff_alpha`` to their
        :class:`~evaluators.metrics.agreement.AgreementFigure` as a dict; ``meaningful`` is
        false while fewer than ``MIN_ITEMS`` items have two reviews.
    """
    columns = decisions if isinstance(decisions, RatingColumns) else RatingColumns.of(decisions)
    settings = {"n_resamples": n_resamples, "seed": seed}
    out: dict[str, Any] = {}
    for field, level, weights in (("label", "nominal", None), ("score", "ordinal", "quadratic")):
        codes, _, first, annotators, values = _coded(columns, field)
        rated = (codes >= 0).sum(axis=1)
        shared = np.flatnonzero(rated >= 2)  # item id order
        in_order = shared[np.argsort(first[shared], kind="stable")]  # the order the items were first rated
        pairs = []
        for x, y in combinations(range(len(annotators)), 2):
            both = in_order[(codes[in_order, x] >= 0) & (codes[in_order, y] >= 0)]
            if both.size:
                fig = cohen_kappa_codes_ci(codes[both, x], codes[both, y], weights=weights, **settings)
                if fig.value is not None:
                    pairs.append({"a": annotators[x], "b": annotators[y], "n_items": int(both.size),
                                  "cohen_kappa": fig.value, **_figure_fields(fig)})
        table = np.zeros((0, 0), dtype=np.int64)
        fleiss_items = None
        if shared.size:
            sizes, freq = np.unique(rated[shared], return_counts=True)
            modal = sizes[np.lexsort((sizes, freq))[-1]]  # the most common number of raters (ties: the larger)
            rows = in_order[rated[in_order] == modal]
            table = _value_counts(codes[rows], len(values))
            table = table[:, table.sum(axis=0) > 0]  # the categories used in those rows, sorted
            fleiss_items = int(rows.size)
        counts = _value_counts(codes[shared], len(values))
        used = np.flatnonzero(counts.sum(axis=0) > 0)
        figures = {"cohen_kappa_mean": mean_pairwise_cohen_kappa_codes_ci(codes[shared], weights=weights, **settings),
                   "fleiss_kappa": fleiss_kappa_ci(table, **settings),
                   "krippendorff_alpha": krippendorff_alpha_counts_ci(counts[:, used], [values[i] for i in used],
                                                                      level, **settings)}
        out[field] = {
            "n_items": int(shared.size), "n_annotators": len(annotators),
            "cohen_kappa_mean": figures["cohen_kappa_mean"].value,
            "pairs": pairs, "fleiss_kappa": figures["fleiss_kappa"].value, "fleiss_items": fleiss_items,
            "krippendorff_alpha": figures["krippendorff_alpha"].value, "level": level,
            "figures": {name: fig.to_dict() for name, fig in figures.items()},
            "meaningful": int(shared.size) >= MIN_ITEMS,
        }
    return out


#: Windows of the "time" slice: the items in order of their last decision, cut into this many.
TIME_WINDOWS = 10


def agreement_by_slice(decisions: Sequence[Any], slice_of: Any, *, n_resamples: int = AGREEMENT_RESAMPLES,
                       seed: int = 0) -> dict[Any, dict[str, Any]]:
    """:func:`session_agreement` of each slice of the items apart (a system, a question type ...).

    Every slice's figures carry their own 95% bootstrap interval over the slice's items and the
    under-:data:`~evaluators.metrics.agreement.MIN_ITEMS` flag, as the session's figures do.

    Parameters
    ----------
    decisions : sequence of :class:`~evaluators.review.store.Decision`
    slice_of : mapping of item id to hashable, or callable
        An item's slice (``None``: an item without one, its own slice); a callable gets the
        decision and may slice by something of the decision itself (its guidelines version).
    n_resamples, seed
        As :func:`session_agreement`.

    Returns
    -------
    dict
        Slice -> the :func:`session_agreement` block of its decisions, ``None`` first, then the
        slices in sorted order (by text).
    """
    key = slice_of if callable(slice_of) else (lambda d: slice_of.get(d.item_id))
    groups: dict[Any, list] = {}
    for d in decisions:
        if d.status == "submitted":
            groups.setdefault(key(d), []).append(d)
    order = sorted(groups, key=lambda v: (v is not None, str(v)))
    return {v: session_agreement(groups[v], n_resamples=n_resamples, seed=seed) for v in order}


def agreement_over_time(decisions: Sequence[Any], *, windows: int = TIME_WINDOWS,
                        n_resamples: int = AGREEMENT_RESAMPLES, seed: int = 0) -> list[dict[str, Any]]:
    """The agreement figures in windows of time: where agreement moves as the session goes on.

    An item's agreement is measurable once its reviews are in, so each item belongs to the time
    of its last submitted decision; the items in that order are cut into ``windows`` windows of
    (nearly) equal size, and each window's decisions give its :func:`session_agreement` block
    (its own intervals and under-30 flags).

    Parameters
    ----------
    decisions : sequence of :class:`~evaluators.review.store.Decision`
        Only submitted ones count; ``updated_at`` is the ISO time of each.
    windows : int
        How many windows (>= 1); fewer when there are fewer items.
    n_resamples, seed
        As :func:`session_agreement`.

    Returns
    -------
    list of dict
        In time order: ``window`` (1, 2 ...), ``start`` and ``end`` (the first and last of its
        items' last decision times), ``n_decisions`` and ``agreement`` (the block).

    Raises
    ------
    ValueError
        ``windows`` < 1.
    """
    if windows < 1:
        raise ValueError("windows must be >= 1")
    by_item: dict[int, list] = {}
    for d in decisions:
        if d.status == "submitted":
            by_item.setdefault(d.item_id, []).append(d)
    ordered = sorted(by_item, key=lambda i: (max(str(d.updated_at) for d in by_item[i]), i))
    out = []
    for w, chunk in enumerate(np.array_split(np.asarray(ordered, dtype=np.int64), min(windows, len(ordered)) or 1)):
        if not chunk.size:
            continue
        ids = chunk.tolist()
        mine = [d for i in ids for d in by_item[i]]
        out.append({"window": w + 1, "start": max(str(d.updated_at) for d in by_item[ids[0]]),
                    "end": max(str(d.updated_at) for d in by_item[ids[-1]]), "n_decisions": len(mine),
                    "agreement": session_agreement(mine, n_resamples=n_resamples, seed=seed)})
    return out


def automatic_agreement(items: Sequence[Any], decisions: Sequence[Any], *, threshold: float = 0.5,
                        n_resamples: int = AGREEMENT_RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """Agreement of the automatic verdict (metric or LLM judge) with each human, beside human vs human.

    A human ``acceptable_variant`` or ``correct`` counts as correct (1) and ``model_error`` as wrong (0); a
    ``gt_error`` is left out (the reference itself is disputed).  The automatic verdict is correct
    when its score (exact match, judge score, combined or keyword score by item kind) is at least
    ``threshold``.  Every figure carries a 95% bootstrap interval over its items and a flag
    under :data:`~evaluators.metrics.agreement.MIN_ITEMS` items, as :func:`session_agreement`.

    Parameters
    ----------
    items : iterable of :class:`~evaluators.review.store.Item`
        The session's items (their payloads give the automatic score).
    decisions : sequence of :class:`~evaluators.review.store.Decision`, or RatingColumns
    threshold : float
    n_resamples, seed
        Bootstrap settings.

    Returns
    -------
    dict
        ``source`` (what the automatic verdict is), ``threshold``, ``per_annotator``: rows with
        ``annotator``, ``n_items``, ``accuracy`` (share of items where the two agree) and
        ``cohen_kappa``, each with ``*_ci_low`` / ``*_ci_high``, and ``meaningful`` / ``note``;
        ``krippendorff_alpha`` (nominal) over the humans and the automatic verdict as one more
        rater, with ``n_items``; ``human_kappa``: the reviewers' mean pairwise Cohen's kappa on the
        **same two labels** (right = ``acceptable_variant`` or ``correct``, wrong = ``model_error``; ``gt_error``
        left out), the ceiling to read the automatic verdict's kappa against (the session's own
        agreement figures use all three labels: a different, lower-chance-agreement scale), with
        ``labels`` naming that set; ``figures``: the alpha's and the ceiling's
        :class:`~evaluators.metrics.agreement.AgreementFigure` as dicts.
    """
    scores: dict[int, float] = {}
    source = None
    for item in items:
        value, what = automatic_score(item.payload)
        source = source or what
        if value is not None:
            scores[item.id] = value
    return automatic_agreement_of_scores(scores, source, decisions, threshold=threshold, n_resamples=n_resamples,
                                         seed=seed)


def automatic_agreement_of_scores(scores: dict[int, float], source: str | None, decisions: Sequence[Any], *,
                                  threshold: float = 0.5, n_resamples: int = AGREEMENT_RESAMPLES,
                                  seed: int = 0) -> dict[str, Any]:
    """:func:`automatic_agreement` from each item's automatic score (item id -> score) and its name.

    The human verdicts are coded as an items x raters matrix once (numpy); every interval is drawn
    as multinomial counts of the distinct patterns (:mod:`evaluators.metrics.agreement`).

    Parameters
    ----------
    scores : dict of int to float
        Item id -> automatic score (items without one left out).
    source : str or None
        What the score is (``exact match`` ...).
    decisions : sequence of :class:`~evaluators.review.store.Decision`, or RatingColumns
    threshold, n_resamples, seed
        As :func:`automatic_agreement`.

    Returns
    -------
    dict
        As :func:`automatic_agreement`.
    """
    columns = decisions if isinstance(decisions, RatingColumns) else RatingColumns.of(decisions)
    n = len(columns.item_id)
    verdicts = {label: -1 if (v := human_verdict(label)) is None else v for label in set(columns.label)}
    verdict = np.fromiter(map(verdicts.__getitem__, columns.label), dtype=np.int64, count=n)
    scored = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
    order = np.argsort(scored)
    scored, score = scored[order], np.fromiter(scores.values(), dtype=float, count=len(scores))[order]
    ids = np.asarray(columns.item_id, dtype=np.int64).reshape(n)
    at = np.searchsorted(scored, ids)
    has_score = at < scored.size
    has_score[has_score] = scored[at[has_score]] == ids[has_score]
    keep = (verdict >= 0) & has_score
    all_names, who_all, _, _ = columns.coded
    present, who_first, who = np.unique(who_all[keep], return_index=True, return_inverse=True)
    first_seen = np.argsort(who_first, kind="stable")  # reviewers in the order they first appear
    annotators = [all_names[j] for j in present[first_seen].tolist()]
    column_of = np.empty(present.size, dtype=np.int64)
    column_of[first_seen] = np.arange(present.size)
    rated, rows_of = np.unique(ids[keep], return_inverse=True)
    # column 0: the automatic verdict; then one column per reviewer (-1: not rated)
    codes = np.full((rated.size, 1 + len(annotators)), -1, dtype=np.int64)
    if rated.size:
        codes[:, 0] = score[np.searchsorted(scored, rated)] >= threshold
        codes[rows_of.ravel(), 1 + column_of[np.asarray(who).ravel()]] = verdict[keep]
    who = {a: j for j, a in enumerate(annotators)}
    settings = {"n_resamples": n_resamples, "seed": seed}
    rows = []
    for annotator in sorted(annotators):
        mine = codes[codes[:, 1 + who[annotator]] >= 0]
        a, h = mine[:, 0], mine[:, 1 + who[annotator]]
        same = (a == h).astype(float)
        values, patterns = np.unique(same, return_inverse=True)  # agree or not: two patterns at most
        accuracy = agreement_figure("accuracy", float(same.mean()), int(same.size),
                                    lambda w, v=values: (w @ v) / w.sum(axis=1), patterns=patterns.ravel(),
                                    **settings)
        kappa = cohen_kappa_codes_ci(a, h, **settings)
        rows.append({"annotator": annotator, "n_items": int(same.size),
                     "accuracy": accuracy.value, "accuracy_ci_low": accuracy.ci_low,
                     "accuracy_ci_high": accuracy.ci_high, "cohen_kappa": kappa.value,
                     "cohen_kappa_ci_low": kappa.ci_low, "cohen_kappa_ci_high": kappa.ci_high,
                     "meaningful": accuracy.meaningful, "note": accuracy.note or kappa.note})
    counts = _value_counts(codes, 2)
    used = np.flatnonzero(counts[(counts.sum(axis=1) >= 2)].sum(axis=0) > 0)
    alpha = krippendorff_alpha_counts_ci(counts[:, used], used.tolist(), "nominal", **settings)
    # the people with each other on the same two labels (items two or more of them rated right / wrong)
    people = codes[:, 1:]
    both = people[(people >= 0).sum(axis=1) >= 2]
    ceiling = mean_pairwise_cohen_kappa_codes_ci(both, **settings)
    return {"source": source, "threshold": threshold, "per_annotator": rows,
            "krippendorff_alpha": alpha.value if rated.size else None, "n_items": int(rated.size),
            "human_kappa": ceiling.value if both.shape[0] else None, "human_kappa_items": int(both.shape[0]),
            "labels": "right (acceptable_variant or correct) / wrong (model_error); gt_error left out",
            "figures": {"krippendorff_alpha": alpha.to_dict(), "human_kappa": ceiling.to_dict()}}


def item_slices(store: Any, session_id: int, by: str) -> dict[int, str | None]:
    """Each item's slice for :func:`agreement_by_slice`: its ``system`` (the stored column) or its
    ``question type`` (the payload's ``question_type``, else ``category``: LoCoMo's and the test sets').

    Parameters
    ----------
    store : ReviewStore
    session_id : int
    by : {"system", "question type"}

    Returns
    -------
    dict of int to (str or None)
        Item id -> slice (``None`` without one).

    Raises
    ------
    ValueError
        Another ``by``.
    """
    if by == "system":
        i = items_table
        with store.engine.connect() as c:
            return dict(c.execute(sa.select(i.c.id, i.c.system).where(i.c.session_id == int(session_id))).all())
    if by == "question type":
        out = {}
        for item in store.iter_items(session_id):
            value = item.payload.get("question_type", item.payload.get("category"))
            out[item.id] = None if value is None or value == "" else str(value)[:256]
        return out
    raise ValueError(f"by must be 'system' or 'question type', not {by!r}")


#: Each store's item scores by session: (count and last id of the items, the scores and their name).
_SCORES: WeakKeyDictionary = WeakKeyDictionary()


def automatic_scores(store: Any, session_id: int) -> tuple[dict[int, float], str | None]:
    """Each item's automatic score as stored beside it (the ``metric`` column, written from
    :func:`~evaluators.review.items.automatic_score` of the payload) and the score's name, without
    reading the payloads (the first :data:`SOURCE_ITEMS` name the score).

    An item's score never changes once it is stored (items are only added), so the scores are kept
    per store until the session's item count or last item id changes (one aggregate query), not
    read again after every decision.

    Parameters
    ----------
    store : ReviewStore
    session_id : int

    Returns
    -------
    (dict of int to float, str or None)
        Item id -> score for the items with one; the name (``exact match`` ...) of the first item
        whose kind has an automatic score, ``None`` when none of the first :data:`SOURCE_ITEMS` has.
    """
    i = items_table
    with store.engine.connect() as c:
        key = tuple(c.execute(sa.select(sa.func.count(), sa.func.max(i.c.id))
                              .where(i.c.session_id == int(session_id))).one())
    per_store = _SCORES.setdefault(store, {})
    hit = per_store.get(session_id)
    if hit is not None and hit[0] == key:
        return hit[1]
    with store.engine.connect() as c:
        scores = dict(c.execute(sa.select(i.c.id, i.c.metric).where(i.c.session_id == int(session_id),
                                                                     i.c.metric.is_not(None))).all())
    source = None
    with closing(store.iter_items(session_id, batch=SOURCE_ITEMS)) as items:
        for item in islice(items, SOURCE_ITEMS):  # the first payloads, until one names its score
            source = automatic_score(item.payload)[1]
            if source is not None:
                break
    per_store[session_id] = (key, (scores, source))
    return scores, source
