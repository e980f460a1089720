"""Text utilities: normalization, sentence splitting (and tokenizers)."""

from evaluators.text.normalize import label_key, name_key, nfkc, split_aliases
from evaluators.text.sentences import sentence_starts, split_sentences

__all__ = ["label_key", "name_key", "nfkc", "split_aliases", "sentence_starts", "split_sentences"]
