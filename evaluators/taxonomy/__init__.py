"""Label vocabularies shipped with EvalBoard, user vocabulary loaders, canonical labels."""

from evaluators.taxonomy.core import (
    FIELDS,
    Entry,
    Label,
    Taxonomy,
    Vocabulary,
    default_taxonomy,
    load_relationship_csv,
    load_sentiment_csv,
)

__all__ = ["FIELDS", "Entry", "Label", "Taxonomy", "Vocabulary", "default_taxonomy", "load_relationship_csv",
           "load_sentiment_csv"]
