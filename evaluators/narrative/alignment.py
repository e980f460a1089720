"""Align predicted narrative events with ground-truth events.

Prediction event ids rarely equal GT ids, and ``time_order`` is neither list order nor
unique, so events are aligned by their text spans:

1. ``id``: events whose ids agree are paired first, unless both have usable spans whose IoU
   is below ``min_iou`` (the text contradicts the ids, as when a model numbers its own
   events E1, E2 ...): those are left to the span assignment, with a warning.
2. ``span_iou``: among the rest with usable spans, an optimal one-to-one assignment
   (``scipy.optimize.linear_sum_assignment``, maximising the total character IoU) over
   the pairs whose IoU reaches ``min_iou`` (default 0.5).
3. ``time_order``, then ``list_order``: events without a usable span on either side are
   paired by equal ``time_order`` (in list order), then by equal position in the event
   list; these pairs are flagged with a warning because nothing in the text confirms them.

Unaligned GT events are *missed*; unaligned predicted events are *spurious*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from evaluators.metrics.assignment import max_weight_assignment
from evaluators.metrics.spans import interval_iou, iou_matrix
from evaluators.narrative.spans import ResolvedSpan
from evaluators.results import to_jsonable
from evaluators.schema.narrative import NarrativeEvent

METHODS = ("id", "span_iou", "time_order", "list_order")


class AlignedPair(NamedTuple):
    """One GT event paired with one predicted event.

    Attributes
    ----------
    gt_index, pred_index : int
        Positions in the two ``narrative_events`` lists.
    gt_id, pred_id : str
        The events' ids.
    iou : float or None
        Character IoU of the two spans; ``None`` when either span is unusable.
    method : str
        How the pair was made: ``id``, ``span_iou``, ``time_order`` or ``list_order``.
    """

    gt_index: int
    pred_index: int
    gt_id: str
    pred_id: str
    iou: float | None
    method: str


@dataclass(frozen=True)
class Alignment:
    """The event alignment of one document pair.

    Attributes
    ----------
    pairs : tuple of AlignedPair
        Sorted by GT index.
    missed : tuple of int
        GT event indices without a partner.
    spurious : tuple of int
        Predicted event indices without a partner.
    gt_spans, pred_spans : tuple of ResolvedSpan
        The verified/repaired span of every event, by index.
    gt_ids, pred_ids : tuple of str
        Event ids by index (``#i`` when an event has no id).
    gt_labels, pred_labels : sequence of str
        Readable names of the events by index (:func:`event_label`: type and the first words
        of the span), for tables and pickers; the ids stay the keys.  Made when first read
        (scores do not need them; a pickled alignment carries them as a tuple).
    min_iou : float
        The IoU threshold used.
    warnings : tuple of str
        Pairs made without text evidence, duplicate ids, etc.
    """

    pairs: tuple[AlignedPair, ...]
    missed: tuple[int, ...]
    spurious: tuple[int, ...]
    gt_spans: tuple[ResolvedSpan, ...]
    pred_spans: tuple[ResolvedSpan, ...]
    min_iou: float
    warnings: tuple[str, ...] = field(default_factory=tuple)
    gt_ids: tuple[str, ...] = field(default_factory=tuple)
    pred_ids: tuple[str, ...] = field(default_factory=tuple)
    gt_labels: Sequence[str] = field(default_factory=tuple)
    pred_labels: Sequence[str] = field(default_factory=tuple)

    def label_of(self, event_id: str) -> str:
        """The readable label of a GT or predicted event id (the id itself if unknown or empty).

        Parameters
        ----------
        event_id : str
            An event key (its id, or ``#i``).

        Returns
        -------
        str
            The GT side is looked at first.
        """
        for ids, labels in ((self.gt_ids, self.gt_labels), (self.pred_ids, self.pred_labels)):
            if event_id in ids and len(labels) == len(ids):
                return labels[ids.index(event_id)]
        return event_id

    @property
    def n_gt(self) -> int:
        return len(self.gt_spans)

    @property
    def n_pred(self) -> int:
        return len(self.pred_spans)

    def method_counts(self) -> dict[str, int]:
        """Number of pairs per alignment method (all four keys present)."""
        out = {m: 0 for m in METHODS}
        for p in self.pairs:
            out[p.method] += 1
        return out

    def pred_for_gt(self) -> dict[int, AlignedPair]:
        return {p.gt_index: p for p in self.pairs}

    def to_dict(self) -> dict:
        return {
            "pairs": to_jsonable(self.pairs),
            "missed": list(self.missed),
            "spurious": list(self.spurious),
            "min_iou": self.min_iou,
            "method_counts": self.method_counts(),
            "gt_spans": to_jsonable(self.gt_spans),
            "pred_spans": to_jsonable(self.pred_spans),
            "warnings": list(self.warnings),
        }


def _pair_iou(a: ResolvedSpan, b: ResolvedSpan) -> float | None:
    if a.usable and b.usable:
        return interval_iou(a.interval, b.interval)
    return None


#: Words (or CJK characters) of the span shown in an event label; characters of the span looked at.
LABEL_WORDS, LABEL_CJK_CHARS, LABEL_SCAN_CHARS = 6, 14, 120


def event_label(event: NarrativeEvent, index: int, text: str = "", span: ResolvedSpan | None = None) -> str:
    """A short readable name of an event: ``"<type>: <first words of its span>…"``.

    The span text is the resolved span's slice of ``text`` when usable, else the event's own
    ``text_span.text``, else its description; the first :data:`LABEL_WORDS` words (or
    :data:`LABEL_CJK_CHARS` characters of Chinese) are kept.  An event with none of these is
    ``"event <index + 1>"``.  Newlines become spaces.

    Parameters
    ----------
    event : NarrativeEvent
    index : int
        Its 0-based position in the document.
    text : str
        The reference text the span resolves in.
    span : ResolvedSpan, optional
        The event's resolved span.

    Returns
    -------
    str
    """
    snippet = ""
    if span is not None and span.usable and text:
        snippet = text[span.start:min(span.end, span.start + LABEL_SCAN_CHARS)]
    if not snippet and event.text_span is not None:
        snippet = (event.text_span.text or "")[:LABEL_SCAN_CHARS]
    snippet = " ".join((snippet or (event.description or "")[:LABEL_SCAN_CHARS]).split())
    words = snippet.split(" ", LABEL_WORDS)
    if len(words) > 1:
        short = " ".join(words[:LABEL_WORDS]) + ("…" if len(words) > LABEL_WORDS else "")
    else:
        short = snippet[:LABEL_CJK_CHARS] + ("…" if len(snippet) > LABEL_CJK_CHARS else "")
    kind = (event.event_type or "").strip()
    if not short:
        return f"{kind or 'event'} {index + 1}"
    return f"{kind}: {short}" if kind else short


class EventLabels(Sequence):
    """The :func:`event_label` of each event, made on first access (a read-only sequence of str).

    Equal to the tuple of the same labels; pickled as that tuple.
    """

    def __init__(self, events: Sequence[NarrativeEvent], spans: Sequence[ResolvedSpan], text: str):
        self._events, self._spans, self._text = events, spans, text
        self._labels: tuple[str, ...] | None = None

    def _all(self) -> tuple[str, ...]:
        if self._labels is None:
            self._labels = tuple(event_label(e, i, self._text, self._spans[i]) for i, e in enumerate(self._events))
            self._events = self._spans = ()
            self._text = ""
        return self._labels

    def __getitem__(self, i):
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._events) if self._labels is None else len(self._labels)

    def __eq__(self, other) -> bool:
        if isinstance(other, (EventLabels, tuple, list)):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self):
        return tuple, (self._all(),)


def align_events(
    gt_events: list[NarrativeEvent],
    pred_events: list[NarrativeEvent],
    gt_spans: list[ResolvedSpan] | tuple[ResolvedSpan, ...],
    pred_spans: list[ResolvedSpan] | tuple[ResolvedSpan, ...],
    min_iou: float = 0.5,
    text: str = "",
) -> Alignment:
    """Align events one-to-one (see the module docstring for the order of methods).

    Parameters
    ----------
    gt_events, pred_events : list of NarrativeEvent
    gt_spans, pred_spans : sequence of ResolvedSpan
        Resolved spans, one per event, same order.
    min_iou : float in (0, 1], default 0.5
        Minimum character IoU for a span-based pair.
    text : str
        The source text (for the events' readable labels).

    Returns
    -------
    Alignment

    Raises
    ------
    ValueError
        If ``min_iou`` is outside (0, 1] or the span lists do not match the event lists.
    """
    if not 0 < min_iou <= 1:
        raise ValueError(f"min_iou must be in (0, 1], got {min_iou}")
    if len(gt_spans) != len(gt_events) or len(pred_spans) != len(pred_events):
        raise ValueError("one resolved span per event is required")
    warnings: list[str] = []
    pairs: list[AlignedPair] = []
    gt_free = set(range(len(gt_events)))
    pred_free = set(range(len(pred_events)))

    # 1. ids that agree
    pred_by_id: dict[str, int] = {}
    for j, e in enumerate(pred_events):
        if e.id:
            if e.id in pred_by_id:
                warnings.append(f"predicted event id {e.id!r} appears more than once; only the first can match by id")
            else:
                pred_by_id[e.id] = j
    seen_gt_ids: set[str] = set()
    contradicted = 0
    for i, e in enumerate(gt_events):
        if e.id and e.id in seen_gt_ids:
            warnings.append(f"GT event id {e.id!r} appears more than once; only the first can match by id")
            continue
        seen_gt_ids.add(e.id)
        j = pred_by_id.get(e.id) if e.id else None
        if j is not None and j in pred_free:
            iou = _pair_iou(gt_spans[i], pred_spans[j])
            if iou is not None and iou < min_iou - 1e-12:
                contradicted += 1
                continue
            pairs.append(AlignedPair(i, j, e.id, pred_events[j].id, iou, "id"))
            gt_free.discard(i)
            pred_free.discard(j)
    if contradicted:
        warnings.append(f"{contradicted} events share an id with an event whose span does not overlap it enough "
                        f"(IoU < {min_iou:g}); they were aligned by their spans instead")

    # 2. optimal assignment on span IoU
    gi = [i for i in sorted(gt_free) if gt_spans[i].usable]
    pj = [j for j in sorted(pred_free) if pred_spans[j].usable]
    if gi and pj:
        m = iou_matrix([gt_spans[i].interval for i in gi], [pred_spans[j].interval for j in pj])
        eligible = np.where(m >= min_iou - 1e-12, m, 0.0).tolist()
        for r, c in max_weight_assignment(eligible):
            i, j = gi[r], pj[c]
            pairs.append(AlignedPair(i, j, gt_events[i].id, pred_events[j].id, float(m[r, c]), "span_iou"))
            gt_free.discard(i)
            pred_free.discard(j)

    # 3. fall back to time_order, then list position, for events without a usable span
    def fallback(key, method: str) -> None:
        for i in sorted(gt_free):
            gi_usable = gt_spans[i].usable
            ki = key(i, gt_events[i])
            if ki is None:
                continue
            for j in sorted(pred_free):
                if gi_usable and pred_spans[j].usable:
                    continue  # both have spans: the text said they do not overlap enough
                if key(j, pred_events[j]) == ki:
                    pairs.append(AlignedPair(i, j, gt_events[i].id, pred_events[j].id,
                                             _pair_iou(gt_spans[i], pred_spans[j]), method))
                    warnings.append(
                        f"GT event {i} ({gt_events[i].id or 'no id'}) and predicted event {j} "
                        f"({pred_events[j].id or 'no id'}) aligned by {method} (no usable span to compare)"
                    )
                    gt_free.discard(i)
                    pred_free.discard(j)
                    break

    if gt_free and pred_free:
        fallback(lambda _, e: e.time_order, "time_order")
    if gt_free and pred_free:
        fallback(lambda idx, _: idx, "list_order")

    pairs.sort(key=lambda p: p.gt_index)
    return Alignment(
        pairs=tuple(pairs),
        missed=tuple(sorted(gt_free)),
        spurious=tuple(sorted(pred_free)),
        gt_spans=tuple(gt_spans),
        pred_spans=tuple(pred_spans),
        min_iou=min_iou,
        warnings=tuple(warnings),
        gt_ids=tuple(e.id or f"#{i}" for i, e in enumerate(gt_events)),
        pred_ids=tuple(e.id or f"#{j}" for j, e in enumerate(pred_events)),
        gt_labels=EventLabels(gt_events, gt_spans, text),
        pred_labels=EventLabels(pred_events, pred_spans, text),
    )
