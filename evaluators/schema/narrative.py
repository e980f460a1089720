"""JSON v3 narrative annotation schema (pydantic v2), validated at the boundary.

The models are lenient where real files vary (``None`` for strings, numbers for ids,
a string where a list is expected, aliases as a separated string) and ignore unknown
keys (the loader keeps the whole parsed document beside the model, so nothing is
lost).  What cannot be interpreted is reported by
:func:`evaluators.narrative.loader.load_document` with its JSON path, and the rest of
the document is still used.

One set of models: a strict copy for well-formed files was measured at 12.9 against
17.3 µs per fairytale document (``model_validate`` alone): 2 x 4.4 µs, about 3% of the
~310 µs a GT/prediction pair takes to score, so it was not worth a second schema to keep
in step.
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
