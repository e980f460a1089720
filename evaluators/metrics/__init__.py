"""Text metrics: registry, overlap (EM, F1, ROUGE, BLEU), similarity, embeddings, segmentation."""
