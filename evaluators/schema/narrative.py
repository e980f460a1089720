"""JSON v3 narrative annotation schema (pydantic v2), validated at the boundary.

The models are lenient where real files vary (``None`` for strings, numbers for ids,
a string where a list is expected, aliases as a separated string) and ignore unknown
keys (the loader keeps the whole parsed document beside the model, so nothing is
lost).  What cannot be interpreted is reported by
:func:`evaluators.narrative.loader.load_document` with its JSON path, and the rest of
the document is still used.

Well-formed files are first validated by :data:`STRICT_DOCUMENT`: subclasses of the same
models with plain field types and no per-field Python coercion (about a third fewer
instructions).  A file they reject is validated again by the lenient models, so a
``null`` where a string belongs never costs more than one extra pass.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from evaluators.text.normalize import split_aliases


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


def _to_str_list(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    return value


def _aliases(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, (list, tuple)):
        value = [str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in value]
    if value is None or isinstance(value, (str, list, tuple)):
        return split_aliases(value)
    return []  # an alias of another shape (an object ...) carries no usable name


def _optional_int(value: Any) -> Any:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        v = value.strip()
        return int(v) if v.lstrip("-").isdigit() else value
    return value


Str = Annotated[str, BeforeValidator(_none_to_empty)]
StrList = Annotated[list[Str], BeforeValidator(_to_str_list)]
OptInt = Annotated[int | None, BeforeValidator(_optional_int)]


class _Model(BaseModel):
    # Unknown keys are ignored here; the loader keeps the parsed document (``LoadedDocument.raw``).
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True, frozen=False)


class TextSpan(_Model):
    """Half-open character span ``[start, end)`` into ``source_info.text_content`` and its text."""

    start: OptInt = None
    end: OptInt = None
    text: Str = ""


class Character(_Model):
    """A character: ``name``, ``alias`` (list; from ``"a; b、c"`` strings too) and ``archetype``."""

    name: Str = ""
    alias: Annotated[list[str], BeforeValidator(_aliases)] = Field(default_factory=list)
    archetype: Str = ""


class Relationship(_Model):
    """A directed relationship of one event: ``agent`` -> ``target`` with labels and sentiment.

    ``agent`` and ``target`` keys are required (their values may be empty); records written
    with other keys (``doer``, ``receiver``, ``type``) are schema errors of that record.
    """

    agent: Str
    target: Str
    relationship_level1: Str = ""
    relationship_level2: Str = ""
    sentiment: Str = ""


class ActionLayer(_Model):
    """The action layer of an event: category, type, context, status, function."""

    category: Str = ""
    type: Str = ""
    context: Str = ""
    status: Str = ""
    function: Str = ""


ACTION_FIELDS = ("category", "type", "context", "status", "function")


class NarrativeEvent(_Model):
    """One narrative event with its text span, participants, relationships and action layer."""

    id: Str = ""
    text_span: TextSpan | None = None
    event_type: Str = ""
    description: Str = ""
    agents: StrList = Field(default_factory=list)
    targets: StrList = Field(default_factory=list)
    target_type: Str = ""
    time_order: OptInt = None
    relationships: Annotated[list[Relationship], BeforeValidator(_to_str_list)] = Field(default_factory=list)
    action_layer: ActionLayer | None = None


class SourceInfo(_Model):
    """Where the story comes from; ``text_content`` is the text spans point into."""

    language: Str = ""
    text_content: Str = ""


class Metadata(_Model):
    """Document metadata (``id`` is the story id when present)."""

    id: Str = ""
    title: Str = ""


class NarrativeDocument(_Model):
    """A JSON v3 narrative annotation document."""

    version: Str = ""
    metadata: Metadata = Field(default_factory=Metadata)
    source_info: SourceInfo = Field(default_factory=SourceInfo)
    characters: Annotated[list[Character], BeforeValidator(_to_str_list)] = Field(default_factory=list)
    narrative_events: Annotated[list[NarrativeEvent], BeforeValidator(_to_str_list)] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The story text (``source_info.text_content``), ``""`` when absent."""
        return self.source_info.text_content



# ---------------------------------------------------------------- strict fast path


class _StrictTextSpan(TextSpan):
    start: int | None = None
    end: int | None = None
    text: str = ""


class _StrictRelationship(Relationship):
    agent: str
    target: str
    relationship_level1: str = ""
    relationship_level2: str = ""
    sentiment: str = ""


class _StrictActionLayer(ActionLayer):
    category: str = ""
    type: str = ""
    context: str = ""
    status: str = ""
    function: str = ""


class _StrictCharacter(Character):
    name: str = ""
    archetype: str = ""


class _StrictEvent(NarrativeEvent):
    id: str = ""
    text_span: _StrictTextSpan | None = None
    event_type: str = ""
    description: str = ""
    agents: list[str] = Field(default_factory=list)
    targets: list[str] = Field(default_factory=list)
    target_type: str = ""
    time_order: int | None = None
    relationships: list[_StrictRelationship] = Field(default_factory=list)
    action_layer: _StrictActionLayer | None = None


class _StrictSourceInfo(SourceInfo):
    language: str = ""
    text_content: str = ""


class _StrictMetadata(Metadata):
    id: str = ""
    title: str = ""


class _StrictDocument(NarrativeDocument):
    version: str = ""
    metadata: _StrictMetadata = Field(default_factory=_StrictMetadata)
    source_info: _StrictSourceInfo = Field(default_factory=_StrictSourceInfo)
    characters: list[_StrictCharacter] = Field(default_factory=list)
    narrative_events: list[_StrictEvent] = Field(default_factory=list)


#: Fast-path model of a whole document; its instances are :class:`NarrativeDocument` s.
STRICT_DOCUMENT = _StrictDocument
