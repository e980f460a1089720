"""EvalBoard home page: `streamlit run app.py`."""

import streamlit as st

from components.layout import PAGES, existing_pages, page_frame, page_link
from components.metrics import metric_row, score_table_html
from components.narrative_state import demo_files, score
from evaluators.narrative.settings import build_config

source = page_frame("EvalBoard", "📊",
                    caption="Evaluate LLM outputs against ground truth and look at the differences — 中文 and English.")

st.markdown(
    "EvalBoard scores model outputs against human ground truth and shows where they differ: which characters a "
    "model missed, which relationship labels it got wrong, which spans drift, which answers fail exact match. "
    "Every number says how it was computed (tokenizer, normalization, matching rule) and can be downloaded."
)
st.caption("**Data source** (sidebar, shared by every page): "
           + ("the built-in demo is shown — nothing to upload." if source == "demo"
              else "upload mode — each page asks for its files."))

# every page but Home, Review and Runs is a kind of evaluation; Review is where people check them, Runs keeps them
st.subheader(f"{len(PAGES) - 3} kinds of evaluation, and a review workspace")
available = {p[0] for p in existing_pages()}
cols = st.columns(3)
for n, (path, label, icon, description) in enumerate(PAGES[1:]):
    with cols[n % 3].container(border=True):
        st.markdown(f"**{label}**")
        st.caption(description)
        if path in available:
            page_link(path, f"Open {label}", icon)
        else:
            st.caption("Not available in this version yet.")

st.subheader("Demo at a glance: narrative annotation")
gt, pred = demo_files()
batch = score(gt, pred, build_config())  # the narrative page's defaults
metric_row([("Stories", len(batch.scored), "One Chinese, one English, written for EvalBoard."),
            ("Overall (micro)", batch.micro["overall_score"], "Pooled counts over both stories."),
            ("Overall (macro)", batch.macro["overall_score"], "Mean of the stories' overall scores.")])
st.html(score_table_html(
    ["overall", "characters", "relationships", "sentiment", "action layer", "text span"],
    [(r.story_id, [r.overall_score, *r.component_scores.values()]) for r in batch.scored],
))
page_link("pages/1_Narrative.py", "See the character diff, relationships, action layer and span overlay",
          ":material/arrow_forward:")
