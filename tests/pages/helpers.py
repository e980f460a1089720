"""Running a page with AppTest and reading its metrics (shared by the page tests)."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from components.layout import SOURCE_KEY
from tests.conftest import ROOT

HOME = str(ROOT / "app.py")
NARRATIVE_PAGE = str(ROOT / "pages" / "1_Narrative.py")
QA_PAGE = str(ROOT / "pages" / "2_QA_Factcheck.py")
TESTSETS_PAGE = str(ROOT / "pages" / "3_Test_Sets.py")
DIALOGUE_PAGE = str(ROOT / "pages" / "4_Persona_Dialogue.py")
MEMORY_PAGE = str(ROOT / "pages" / "5_Long_Memory.py")
JUDGELAB_PAGE = str(ROOT / "pages" / "7_Judge_Lab.py")
RUNS_PAGE = str(ROOT / "pages" / "8_Runs.py")


def page_app(path: str, *, timeout: float = 120, source: str | None = None, **state) -> AppTest:
    """An AppTest of a page file, not run yet: ``source`` ("demo" / "upload") and other session state set."""
    at = AppTest.from_file(path, default_timeout=timeout)
    if source is not None:
        at.session_state[SOURCE_KEY] = source
    for key, value in state.items():
        at.session_state[key] = value
    return at


def run_page(path: str, *, timeout: float = 120, source: str | None = None, **state) -> AppTest:
    """Run a page file once with AppTest (see :func:`page_app`) and check it raised nothing."""
    at = page_app(path, timeout=timeout, source=source, **state)
    at.run()
    assert not at.exception, at.exception
    return at


def capture_downloads(monkeypatch) -> dict[str, Callable[[], bytes | str]]:
    """``{file name: callable}`` of each download button given a callable (made on click) in the runs that
    follow, recorded through ``monkeypatch`` (a fixture's, or a :class:`pytest.MonkeyPatch` context)."""
    made: dict[str, Callable[[], bytes | str]] = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        made[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return made


def metric_values(at: AppTest) -> dict[str, str]:
    """Metric values by the English part of their label ("EM · 精确匹配" -> "EM")."""
    return {m.label.split(" · ")[0]: m.value for m in at.metric}


def run_memory_page(source: str = "demo") -> AppTest:
    """pages/5_Long_Memory.py run once on the demo or in upload mode."""
    return run_page(MEMORY_PAGE, source=source)


def memory_metric(at: AppTest, label: str) -> str:
    """The value of the long-memory page's metric with this label."""
    return metric_values(at)[label]


def shown(source: str) -> str:
    """The text a reader sees for Markdown source of the page: backslash escapes and HTML entities undone,
    and the invisible word joiners that keep autolinks from forming (U+2060) left out.

    Pages escape user text with :func:`evaluators.reports.escape.md`; tests compare what is shown.
    """
    import html
    import re

    return html.unescape(re.sub(r"\\(.)", r"\1", source)).replace("\u2060", "")


def static_rows(at: AppTest, first_column: str) -> list[list[str]]:
    """The rows of the first static table (``components.static``, an ``st.html`` element) whose first
    header is ``first_column``: each row's cells, as the reader sees them (unescaped)."""
    import html
    import re

    table = next(h.proto.body for h in at.html if f"<tr><th>{html.escape(first_column)}</th>" in h.proto.body)
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1])
    cells = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]
    return cells


def open_view(at: AppTest, key: str, view: str) -> AppTest:
    """Click the view switch ``key`` (:func:`components.layout.view_switch`) to ``view`` and run the page."""
    at.segmented_control(key=key).set_value(view).run()
    assert not at.exception, at.exception
    return at


def problem_table(at: AppTest) -> list[dict[str, str]]:
    """The rows of the input-problems table (:func:`components.problems.show_problems`) as the reader sees them:
    ``{"severity", "count", "where", "problem"}`` each (``count`` as shown, e.g. ``"500"``)."""
    from components.problems import COLUMNS

    return [dict(zip(COLUMNS, row)) for row in static_rows(at, "severity")]


def problem_line(row: dict[str, str]) -> str:
    """A row of :func:`problem_table` as the line the CLI prints (``"error: a.jsonl:3: message"``)."""
    return f"{row['severity']}: {row['where']}: {row['problem']}"
