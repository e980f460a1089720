"""Places in a narrative GT document: the record ids of a GT patch (:mod:`evaluators.narrative.patch`).

A narrative GT file is one story; a correction names the place it corrects with a stable,
readable key written like a JSON path (names and event ids, not list positions, so a key stays
valid when records are reordered):

=======================================================  ==============================================
record id                                                the GT value there (its "answers")
=======================================================  ==============================================
``characters[<name>]``                                   the character's name (as scored: its ``name``,
                                                         else its first alias)
``characters[<name>].archetype``                         its archetype (``()`` when empty)
``narrative_events[<event>].relationships[<a> -> <t>]``  the relationship ``<a> -> <t>`` (``∅``: empty target)
``narrative_events[<event>].relationships[<a> -> <t>].<field>``
                                                         ``relationship_level1``, ``relationship_level2``
                                                         or ``sentiment``
``narrative_events[<event>].action_layer.<field>``       ``category``, ``type``, ``context``, ``status``,
                                                         ``function``
``narrative_events[<event>].text_span``                  the span as ``[start, end)``
=======================================================  ==============================================

``<event>`` is the event's ``id``, or ``#i`` (its position) when it has none, as the alignment
names it.  Two relationships of one event with the same agent and target share their key (a
correction applies to both); of two events with the same id, the first is meant.
"""

from __future__ import annotations

from evaluators.schema.narrative import ACTION_FIELDS, NarrativeDocument, Relationship

#: Fields of a relationship a correction can name.
RELATIONSHIP_FIELDS = ("relationship_level1", "relationship_level2", "sentiment")
#: Prefix of the note of an archetype mismatch (:func:`evaluators.narrative.characters.evaluate_characters`).
_ARCHETYPE_NOTE = "character "
_NO_SENTIMENT = ": no predicted sentiment"


def character_key(name: str) -> str:
    """``characters[<name>]``.

    Parameters
    ----------
    name : str
        The character's scored name (:func:`scored_name`).

    Returns
    -------
    str
    """
    return f"characters[{name}]"


def relationship_text(agent: str, target: str) -> str:
    """``"<agent> -> <target>"`` with ``∅`` for an empty target (how mismatches show a relationship).

    Parameters
    ----------
    agent, target : str

    Returns
    -------
    str

    Examples
    --------
    >>> relationship_text("狐狸", "")
    '狐狸 -> ∅'
    """
    return f"{agent} -> {target or '∅'}"


def relationship_key(event: str, agent: str, target: str) -> str:
    """``narrative_events[<event>].relationships[<agent> -> <target>]``.

    Parameters
    ----------
    event : str
        The event's key (:func:`event_ids`).
    agent, target : str

    Returns
    -------
    str
    """
    return f"narrative_events[{event}].relationships[{relationship_text(agent, target)}]"


def action_key(event: str, field: str) -> str:
    """``narrative_events[<event>].action_layer.<field>``.

    Parameters
    ----------
    event : str
        The event's key.
    field : str
        An action-layer field (``category``, ``type``, ``context``, ``status``, ``function``).

    Returns
    -------
    str
    """
    return f"narrative_events[{event}].action_layer.{field}"


def span_key(event: str) -> str:
    """``narrative_events[<event>].text_span``.

    Parameters
    ----------
    event : str
        The event's key.

    Returns
    -------
    str
    """
    return f"narrative_events[{event}].text_span"


def span_text(start: int | None, end: int | None) -> str:
    """``"[start, end)"``, how mismatches show a span.

    Parameters
    ----------
    start, end : int or None
        Character offsets of a half-open span.

    Returns
    -------
    str
    """
    return f"[{start}, {end})"


def scored_name(name: str, aliases: list[str]) -> str:
    """The name a character is scored under: its name, else its first non-empty alias (``""``: none).

    Parameters
    ----------
    name : str
    aliases : list of str

    Returns
    -------
    str
        Stripped when it is the name; an alias as written.
    """
    name = name.strip()
    if name:
        return name
    return next((a for a in aliases if a.strip()), "")


def event_ids(doc: NarrativeDocument) -> list[str]:
    """Each event's key: its id, or ``#i`` (as :func:`evaluators.narrative.alignment.align_events` names it).

    Parameters
    ----------
    doc : NarrativeDocument

    Returns
    -------
    list of str
        One per event, in document order (``i`` 0-based).
    """
    return [e.id or f"#{i}" for i, e in enumerate(doc.narrative_events)]


def usable_relationship(r: Relationship) -> bool:
    """A relationship with an agent or a target (the others are skipped by the scorer).

    Parameters
    ----------
    r : Relationship

    Returns
    -------
    bool
    """
    return bool(r.agent.strip() or r.target.strip())


def gold_values(doc: NarrativeDocument) -> dict[str, tuple[str, ...]]:
    """Record id -> the GT value there (``()`` when empty), for every place of ``doc`` (see the module table).

    Parameters
    ----------
    doc : NarrativeDocument
        The GT document as loaded (its valid part).

    Returns
    -------
    dict of str to tuple of str
        At most one value each; the first record wins where two share a key.
    """
    out: dict[str, tuple[str, ...]] = {}

    def put(key: str, value: str) -> None:
        out.setdefault(key, (value,) if value.strip() else ())

    for c in doc.characters:
        name = scored_name(c.name, c.alias)
        if name:
            put(character_key(name), name)
            put(character_key(name) + ".archetype", c.archetype)
    for gid, e in zip(event_ids(doc), doc.narrative_events):
        for r in e.relationships:
            if not usable_relationship(r):
                continue
            key = relationship_key(gid, r.agent, r.target)
            put(key, relationship_text(r.agent, r.target))
            for f in RELATIONSHIP_FIELDS:
                put(f"{key}.{f}", getattr(r, f))
        al = e.action_layer
        for f in ACTION_FIELDS:
            put(action_key(gid, f), getattr(al, f) if al is not None else "")
        s = e.text_span
        if s is not None and s.start is not None and s.end is not None:
            put(span_key(gid), span_text(s.start, s.end))
    return out


def locate(component: str, field: str, gt_value: str, gt_event: str, note: str) -> str | None:
    """The record id of the GT place a mismatch is about, ``None`` for one without a GT place.

    Parameters
    ----------
    component, field, gt_value, gt_event, note : str
        Of a :class:`~evaluators.narrative.base.Mismatch`.

    Returns
    -------
    str or None
        ``None`` for extra characters and spurious relationships and spans (only in the prediction).
    """
    if component == "characters":
        if field == "missing_character" and gt_value:
            return character_key(gt_value)
        if field == "archetype" and note.startswith(_ARCHETYPE_NOTE):
            return character_key(note[len(_ARCHETYPE_NOTE):]) + ".archetype"
        return None
    if not gt_event:
        return None
    if component == "relationships":
        if field == "missing_relationship" and gt_value:
            return f"narrative_events[{gt_event}].relationships[{gt_value}]"
        if field in RELATIONSHIP_FIELDS and note:
            return f"narrative_events[{gt_event}].relationships[{note}].{field}"
        return None
    if component == "sentiment" and field == "sentiment" and note:
        agent, _, target = note.removesuffix(_NO_SENTIMENT).partition(" -> ")
        return relationship_key(gt_event, agent, target) + ".sentiment"
    if component == "action_layer" and field in ACTION_FIELDS:
        return action_key(gt_event, field)
    if component == "text_span" and field in ("span", "missed_span"):
        return span_key(gt_event)
    return None
