"""Small builders for hand-made JSON v3 documents used by the narrative tests."""

from __future__ import annotations


def span(text: str, piece: str, occurrence: int = 0) -> dict:
    """A text_span dict for the ``occurrence``-th occurrence of ``piece`` in ``text``."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(piece, start + 1)
    return {"start": start, "end": start + len(piece), "text": piece}


def rel(agent, target, l1="", l2="", sentiment="") -> dict:
    return {"agent": agent, "target": target, "relationship_level1": l1, "relationship_level2": l2,
            "sentiment": sentiment}


def action(category="", type_="", context="", status="", function="") -> dict:
    return {"category": category, "type": type_, "context": context, "status": status, "function": function}


def event(eid, text_span=None, relationships=(), action_layer=None, time_order=None) -> dict:
    return {"id": eid, "text_span": text_span, "event_type": "", "description": "", "agents": [], "targets": [],
            "target_type": "character", "time_order": time_order, "relationships": list(relationships),
            "action_layer": action_layer or action()}


def doc(text="", characters=(), events=(), story_id="T_001") -> dict:
    return {"version": "3.0", "metadata": {"id": story_id, "title": story_id},
            "source_info": {"language": "zh", "text_content": text},
            "characters": [c if isinstance(c, dict) else {"name": c[0], "alias": c[1], "archetype": c[2]}
                           for c in characters],
            "narrative_events": list(events)}
