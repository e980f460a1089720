"""Shared pieces of the narrative component evaluators: configuration, context, mismatches, validity."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, NamedTuple

from evaluators import __version__
from evaluators.narrative.alignment import Alignment, align_events
from evaluators.narrative.loader import LoadedDocument, load_document
from evaluators.narrative.spans import resolve_span
from evaluators.results import DictMixin, to_jsonable
from evaluators.schema.narrative import NarrativeDocument
from evaluators.taxonomy import Taxonomy, default_taxonomy
from evaluators.text.provenance import script_label

COMPONENTS = ("characters", "relationships", "sentiment", "action_layer", "text_span")

#: Display names of the components (reports and dashboard).
COMPONENT_TITLES = {"characters": "Characters", "relationships": "Relationships", "sentiment": "Sentiment",
                    "action_layer": "Action layer", "text_span": "Text spans"}

#: The metrics of each component in a summary (``get_metrics_summary``), in display order.
SUMMARY_KEYS = {
    "characters": ("character_precision", "character_recall", "character_f1", "character_archetype_accuracy"),
    "relationships": ("relationship_precision", "relationship_recall", "relationship_f1", "relationship_strict_f1",
                      "level1_accuracy", "level2_accuracy", "relationship_pair_coverage"),
    "sentiment": ("sentiment_precision", "sentiment_recall", "sentiment_f1", "sentiment_macro_f1",
                  "sentiment_polarity_accuracy"),
    "action_layer": ("action_category_accuracy", "action_type_accuracy", "action_context_accuracy",
                     "action_status_accuracy", "action_function_accuracy", "action_layer_complete_match",
                     "action_layer_partial_match", "action_layer_field_accuracy"),
    "text_span": ("boundary_score", "pk", "window_diff", "overlap_ratio"),
}


@dataclass(frozen=True)
class NarrativeConfig:
    """Settings of a narrative evaluation (all appear in the result's signature).

    Attributes
    ----------
    min_iou : float, default 0.5
        Minimum character IoU for span-based event alignment.
    n_t : int, default 2
        Near-miss tolerance of boundary similarity, in sentence boundaries (Fournier 2013).
    correct_iou : float, default 0.9
        An aligned span with IoU at least this is "correct", below it "partial".
    weights : dict, optional
        Component weights of the overall score (default equal).  A component whose score
        is ``None`` is left out and the remaining weights are renormalised.
    taxonomy : Taxonomy, optional
        Label vocabularies (default: the shipped ones).
    script : str or None
        OpenCC configuration (``tw2s``, ``t2s``, ... :data:`evaluators.text.script.SCRIPT_CONFIGS`)
        converting both documents before they are compared (:mod:`evaluators.narrative.script`;
        spans stay in the original text's offsets); ``None`` (default): no conversion.  Named in
        the signature when set.
    """

    min_iou: float = 0.5
    n_t: int = 2
    correct_iou: float = 0.9
    weights: dict[str, float] = field(default_factory=lambda: {c: 1.0 for c in COMPONENTS})
    taxonomy: Taxonomy | None = None
    script: str | None = None

    def __post_init__(self):
        if self.script:
            from evaluators.text.script import check_config

            object.__setattr__(self, "script", check_config(self.script))
        else:
            object.__setattr__(self, "script", None)
        unknown = set(self.weights) - set(COMPONENTS)
        if unknown:
            raise ValueError(f"unknown components in weights: {sorted(unknown)}; known: {list(COMPONENTS)}")
        if any(w < 0 for w in self.weights.values()):
            raise ValueError("weights must be >= 0")
        if not 0 < self.min_iou <= 1:
            raise ValueError(f"min_iou must be in (0, 1], got {self.min_iou}")
        if not 0 < self.correct_iou <= 1:
            raise ValueError(f"correct_iou must be in (0, 1], got {self.correct_iou}")
        if not isinstance(self.n_t, int) or self.n_t < 1:
            raise ValueError(f"n_t must be an integer >= 1, got {self.n_t}")

    @property
    def tax(self) -> Taxonomy:
        return self.taxonomy or default_taxonomy()

    @cached_property
    def signature(self) -> str:
        """Settings, taxonomy and version in one line (computed once per config)."""
        w = ",".join(f"{c}={self.weights.get(c, 0):g}" for c in COMPONENTS)
        return (f"narrative/v1 align=id>span_iou(min={self.min_iou:g})>time_order>list_order "
                f"names=nfkc+casefold+alias labels=canonical({self.tax.signature}) "
                f"span_unit=sentence n_t={self.n_t} correct_iou={self.correct_iou:g} weights[{w}] "
                + (f"script={script_label(self.script)} " if self.script else "") + f"evalboard={__version__}")


DEFAULT_CONFIG = NarrativeConfig()


class Mismatch(NamedTuple):
    """One difference between GT and prediction, for tables and the mismatch CSV.

    Attributes
    ----------
    component : str
        ``characters``, ``relationships``, ``sentiment``, ``action_layer`` or ``text_span``.
    field : str
        The compared field (``archetype``, ``relationship_level1``, ``category`` ...) or the kind
        of difference (``missing_character``, ``spurious_relationship`` ...).
    gt_value, pred_value : str
        Values as written (empty when absent).
    gt_event, pred_event : str
        Event ids (empty when not applicable).
    note : str
        Extra context (canonical forms, IoU, "event missed").
    """

    component: str
    field: str
    gt_value: str = ""
    pred_value: str = ""
    gt_event: str = ""
    pred_event: str = ""
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class ComponentResult(DictMixin):
    """The fields every component result shares (characters, relationships, sentiment, action layer, spans).

    Subclasses add their metrics and counts, and name their headline metric in
    ``score_field``.  In :meth:`to_dict` the shared fields follow the subclass's own
    fields, then come the subclass's row lists named in ``detail_fields``, then the mismatches.

    Attributes
    ----------
    gt_incomplete : bool
        Some ground truth was empty and skipped (missing-GT policy), or there was nothing to compare.
    reason : str or None
        Why (what was skipped, or why the score is ``None``).
    skipped : dict
        Counts of what was skipped, by kind.
    validity : dict
        ``{field: {side: {valid, total, validity_rate, invalid_labels}}}`` of labels checked
        against the taxonomy (:class:`ValidityCounter`; empty for a component without labels).
    mismatches : list of Mismatch
        Every difference found, for tables and the mismatch CSV.
    """

    gt_incomplete: bool
    reason: str | None
    skipped: dict[str, int]
    validity: dict[str, Any] = field(default_factory=dict)
    mismatches: list[Mismatch] = field(default_factory=list)

    #: The field holding the component score.
    score_field: ClassVar[str] = ""
    #: Row lists of the subclass, written after the shared fields and before ``mismatches``.
    detail_fields: ClassVar[tuple[str, ...]] = ()

    @property
    def score(self) -> float | None:
        """The component score (the value of ``score_field``)."""
        return getattr(self, self.score_field)

    @classmethod
    def _field_order(cls) -> tuple[str, ...]:
        order = cls.__dict__.get("_order")
        if order is None:
            shared = ("gt_incomplete", "reason", "skipped", "validity")
            own = [f.name for f in dataclasses.fields(cls)
                   if f.name not in shared and f.name != "mismatches" and f.name not in cls.detail_fields]
            order = (*own, *shared, *cls.detail_fields, "mismatches")
            cls._order = order
        return order

    def to_dict(self) -> dict[str, Any]:
        return {name: to_jsonable(getattr(self, name)) for name in self._field_order()}

    def without_rows(self):
        """A copy with every score and count but empty row lists (``detail_fields`` and ``mismatches``)."""
        return dataclasses.replace(self, mismatches=[], **{f: [] for f in self.detail_fields})


class ValidityCounter:
    """Counts labels inside / outside the taxonomy per field, for GT and prediction separately.

    Labels are collected with :meth:`add` and judged once per distinct label in :meth:`report`.
    """

    def __init__(self, taxonomy: Taxonomy):
        self.tax = taxonomy
        self.raw: dict[tuple[str, str], list[str]] = {}

    def add(self, field_name: str, side: str, labels: list[str]) -> None:
        """Collect raw labels of ``field_name`` on ``side`` (``"gt"`` or ``"pred"``).

        Parameters
        ----------
        field_name : str
            A taxonomy field (``archetype``, ``sentiment``, ``relationship_level1`` ...).
        side : {"gt", "pred"}
        labels : list of str
            Labels as written (empty ones are not counted in the report).
        """
        have = self.raw.get((field_name, side))
        if have is None:
            self.raw[(field_name, side)] = list(labels)
        else:
            have.extend(labels)

    def report(self) -> dict[str, Any]:
        """``{field: {side: {valid, total, validity_rate, invalid_labels}}}`` (empty labels not counted)."""
        out: dict[str, Any] = {}
        for (f, side), labels in self.raw.items():
            if not labels:
                continue
            vocab = self.tax[f]
            values, entries = vocab.values, vocab.entries
            valid = total = 0
            invalid: dict[str, int] = {}
            for raw, n in Counter(labels).items():  # each distinct label once, in order of first appearance
                if not raw:
                    continue
                value = values[raw]
                if not value:
                    continue
                total += n
                if value in entries:
                    valid += n
                else:
                    invalid[raw] = n
            if total:
                out.setdefault(f, {})[side] = {"valid": valid, "total": total, "validity_rate": valid / total,
                                               "invalid_labels": invalid}
        return out


@dataclass
class EvalContext:
    """Everything the components share for one document pair (built once by the composite)."""

    gt: LoadedDocument
    pred: LoadedDocument
    text: str
    text_source: str
    alignment: Alignment
    config: NarrativeConfig
    tax: Taxonomy = field(init=False)

    def __post_init__(self):
        self.tax = self.config.tax


def reference_text(gt: NarrativeDocument, pred: NarrativeDocument, text: str | None) -> tuple[str, str]:
    """The text spans are checked against: ``text`` if given, else GT's, else the prediction's.

    Parameters
    ----------
    gt, pred : NarrativeDocument
    text : str or None
        The text given by the caller.

    Returns
    -------
    (text, source) : (str, str)
        ``source`` is ``argument``, ``ground_truth``, ``prediction`` or ``none`` (text ``""``).
    """
    if text:
        return text, "argument"
    if gt.text:
        return gt.text, "ground_truth"
    if pred.text:
        return pred.text, "prediction"
    return "", "none"


def build_context(prediction: Any, ground_truth: Any, text: str | None = None,
                  config: NarrativeConfig = DEFAULT_CONFIG) -> EvalContext:
    """Load both documents, resolve every span against the reference text and align events.

    Parameters
    ----------
    prediction, ground_truth : dict, bytes, str, NarrativeDocument or LoadedDocument
    text : str, optional
        Source text overriding the documents' ``text_content``.
    config : NarrativeConfig

    Raises
    ------
    InputError
        If either document is unusable as a whole.
    """
    pred = load_document(prediction, "prediction")
    gt = load_document(ground_truth, "ground_truth")
    ref, source = reference_text(gt.doc, pred.doc, text)
    if config.script:  # names, texts and labels converted; spans resolved in the converted text, original offsets
        from evaluators.narrative.script import converted_spans

        gt, pred, gt_spans, pred_spans = converted_spans(gt, pred, ref, config.script, config.tax)
    else:
        gt_spans = [resolve_span(e.text_span, ref) for e in gt.doc.narrative_events]
        pred_spans = [resolve_span(e.text_span, ref) for e in pred.doc.narrative_events]
    alignment = align_events(gt.doc.narrative_events, pred.doc.narrative_events, gt_spans, pred_spans,
                             config.min_iou, text=ref)
    return EvalContext(gt, pred, ref, source, alignment, config)


def ensure_context(prediction: Any, ground_truth: Any, text: str | None, context: EvalContext | None,
                   config: NarrativeConfig | None) -> EvalContext:
    """Reuse ``context`` when given, else build one.

    Parameters
    ----------
    prediction, ground_truth : dict, bytes, str, NarrativeDocument or LoadedDocument
        Used only when ``context`` is ``None``.
    text : str or None
        The text overriding the documents'.
    context : EvalContext or None
    config : NarrativeConfig or None
        Default ``DEFAULT_CONFIG``.

    Returns
    -------
    EvalContext

    Raises
    ------
    InputError
        A document unusable as a whole (:func:`build_context`).
    """
    if context is not None:
        return context
    return build_context(prediction, ground_truth, text, config or DEFAULT_CONFIG)


class ComponentEvaluator:
    """Base of the per-component evaluators (seed API: ``evaluate`` and ``get_metrics_summary``).

    Subclasses set ``component`` (one of :data:`COMPONENTS`) and define ``evaluate``.
    """

    component: str = ""

    def __init__(self, config: NarrativeConfig | None = None):
        self.config = config

    @classmethod
    def get_metrics_summary(cls, result: Any) -> dict[str, float | None]:
        """``{metric: value}`` for the component's :data:`SUMMARY_KEYS`.

        Parameters
        ----------
        result : ComponentResult
            This component's result.

        Returns
        -------
        dict of str to (float or None)
        """
        return {k: getattr(result, k) for k in SUMMARY_KEYS[cls.component]}
