"""Reusable Streamlit pieces. They take plain data and render it; no scoring happens here."""
