"""Typed records validated at the boundary (pydantic v2)."""

from evaluators.schema.narrative import (
    ACTION_FIELDS,
    ActionLayer,
    Character,
    Metadata,
    NarrativeDocument,
    NarrativeEvent,
    Relationship,
    SourceInfo,
    TextSpan,
)

__all__ = ["ACTION_FIELDS", "ActionLayer", "Character", "Metadata", "NarrativeDocument", "NarrativeEvent",
           "Relationship", "SourceInfo", "TextSpan"]
