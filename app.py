"""EvalBoard home page: `streamlit run app.py`."""

import streamlit as st

from components.layout import page_frame

page_frame("EvalBoard", "📊", caption="Evaluate LLM outputs against ground truth and look at the differences — 中文 and English.")

st.markdown(
    """
EvalBoard scores model outputs against human ground truth and shows where they differ.

- **Narrative annotation** (JSON v3): characters, events and text spans, relationships, sentiment, action layer.
- **QA and fact-check**: exact match / F1 (SQuAD for English, CMRC2018 for Chinese), verdicts, confusion matrix.
- **Persona dialogue**: responses by scene and model with similarity metrics.
- **Long-term memory QA** (LoCoMo, LongMemEval): metrics by question type, LLM-as-judge.
- **Keyword-scored test sets**: single and multi-turn.
"""
)
