"""The frame every page starts with: page config, navigation, the shared data-source choice."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]

#: Session key of the data source shared by all pages (not a widget key, so it survives page changes).
SOURCE_KEY = "evalboard_data_source"
SOURCES = {"demo": "Demo data (built in)", "upload": "Upload my files"}

#: Pages in navigation order: (file relative to the project root, label, icon, one-line description).
PAGES = [
    ("app.py", "Home", ":material/home:", "What EvalBoard does"),
    ("pages/1_Narrative.py", "Narrative annotation", ":material/menu_book:",
     "JSON v3 stories: characters, relationships, sentiment, action layer, spans"),
    ("pages/2_QA_Factcheck.py", "QA & fact-check", ":material/fact_check:",
     "EM/F1 in English and Chinese, verdicts, confusion matrix"),
    ("pages/3_Test_Sets.py", "Keyword test sets", ":material/checklist:",
     "Keyword-scored single and multi-turn test sets"),
    ("pages/4_Persona_Dialogue.py", "Persona dialogue", ":material/forum:",
     "Chatbot responses by scene and model, similarity metrics"),
    ("pages/5_Long_Memory.py", "Long-term memory QA", ":material/psychology:",
     "LoCoMo and LongMemEval by question type, LLM-as-judge"),
    ("pages/7_Judge_Lab.py", "Judge lab", ":material/balance:",
     "LLM-judge prompt versions against your own labels: held-out kappa, overfit warning, corrected scores"),
    ("pages/6_Review.py", "Review", ":material/rate_review:",
     "Annotators review outputs: durable decisions, blind mode, adjudication, agreement"),
    ("pages/8_Runs.py", "Runs", ":material/timeline:", "Kept runs: history, trends with intervals, side by side"),
]


#: Emoji for the browser tab of pages whose icon is a Material name: Streamlit fetches a Material favicon
#: from fonts.gstatic.com, and the dashboard makes no request outside its own server (the Material
#: font of the navigation and expanders is bundled and served locally).
TAB_ICONS = {":material/analytics:": "📊", ":material/home:": "🏠", ":material/menu_book:": "📖",
             ":material/fact_check:": "✅", ":material/checklist:": "🧪", ":material/forum:": "💬",
             ":material/psychology:": "🧠", ":material/rate_review:": "📝", ":material/balance:": "⚖️"}


def tab_icon(icon: str) -> str:
    """The browser-tab icon for a page icon: an emoji as it is, a Material name as its emoji (``"📊"`` if unknown).

    >>> tab_icon(":material/menu_book:"), tab_icon("💬"), tab_icon(":material/unknown:")
    ('📖', '💬', '📊')
    """
    if icon.startswith(":material/"):
        return TAB_ICONS.get(icon, "📊")
    return icon


def favicon(emoji: str) -> str:
    """The browser-tab icon of ``emoji`` as an ASCII ``data:`` URL: the picture Streamlit draws for an emoji icon.

    Streamlit's frontend draws an emoji page icon as this same SVG (the emoji as text); handing it
    the URL directly skips the server's check of the string against its catalog of every emoji
    (loading and compiling it cost a page's first render 0.1-0.5 s). An ASCII string is never looked
    up in that catalog, and a ``data:`` URL is passed to the browser as it is (no request is made).

    >>> favicon("📊")
    "data:image/svg+xml,%3Csvg%20xmlns%3D'http%3A//www.w3.org/2000/svg'%20viewBox%3D'0%200%20100%20100'%3E%3Ctext%20y%3D'.9em'%20font-size%3D'90'%3E%F0%9F%93%8A%3C/text%3E%3C/svg%3E"
    """
    svg = f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'><text y='.9em' font-size='90'>{emoji}</text></svg>"
    return "data:image/svg+xml," + quote(svg, safe="/'")


def app_root() -> Path:
    """The folder of the dashboard being run: the one holding its main script ``app.py`` and ``pages/``.

    The main script's folder (``<prefix>/share/evalboard`` when installed, the repository in a
    checkout); when the main script is a page itself (AppTest of ``pages/2_QA_Factcheck.py``), the
    folder above ``pages/``; outside a Streamlit run, the folder above this package (:data:`ROOT`).
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    main = getattr(ctx, "main_script_path", None) if ctx is not None else None
    if main:
        folder = Path(main).resolve().parent
        if folder.name == "pages" and (folder.parent / "app.py").is_file():
            folder = folder.parent
        if (folder / "app.py").is_file():
            return folder
    return ROOT


def existing_pages() -> list[tuple[str, str, str, str]]:
    """The entries of :data:`PAGES` whose file exists beside the running ``app.py`` (:func:`app_root`)."""
    root = app_root()
    return [p for p in PAGES if (root / p[0]).exists()]


def page_link(path: str, label: str, icon: str | None = None) -> None:
    """``st.page_link`` where the multipage app knows the page, a plain link otherwise (e.g. under AppTest)."""
    try:
        st.page_link(path, label=label, icon=icon)
    except Exception:  # StreamlitPageNotFoundError outside the multipage runtime
        slug = "" if path == "app.py" else Path(path).stem.split("_", 1)[-1]
        st.markdown(f"[{label}](/{slug})")


def _remember_source() -> None:
    st.session_state[SOURCE_KEY] = st.session_state["_source_widget"]


def data_source() -> str:
    """The current data source: ``"demo"`` (default) or ``"upload"`` (also settable with ``?source=upload``)."""
    value = st.session_state.get(SOURCE_KEY)
    if value not in SOURCES:
        value = st.query_params.get("source", "demo")
        if value not in SOURCES:
            value = "demo"
        st.session_state[SOURCE_KEY] = value
    return value


#: Style of the static tables and charts of a light first screen (:mod:`components.static`): thin
#: rules in the theme's text colour, numbers right-aligned, a table wider than a phone scrolls inside
#: its own box, a chart scales down to the column.  Column titles break after an underscore
#: (:func:`components.static.static_table`), so that a table of many scores fits a desktop page instead
#: of hiding its last columns past the edge of its box.
STATIC_STYLE = (
    ".eb-static { overflow-x: auto; max-width: 100%; }"
    ".eb-static table { border-collapse: collapse; font-size: 0.875rem; margin: 0 0 0.5rem; }"
    ".eb-static th, .eb-static td { border: 1px solid rgba(128, 128, 128, 0.3); padding: 0.25rem 0.45rem;"
    " vertical-align: top; text-align: left; }"
    ".eb-static th { background: rgba(128, 128, 128, 0.08); font-weight: 600; }"
    ".eb-static td.num { text-align: right; font-variant-numeric: tabular-nums; }"
    ".eb-static td:first-child { white-space: nowrap; }"
    ".eb-static td.none { opacity: 0.6; }"
    ".eb-static caption { caption-side: bottom; text-align: left; opacity: 0.7; font-size: 0.8rem;"
    " padding-top: 0.25rem; }"
    ".eb-static figure { margin: 0 0 0.5rem; }"
    ".eb-static figcaption { font-weight: 600; margin-bottom: 0.25rem; }"
    ".eb-static svg { background: #ffffff; border-radius: 0.25rem; }"
)


#: Style that keeps text whole: Streamlit ends a metric card's label and value, a button's label and a
#: page link's label in an ellipsis (``nowrap``, ``overflow: hidden``) when its box is narrower than the
#: text ("Scored · 评分数 2400 / …" in a sixth of the page, "Review these replies · 人工审阅这些回…");
#: here they wrap instead, breaking inside a word only when one word is wider than the box.  A metric
#: card is at least 150 px wide (a row of short values lines up) and otherwise as wide as its text
#: (:func:`components.metrics.metric_row`).
TEXT_STYLE = (
    "[data-testid='stMetricLabel'] [data-testid='stMarkdownContainer'], [data-testid='stMetricLabel'] p,"
    " [data-testid='stMetricValue'] [data-testid='stMarkdownContainer'], [data-testid='stMetricValue'] p,"
    " button [data-testid='stMarkdownContainer'], button [data-testid='stMarkdownContainer'] p,"
    " [data-testid='stPageLink-NavLink'] span"
    " { white-space: normal; overflow: visible; text-overflow: clip; overflow-wrap: break-word; }"
    "[data-testid='stElementContainer']:has(> [data-testid='stMetric']) { min-width: min(150px, 100%); }"
)


def view_switch(views: dict[str, str], *, key: str, label: str = "View · 视图") -> str:
    """The page's view switch: a segmented control whose first view (the light overview) is the default.

    A page's first screen is its overview (metric cards, static charts and tables,
    :mod:`components.static`); interactive charts and sortable grids are in the other views, one
    click away, and run only while their view is open.  The open view is part of the link
    (``?view=<slug>``): a shared link opens it.

    Parameters
    ----------
    views : dict of slug -> label
        In display order; the first is the default.  Labels are the project's own text (not escaped).
    key : str
        Widget key.
    label : str
        The control's label (collapsed: the buttons say what they are).

    Returns
    -------
    str
        The slug of the open view.
    """
    slugs = list(views)
    qp = st.query_params
    if key not in st.session_state and qp.get("view") in views:
        st.session_state[key] = qp["view"]  # a shared link opens its view
    elif st.session_state.get(key) not in views:
        st.session_state[key] = slugs[0]  # a view this input does not have (no confusion matrix for QA)
    slug = st.segmented_control(label, slugs, format_func=views.get, key=key, required=True,
                                label_visibility="collapsed") or slugs[0]
    if slug == slugs[0]:
        if "view" in qp:
            del qp["view"]
    else:
        qp["view"] = slug
    return slug


def page_frame(title: str, icon: str = ":material/analytics:", *, caption: str | None = None,
               source_choice: bool = True) -> str:
    """Set up a page: config, title, navigation and the shared data-source choice in the sidebar.

    Parameters
    ----------
    title : str
        Page title (browser tab and heading).
    icon : str
        Page icon (a Material icon name such as ``":material/menu_book:"`` or an emoji); the browser
        tab shows an emoji (:func:`tab_icon`, drawn by :func:`favicon`), never a favicon fetched from another host.
    caption : str, optional
        One line under the title.
    source_choice : bool
        Show the shared *Data source* choice in the sidebar (default).  ``False`` for a page that does
        not read it (Review works on saved sessions, each keeping the files it was made from): the
        sidebar says so instead of showing "Demo data" beside a session built from an upload.

    Returns
    -------
    str
        ``"demo"`` or ``"upload"``.
    """
    st.set_page_config(page_title=f"{title} · EvalBoard", page_icon=favicon(tab_icon(icon)), layout="wide")
    current = data_source()
    with st.sidebar:
        st.markdown("### EvalBoard")
        for path, label, page_icon, _ in existing_pages():
            page_link(path, label, page_icon)
        st.divider()
        if source_choice:
            st.radio(
                "Data source",
                options=list(SOURCES),
                format_func=SOURCES.get,
                index=list(SOURCES).index(current),
                key="_source_widget",
                on_change=_remember_source,
                help="Shared by all pages: the built-in demo, or files you upload on each page.",
            )
        else:
            st.caption("Data source: not used on this page. A review session keeps the files it was made "
                       "from, demo or upload.")
    # Our own style rules (no user text): button groups (the view switch) and tab bars wrap on a
    # narrow screen instead of hiding their last buttons or tabs past the edge (Review's Export tab
    # was reached by scrolling the tab bar sideways at 390 px).
    st.html("<style>[data-testid='stButtonGroup'] > div { flex-wrap: wrap; row-gap: 4px; }"
            "[data-testid='stTabs'] [role='tablist'] { flex-wrap: wrap; row-gap: 2px; }" + STATIC_STYLE + TEXT_STYLE
            + "</style>")
    st.title(title)
    if caption:
        st.caption(caption)
    return st.session_state[SOURCE_KEY]
