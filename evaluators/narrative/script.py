"""Traditional/Simplified conversion of narrative documents before they are compared (issue 31).

Off by default.  With ``NarrativeConfig.script`` set to an OpenCC configuration (``tw2s``,
``t2s``, ...), both documents are converted before any comparison: character names and
aliases, agents and targets, relationship ends, event descriptions, span texts, and labels
(a label already in the taxonomy as written is kept; otherwise its converted spelling is used,
so ``s2t`` never turns a valid Simplified label into an unknown Traditional one).

Spans stay in the original text's offsets.  The reference text is converted with
:func:`evaluators.text.script.convert_with_offsets`, cut at every span offset of both files so
each maps exactly; a span is verified (or located) in the converted text with its converted
span text, and its offsets are mapped back to the original text.  The overlay, the sentence
boundaries and every reported offset are therefore those of the original text, which is what
the context carries (``EvalContext.text``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evaluators.narrative.loader import LoadedDocument
from evaluators.narrative.spans import REPAIRED, ResolvedSpan, resolve_span
from evaluators.schema.narrative import NarrativeEvent, TextSpan
from evaluators.taxonomy import Taxonomy
from evaluators.text.script import Converted, convert, convert_with_offsets

#: Action-layer field -> its vocabulary.
_ACTION_VOCAB = {"category": "action_category", "type": "action_type", "context": "action_context",
                 "status": "action_status", "function": "action_function"}


def _label(value: str, vocab_name: str, script: str, tax: Taxonomy) -> str:
    """A label converted unless it is valid as written (see the module docstring)."""
    converted = convert(value, script)
    if converted == value:
        return value
    vocab = tax[vocab_name]
    if value in vocab:
        return value
    return converted


def convert_document(loaded: LoadedDocument, script: str, tax: Taxonomy) -> LoadedDocument:
    """A copy of ``loaded`` with its names, texts and labels converted (``text_content`` and offsets unchanged).

    Parameters
    ----------
    loaded : LoadedDocument
    script : str
        OpenCC configuration (``"t2s"`` ...).
    tax : Taxonomy
        A label valid as written in the taxonomy is kept; others are converted.

    Returns
    -------
    LoadedDocument
    """
    doc = loaded.doc.model_copy(deep=True)

    def c(text: str) -> str:
        return convert(text, script)

    for ch in doc.characters:
        ch.name, ch.alias = c(ch.name), [c(a) for a in ch.alias]
        ch.archetype = _label(ch.archetype, "archetype", script, tax)
    for e in doc.narrative_events:
        e.agents, e.targets, e.description = [c(a) for a in e.agents], [c(t) for t in e.targets], c(e.description)
        if e.text_span is not None:
            e.text_span.text = c(e.text_span.text)
        for r in e.relationships:
            r.agent, r.target = c(r.agent), c(r.target)
            r.relationship_level1 = _label(r.relationship_level1, "relationship_level1", script, tax)
            r.relationship_level2 = _label(r.relationship_level2, "relationship_level2", script, tax)
            r.sentiment = _label(r.sentiment, "sentiment", script, tax)
        if e.action_layer is not None:
            for f, vocab in _ACTION_VOCAB.items():
                setattr(e.action_layer, f, _label(getattr(e.action_layer, f), vocab, script, tax))
    return dataclasses.replace(loaded, doc=doc)


def span_offsets(*docs: LoadedDocument) -> set[int]:
    """Every span offset written in ``docs`` (the cut points of the conversion).

    Parameters
    ----------
    *docs : LoadedDocument

    Returns
    -------
    set of int
    """
    out: set[int] = set()
    for d in docs:
        for e in d.doc.narrative_events:
            s = e.text_span
            if s is not None:
                out.update(x for x in (s.start, s.end) if x is not None)
    return out


def resolve_converted(events: Sequence[NarrativeEvent], originals: Sequence[NarrativeEvent], conv: Converted
                      ) -> list[ResolvedSpan]:
    """The spans of ``events`` (converted documents) resolved in the converted text, in original offsets.

    ``originals`` are the same events before conversion (their offsets as written); ``conv`` the
    reference text converted with offsets.

    Parameters
    ----------
    events : sequence of NarrativeEvent
        Converted events.
    originals : sequence of NarrativeEvent
        The same events before conversion, in the same order.
    conv : Converted
        The reference text converted, with its offset maps.

    Returns
    -------
    list of ResolvedSpan
        One per event, offsets into the original text.
    """
    n, m = len(conv.original), len(conv.text)
    out = []
    for e, o in zip(events, originals):
        span = e.text_span
        if span is None:
            out.append(resolve_span(None, conv.text))
            continue
        gs, ge = o.text_span.start, o.text_span.end

        def fwd(x: int | None) -> int | None:
            return conv.forward[x] if x is not None and 0 <= x <= n else x

        r = resolve_span(TextSpan(start=fwd(gs), end=fwd(ge), text=span.text), conv.text)
        start, end = r.start, r.end
        if start is not None and end is not None and 0 <= start <= end <= m:
            start, end = conv.to_original(start, end)
        note = r.note
        if r.status == REPAIRED and gs is not None and start is not None:
            note = f"{note.split(';')[0]}; moved by {start - gs:+d} characters"
        out.append(ResolvedSpan(start, end, r.status, gs, ge, note))
    return out


def converted_spans(gt: LoadedDocument, pred: LoadedDocument, text: str, script: str, tax: Taxonomy
                    ) -> tuple[LoadedDocument, LoadedDocument, list[ResolvedSpan], list[ResolvedSpan]]:
    """Both documents converted and their spans resolved, in ``text``'s original offsets (module docstring).

    Parameters
    ----------
    gt, pred : LoadedDocument
    text : str
        The reference text.
    script : str
        OpenCC configuration.
    tax : Taxonomy

    Returns
    -------
    (gt, pred, gt_spans, pred_spans)
        The converted documents and their resolved spans.
    """
    conv = convert_with_offsets(text, script, keep=span_offsets(gt, pred))
    gt_c, pred_c = convert_document(gt, script, tax), convert_document(pred, script, tax)
    gt_spans = resolve_converted(gt_c.doc.narrative_events, gt.doc.narrative_events, conv)
    pred_spans = resolve_converted(pred_c.doc.narrative_events, pred.doc.narrative_events, conv)
    return gt_c, pred_c, gt_spans, pred_spans
