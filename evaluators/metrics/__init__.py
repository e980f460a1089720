"""Metrics: registry, overlap (EM, F1, ROUGE, BLEU), QA answers (SQuAD, CMRC), keywords, similarity, embeddings,
segmentation."""
