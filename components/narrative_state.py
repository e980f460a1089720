"""Narrative page state: settings widgets, demo and upload loading, scoring cached on the file bytes."""

from __future__ import annotations

import streamlit as st

from components.uploads import cached, digest
from evaluators.demo import demo_path
from evaluators.io import InputFile, collect_paths
from evaluators.narrative import COMPONENT_TITLES, COMPONENTS
from evaluators.narrative.batch import NarrativeReport
from evaluators.narrative.run import NarrativeInputs, run_narrative
from evaluators.narrative.settings import NarrativeSettings, TaxonomyFile, build_config
from evaluators.reports.escape import md


@st.cache_resource(show_spinner=False)
def demo_files() -> tuple[list[InputFile], list[InputFile]]:
    """The shipped narrative demo: GT (``*_v3.json``) and predictions (``*_prediction.json``)."""
    files = collect_paths(demo_path("narrative"))
    return ([f for f in files if f.name.endswith("_v3.json")],
            [f for f in files if f.name.endswith("_prediction.json")])


def score(gt: list[InputFile], pred: list[InputFile], settings: NarrativeSettings) -> NarrativeReport:
    """:func:`run_narrative` of ``gt``/``pred`` with ``settings``, cached on the files' bytes and the settings.

    The settings enter the key through ``config.signature``, which names every taxonomy file
    with a hash of its bytes, and their issues.

    A progress bar is shown while a new batch is scored; a cached batch is returned at once
    (the object is shared, not copied, so reruns stay fast).
    """
    def compute() -> NarrativeReport:
        bar = st.progress(0.0, text="Scoring…") if len(gt) > 1 else None

        def tick(done, total, sid):
            if bar is not None:
                bar.progress(done / max(total, 1), text=f"Scoring {done}/{total}: {md(sid)}")

        result = run_narrative(NarrativeInputs.from_files(gt, pred), settings, progress=tick)
        if bar is not None:
            bar.empty()
        return result

    extra = settings.config.signature + "|" + "|".join(f"{i.file}:{i.message}" for i in settings.issues)
    return cached(("narrative", digest(gt, pred, extra=extra)), compute)


def score_patched(gt: list[InputFile], pred: list[InputFile], settings: NarrativeSettings, patches) -> NarrativeReport:
    """:func:`run_narrative` with review corrections (a :class:`~evaluators.io.gt_patch.GTPatchSet`): the run
    after them, with ``before`` and ``corrections``; cached on the files, the settings and the patch entries.

    Raises ``GTPatchMismatch`` (a ``ValueError``) when no line of the patches is for a GT file of the run.
    """
    from dataclasses import replace

    def compute() -> NarrativeReport:
        with st.spinner("Scoring with the corrections …"):
            return run_narrative(replace(NarrativeInputs.from_files(gt, pred), gt_patch=patches), settings)

    extra = settings.config.signature + "|" + "|".join(f"{i.file}:{i.message}" for i in settings.issues)
    return cached(("narrative-gt-patch", digest(gt, pred, extra=extra), patches.entries), compute)


def _taxonomy_file(upload) -> TaxonomyFile | None:
    return None if upload is None else TaxonomyFile(upload.name, upload.getvalue())


def settings(container=None) -> NarrativeSettings:
    """Settings widgets (alignment threshold, near-miss tolerance, weights, taxonomy files, script conversion).

    Returns the settings built by :func:`evaluators.narrative.settings.build_config` (the CLI's
    function): the config and its issues (all weights 0, unreadable taxonomy files).
    """
    box = container or st.sidebar
    with box.expander("Scoring settings", expanded=False):
        min_iou = st.slider("Minimum span IoU to align events", 0.05, 1.0, 0.5, 0.05, key="nar_min_iou",
                            help="Events are aligned one-to-one on character IoU of their text spans.")
        n_t = st.slider("Near-miss tolerance n_t (sentences)", 1, 5, 2, key="nar_n_t",
                        help="Boundary similarity counts a boundary within n_t - 1 sentences as a near miss.")
        st.caption("Component weights of the overall score")
        weights = {c: st.number_input(COMPONENT_TITLES[c], 0.0, 10.0, 1.0, 0.5, key=f"nar_w_{c}") for c in COMPONENTS}
        rel_file = st.file_uploader("Relationship taxonomy (CSV, guide layout)", type=["csv"], key="nar_rel_tax")
        sen_file = st.file_uploader("Sentiment taxonomy (CSV, guide layout)", type=["csv"], key="nar_sen_tax")
        from evaluators.text.script import SCRIPT_CONFIGS

        script = st.selectbox("Script conversion · 繁简转换", [None, *SCRIPT_CONFIGS], key="nar_script",
                              format_func=lambda c: "none (off)" if c is None else c,
                              help="Convert GT and prediction (names, texts, span texts, labels) with this OpenCC "
                                   "configuration before comparing them: tw2s or t2s scores a Traditional prediction "
                                   "against a Simplified story (t2s keeps 著 where tw2s gives 着). Spans stay in the "
                                   "original text's offsets; the configuration is named in the signature.")
    return build_config(min_iou=min_iou, n_t=n_t, weights=weights, relationship_taxonomy=_taxonomy_file(rel_file),
                        sentiment_taxonomy=_taxonomy_file(sen_file), script=script)


def system_name(file_names: list[str], default: str = "predictions") -> str:
    """The name of the system whose prediction files were uploaded together (the Compare view's labels):
    :func:`evaluators.io.sources.system_name`, the engine's rule (the file or zip name, what several files
    share, never one story's file name)."""
    from evaluators.io.sources import system_name as engine_name

    return engine_name(file_names, default)
