"""Streamlit pieces of the persona dialogue page: metric picker, heatmap, tables, downloads.

They take plain data (the evaluation object, its results and dicts from ``evaluators``) and render it;
no scoring happens here.  The overview (the page's first screen) is static (:mod:`components.static`);
pandas and plotly are imported by the pieces of the other views, not with this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import streamlit as st

from components.static import static_records, static_table
from components.tables import dataframe, visible_frame
from evaluators.reports.escape import html_text, md, visible

if TYPE_CHECKING:
    import pandas as pd

    from evaluators.dialogue.scoring import CaseResult


def metric_picker(metric_info: list[dict], default: list[str], key: str = "dialogue_metrics") -> list[str]:
    """Multiselect of the registry's metrics; shows signatures and how to enable unavailable ones.

    Parameters
    ----------
    metric_info : list of dict
        ``Metric.info()`` of every registered metric.
    default : list of str
        Names selected at first.

    Returns
    -------
    list of str
        The chosen names.
    """
    by_name = {m["name"]: m for m in metric_info}

    def label(name: str) -> str:
        return name if by_name[name]["available"] else f"{name} (unavailable)"

    chosen = st.multiselect("Metrics", list(by_name), default=[d for d in default if d in by_name],
                            format_func=label, key=key,
                            help="From the metric registry; unavailable ones are shown as —, never 0.")
    with st.expander("Metric signatures and availability"):
        static_records([{
            "metric": m["name"], "range": f"[{m['range'][0]:g}, {m['range'][1]:g}]",
            "available": "yes" if m["available"] else "no", "signature": m["signature"],
            "how to enable": "" if m["available"] else (m["unavailable_reason"] or ""),
        } for m in metric_info])
    return chosen


def scene_model_heatmap(by_scene: list[dict]) -> None:
    """Heatmap of the mean combined score, scenes down, models across."""
    rows = [{"scene": s["scene"], "model": s["model"], "combined": s["combined_score"]} for s in by_scene]
    if not rows:
        st.info("No scored case yet.")
        return
    import pandas as pd
    import plotly.express as px

    df = pd.DataFrame(rows).pivot(index="scene", columns="model", values="combined")
    # plotly reads <b>, <a href> ... in labels: scene and model names are escaped to show as typed
    df.index = [html_text(s, breaks=False) for s in df.index]
    df.columns = [html_text(m, breaks=False) for m in df.columns]
    fig = px.imshow(df, text_auto=".3f", zmin=0, zmax=1, color_continuous_scale="Blues", aspect="auto",
                    labels={"color": "combined"})
    fig.update_layout(height=max(260, 60 + 48 * len(df)), margin=dict(l=10, r=10, t=30, b=10))
    st.plotly_chart(fig, width="stretch")


def scene_model_svg(by_scene: list[dict], title: str = "Mean combined score by scene and model") -> str:
    """The scenes x models combined scores as static grouped bars (one colour per model; a gap "—" where
    a model has no scored case in a scene): :func:`evaluators.reports.svg.grouped_bars`."""
    from evaluators.reports.svg import grouped_bars

    scenes = list(dict.fromkeys(s["scene"] for s in by_scene))
    models = list(dict.fromkeys(s["model"] for s in by_scene))
    value = {(s["scene"], s["model"]): s["combined_score"] for s in by_scene}
    return grouped_bars(scenes, {m: [value.get((sc, m)) for sc in scenes] for m in models}, title=title)


def model_rows(by_model: list[dict], metrics: list[str], corpus_bleu: dict[str, dict]) -> list[dict]:
    """One dict per model: counts, mean of each metric, combined score, corpus BLEU."""
    rows = []
    for s in by_model:
        row = {"model": visible(s["model"]), "cases": s["n_cases"], "scored": s["n_scored"], "missing": s["n_missing"],
               "errors": s["n_errors"], "no GT": s["n_no_gt"], "combined": s["combined_score"]}
        row.update({m: s["means"].get(m) for m in metrics})
        row["corpus BLEU"] = (corpus_bleu.get(s["model"]) or {}).get("score")
        rows.append(row)
    return rows


def model_table(by_model: list[dict], metrics: list[str], corpus_bleu: dict[str, dict], *,
                static: bool = False) -> None:
    """:func:`model_rows` as a sortable grid, or (``static``) as a static table with 4 decimals."""
    rows = model_rows(by_model, metrics, corpus_bleu)
    if static:
        columns = list(rows[0]) if rows else ["model"]
        static_table(columns, [[r[c] for c in columns] for r in rows], digits=4)
        return
    import pandas as pd

    dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ["combined", "corpus BLEU",
                                                                                          *metrics]})


def comparison_view(comparison: dict | None) -> None:
    """Wins per model, pairwise wins and the best model of each scene."""
    if not comparison:
        st.info("Load replies of two or more models to compare them on the same cases.")
        return
    st.write(f"On **{comparison['n_shared']}** cases answered by every model: "
             + ", ".join(f"**{md(m)}** wins {n}" for m, n in comparison["wins"].items())
             + f", ties {comparison['ties']}.")
    c1, c2 = st.columns(2)
    with c1:
        st.caption("Pairwise: cases where the row model scores higher than the column model")
        import pandas as pd

        pairwise = pd.DataFrame(comparison["pairwise"]).T.astype("Int64").astype(object)
        # a model against itself has no count: a dash, not the grid's "None"
        dataframe(pairwise, width="stretch")  # a missing pair shows the placeholder "—"
    with c2:
        st.caption("Best model per scene (mean combined score)")
        dataframe(visible_frame([{"scene": s, "best model": m} for s, m in comparison["best_by_scene"].items()]),
                     hide_index=True, width="stretch")


def _finite(value: float | None) -> float | None:
    """``None`` for NaN and infinities, as ``to_dict()`` gives them; other values unchanged."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def case_table(results: Sequence[CaseResult], metrics: list[str]) -> pd.DataFrame:
    """Sortable per-case table; returns the frame shown (for selecting a row).

    Reads the results' attributes (no ``to_dict()`` of every result on each rerun).
    """
    rows = []
    for r in results:
        row = {"model": visible(r.model), "scene": visible(r.scene), "index": visible(r.dialogue_index), "status": r.status,
               "combined": _finite(r.combined_score), "expected": r.expected_response, "prediction": r.prediction}
        row.update({m: _finite(r.metrics.get(m)) for m in metrics})
        if r.error:
            row["error"] = r.error
        rows.append(row)
    df = visible_frame(rows)  # hidden characters shown in every text cell (an RTL override reorders a cell)
    dataframe(df, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ["combined", *metrics]})
    return df


def downloads(files: dict[str, tuple[str, Callable[[], str]]]) -> None:
    """Download buttons: ``{label: (file name, function returning the text)}``.

    The text is made when its button is clicked, not on every rerun of the page; a CSV is UTF-8 with
    a BOM, as on every page (Excel reads Chinese text right), the rest UTF-8.
    """
    cols = st.columns(len(files))
    for col, (label, (name, make)) in zip(cols, files.items()):
        mime = "text/csv" if name.endswith(".csv") else "application/json" if name.endswith(".json") else "text/plain"
        encoding = "utf-8-sig" if mime == "text/csv" else "utf-8"
        col.download_button(label, data=lambda make=make, enc=encoding: make().encode(enc), file_name=name, mime=mime,
                            width="stretch", key=f"dialogue_dl_{name}", on_click="ignore")
