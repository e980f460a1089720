"""Load JSON v3 narrative documents, salvaging what is valid and locating what is not.

A document is validated in one pass when it is well formed (the common case, fast).
Otherwise each character, event and relationship is validated on its own: invalid
records are reported with their JSON path and left out, the rest is kept.  Files in
the older flat v2 schema are converted explicitly (see :func:`convert_v2_to_v3`) and
the conversion is stated in the document's warnings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from evaluators.io.errors import InputError, InputIssue, format_json_path
from evaluators.io.readers import load_json_bytes, parse_json_text
from evaluators.io.sources import story_id as story_id_from_name
from evaluators.schema.narrative import (
    Character,
    NarrativeDocument,
    NarrativeEvent,
    Relationship,
)

#: Keys some predictions use instead of agent/target/relationship_level*/sentiment.
FOREIGN_RELATIONSHIP_KEYS = ("doer", "receiver", "type")
V2_EVENT_KEYS = ("relationship_level1", "relationship_level2", "sentiment", "action_category", "action_type",
                 "action_context", "action_status", "narrative_function")


@dataclass(frozen=True)
class InvalidRecord:
    """A record left out because it does not fit the schema.

    Attributes
    ----------
    kind : {"character", "event", "relationship"}
    path : str
        JSON path, e.g. ``narrative_events[3].relationships[0]``.
    event_index : int or None
        Index of the event the record belongs to (relationships) or is (events).
    message : str
        What was wrong and what was expected.
    raw : Any
        The record as found.
    """

    kind: str
    path: str
    event_index: int | None
    message: str
    raw: Any

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "event_index": self.event_index, "message": self.message,
                "raw": self.raw}


@dataclass
class LoadedDocument:
    """A validated document with where it came from and what was wrong with it.

    Attributes
    ----------
    doc : NarrativeDocument
        The valid part of the document.
    file : str
        File name (or ``"<memory>"``).
    encoding : str or None
        ``utf-8``, ``utf-8-sig`` or ``gb18030`` when read from bytes.
    converted_from : str or None
        ``"v2"`` when the file was converted from the flat v2 schema.
    issues : list of InputIssue
        Every schema problem, with its JSON path (also the conversion warning).
    invalid_records : list of InvalidRecord
        Records left out (counted by the evaluators, e.g. relationships written with
        ``doer``/``receiver``/``type``).
    raw : Any
        The parsed JSON as read (unknown keys included), or ``None`` when given a model.
    accepted : dict of str to tuple of str
        Acceptable variants of a GT patch (:mod:`evaluators.narrative.patch`): place (record id of
        :mod:`evaluators.narrative.locate`) -> further labels accepted there.  Empty unless patched.
    """

    doc: NarrativeDocument
    file: str = "<memory>"
    encoding: str | None = None
    converted_from: str | None = None
    issues: list[InputIssue] = field(default_factory=list)
    invalid_records: list[InvalidRecord] = field(default_factory=list)
    raw: Any = None
    accepted: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def story_id(self) -> str:
        """``metadata.id`` if present, else derived from the file name."""
        return self.doc.metadata.id or story_id_from_name(self.file)

    def invalid_relationships_by_event(self) -> dict[int, int]:
        """Number of invalid relationship records per event index."""
        out: dict[int, int] = {}
        for r in self.invalid_records:
            if r.kind == "relationship" and r.event_index is not None:
                out[r.event_index] = out.get(r.event_index, 0) + 1
        return out


def _describe_errors(err: ValidationError, prefix: tuple[Any, ...]) -> list[tuple[str, str]]:
    out = []
    for e in err.errors():
        loc = prefix + tuple(e.get("loc", ()))
        out.append((format_json_path(loc), e.get("msg", "invalid value")))
    return out


def _relationship_message(raw: Any, err: ValidationError) -> str:
    if isinstance(raw, dict):
        foreign = [k for k in FOREIGN_RELATIONSHIP_KEYS if k in raw]
        if foreign and "agent" not in raw:
            return (f"relationship uses keys {', '.join(foreign)}; expected agent, target, relationship_level1, "
                    "relationship_level2, sentiment")
        missing = [k for k in ("agent", "target") if k not in raw]
        if missing:
            return f"relationship lacks {', '.join(missing)}; expected agent and target (values may be empty)"
    else:
        return f"relationship must be an object, found {type(raw).__name__}"
    return "; ".join(f"{p}: {m}" for p, m in _describe_errors(err, ()))


def is_v2(obj: dict[str, Any]) -> bool:
    """True for the flat v2 schema: version 2.x, or events with labels at event level and no relationships.

    Parameters
    ----------
    obj : dict
        A parsed narrative document.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_v2({"version": "2.1"}), is_v2({"version": "3.0", "narrative_events": []})
    (True, False)
    """
    version = str(obj.get("version") or "")
    if version.startswith("2"):
        return True
    events = obj.get("narrative_events")
    if isinstance(events, list) and events and isinstance(events[0], dict):
        e = events[0]
        return "relationships" not in e and "action_layer" not in e and any(k in e for k in V2_EVENT_KEYS)
    return False


def convert_v2_to_v3(obj: dict[str, Any]) -> dict[str, Any]:
    """Convert a flat v2 document to JSON v3.

    v2 keeps one relationship's labels on the event (``relationship_level1``,
    ``relationship_level2``, ``sentiment``) and the action layer flat (``action_category``,
    ``action_type``, ``action_context``, ``action_status``, ``narrative_function``).  The
    v3 files of the same annotator show the mapping used here: when any relationship
    label is present, one relationship from the event's first agent to its first target
    carries them; the flat action fields become ``action_layer``.  Other keys are kept.

    Parameters
    ----------
    obj : dict
        The parsed v2 document (not modified).

    Returns
    -------
    dict
        A v3 document with ``version`` ``"3.0 (converted from v2)"``.
    """
    out = dict(obj)
    out["version"] = "3.0 (converted from v2)"
    events = []
    for e in obj.get("narrative_events") or []:
        if not isinstance(e, dict):
            events.append(e)
            continue
        ne = {k: v for k, v in e.items() if k not in V2_EVENT_KEYS}
        agents = e.get("agents") or []
        targets = e.get("targets") or []
        agents = [agents] if isinstance(agents, str) else agents
        targets = [targets] if isinstance(targets, str) else targets
        labels = {k: e.get(k) or "" for k in ("relationship_level1", "relationship_level2", "sentiment")}
        ne["relationships"] = (
            [{"agent": agents[0] if agents else "", "target": targets[0] if targets else "", **labels}]
            if any(labels.values()) else []
        )
        ne["action_layer"] = {
            "category": e.get("action_category") or "",
            "type": e.get("action_type") or "",
            "context": e.get("action_context") or "",
            "status": e.get("action_status") or "",
            "function": e.get("narrative_function") or "",
        }
        events.append(ne)
    out["narrative_events"] = events
    return out


_CHARACTER_LIST = TypeAdapter(list[Character])


def _validate_slowly(obj: dict[str, Any], loaded: LoadedDocument) -> NarrativeDocument:
    """Validate record by record, keeping the valid ones and reporting the others."""
    file = loaded.file
    base = {k: v for k, v in obj.items() if k not in ("characters", "narrative_events")}
    try:
        doc = NarrativeDocument.model_validate(base)
    except ValidationError as err:
        for path, msg in _describe_errors(err, ()):
            loaded.issues.append(InputIssue(file, msg, path=path, kind="schema"))
        # Keep going with whatever top-level parts are valid.
        cleaned = {}
        for key in ("version", "metadata", "source_info"):
            try:
                NarrativeDocument.model_validate({key: base.get(key)} if key in base else {})
                if key in base:
                    cleaned[key] = base[key]
            except ValidationError:
                pass
        doc = NarrativeDocument.model_validate(cleaned)

    characters = obj.get("characters")
    if characters is not None and not isinstance(characters, list):
        loaded.issues.append(InputIssue(file, "expected a list of characters", path="characters", kind="schema"))
        characters = []
    try:  # usually the list is fine as a whole: one call
        doc.characters.extend(_CHARACTER_LIST.validate_python(characters or []))
        characters = []
    except ValidationError:
        pass
    for i, raw in enumerate(characters or []):
        try:
            doc.characters.append(Character.model_validate(raw))
        except ValidationError as err:
            msg = "; ".join(m for _, m in _describe_errors(err, ()))
            path = f"characters[{i}]"
            loaded.issues.append(InputIssue(file, f"invalid character: {msg}", path=path, kind="schema"))
            loaded.invalid_records.append(InvalidRecord("character", path, None, msg, raw))

    events = obj.get("narrative_events")
    if events is not None and not isinstance(events, list):
        loaded.issues.append(InputIssue(file, "expected a list of narrative events", path="narrative_events",
                                        kind="schema"))
        events = []
    for i, raw in enumerate(events or []):
        path = f"narrative_events[{i}]"
        if not isinstance(raw, dict):
            msg = f"expected an event object, found {type(raw).__name__}"
            loaded.issues.append(InputIssue(file, msg, path=path, kind="schema"))
            loaded.invalid_records.append(InvalidRecord("event", path, i, msg, raw))
            continue
        try:  # most events are valid as a whole: one call
            doc.narrative_events.append(NarrativeEvent.model_validate(raw))
            continue
        except ValidationError:
            pass
        rels = raw.get("relationships")
        body = {k: v for k, v in raw.items() if k != "relationships"}
        try:
            event = NarrativeEvent.model_validate(body)
        except ValidationError as err:
            errs = _describe_errors(err, ())
            msg = "; ".join(f"{p}: {m}" for p, m in errs)
            loaded.issues.append(InputIssue(file, f"invalid event: {msg}", path=path, kind="schema"))
            # Salvage the event without its invalid fields so alignment still sees it.
            bad = {e["loc"][0] for e in err.errors() if e.get("loc")}
            try:
                event = NarrativeEvent.model_validate({k: v for k, v in body.items() if k not in bad})
            except ValidationError:
                loaded.invalid_records.append(InvalidRecord("event", path, i, msg, raw))
                continue
        if rels is not None and not isinstance(rels, list):
            msg = "expected a list of relationships"
            loaded.issues.append(InputIssue(file, msg, path=f"{path}.relationships", kind="schema"))
            rels = []
        for j, rraw in enumerate(rels or []):
            rpath = f"{path}.relationships[{j}]"
            try:
                event.relationships.append(Relationship.model_validate(rraw))
            except ValidationError as err:
                msg = _relationship_message(rraw, err)
                loaded.issues.append(InputIssue(file, msg, path=rpath, kind="schema"))
                loaded.invalid_records.append(InvalidRecord("relationship", rpath, i, msg, rraw))
        doc.narrative_events.append(event)
    return doc


def load_document(source: dict[str, Any] | NarrativeDocument | LoadedDocument | bytes | str,
                  file: str = "<memory>") -> LoadedDocument:
    """Load a narrative document from bytes, JSON text, a parsed dict or a model.

    Parameters
    ----------
    source : bytes, str, dict, NarrativeDocument or LoadedDocument
        Bytes are decoded (UTF-8, UTF-8 with BOM, GB18030); ``str`` is JSON text.
    file : str
        Name used in issues.

    Returns
    -------
    LoadedDocument
        The valid part of the document, its issues and the records left out.

    Raises
    ------
    InputError
        When nothing can be used: undecodable bytes, invalid JSON (with line and column),
        or a top-level value that is not an object.
    """
    if isinstance(source, LoadedDocument):
        return source
    if isinstance(source, NarrativeDocument):
        return LoadedDocument(doc=source, file=file)
    loaded = LoadedDocument(doc=None, file=file)  # type: ignore[arg-type]  # set below
    if isinstance(source, bytes):
        obj, loaded.encoding = load_json_bytes(source, file)
    elif isinstance(source, str):
        obj = parse_json_text(source, file)
    else:
        obj = source
    if isinstance(source, bytes) and not (isinstance(obj, dict) and obj.keys() & {"narrative_events", "characters"}):
        from evaluators.io.shapes import misplaced  # another input's file: say where it goes, in one line

        wrong = misplaced(file, source, "a narrative annotation (GT or PRED)", accepts=("narrative",))
        if wrong is not None:
            raise InputError(wrong)
    if not isinstance(obj, dict):
        raise InputError(InputIssue(file, f"expected a JSON object (a narrative document), found "
                                          f"{type(obj).__name__}", path="$", kind="schema"))
    if is_v2(obj):
        obj = convert_v2_to_v3(obj)
        loaded.converted_from = "v2"
        loaded.issues.append(InputIssue(
            file, "flat v2 schema converted to v3: one relationship per event (first agent -> first target), "
                  "action fields moved into action_layer", severity="warning", kind="conversion"))
    loaded.raw = obj
    try:
        loaded.doc = NarrativeDocument.model_validate(obj)
    except ValidationError:
        # a part that cannot be interpreted: validate record by record, locate each problem, keep the rest
        loaded.doc = _validate_slowly(obj, loaded)
    return loaded
