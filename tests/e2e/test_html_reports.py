"""Every HTML report opened in Chromium (issue 20, point 4): coloured bars, nothing cut at 390 px, small files.

The reports are written in this process after Streamlit's plotly module is imported, as on a page:
that import makes Streamlit's placeholder theme (``#000001`` ...) plotly's default template, which
used to reach the downloaded files and draw every bar black.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, require_shared
from tests.helpers.html_reports import assert_series_coloured, page_overflow

pytestmark = pytest.mark.e2e

MB = 1024 * 1024


@pytest.fixture
def streamlit_theme():
    """Plotly's default template as a Streamlit server process has it (restored afterwards)."""
    import plotly.io as pio

    before = pio.templates.default
    import streamlit.elements.plotly_chart  # noqa: F401  (registers and selects the "streamlit" template)
    from streamlit.elements.lib.streamlit_plotly_theme import configure_streamlit_plotly_theme

    configure_streamlit_plotly_theme()
    assert pio.templates.default == "streamlit"
    yield
    pio.templates.default = before


def _cmrc_runs(path, n: int = 200) -> None:
    """``n`` CMRC 2018 dev questions answered by two systems (A: the first answer; B: its first half)."""
    data = json.loads(require_shared("qa_factcheck", "cmrc2018", "cmrc2018_dev.json").read_text(encoding="utf-8"))
    qas = [qa for doc in data["data"] for p in doc["paragraphs"] for qa in p["qas"]][:n]
    with open(path, "w", encoding="utf-8") as f:
        for system in ("system-a", "system-b"):
            for qa in qas:
                golds = [a["text"] for a in qa["answers"]]
                pred = golds[0] if system == "system-a" else golds[0][: max(1, len(golds[0]) // 2)]
                f.write(json.dumps({"system": system, "id": qa["id"], "question": qa["question"], "answers": golds,
                                    "prediction": pred}, ensure_ascii=False) + "\n")


def _open(browser, path, width: int):
    context = browser.new_context(offline=True, viewport={"width": width, "height": 900})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    pg = context.new_page()
    pg.goto(path.as_uri())
    pg.wait_for_selector("footer")
    return context, pg, requests


def _write_reports(tmp_path) -> dict:
    from evaluators.cli import main

    runs = tmp_path / "cmrc_two_systems.jsonl"
    _cmrc_runs(runs)
    out = {name: tmp_path / f"{name}.html" for name in ("comparison", "factcheck", "narrative", "memory")}
    assert main(["report", "--input", str(runs), "--out", str(out["comparison"]), "--ci-resamples", "200"]) == 0
    cfever = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")
    assert main(["report", "--input", str(cfever), "--out", str(out["factcheck"]), "--ci-resamples", "200"]) == 0
    demo = str(ROOT / "evaluators" / "demo" / "narrative")
    assert main(["narrative", "--gt", demo, "--pred", demo, "--quiet", "--format", "html",
                 "--out", str(out["narrative"])]) == 0
    assert main(["memory", "--results", str(ROOT / "evaluators" / "demo" / "memory" / "demo_results.jsonl"),
                 "--format", "html", "--out", str(out["memory"])]) == 0
    return out


@pytest.mark.realdata
def test_reports_written_beside_a_page_have_coloured_bars_fit_a_phone_and_stay_small(browser, tmp_path,
                                                                                    streamlit_theme):
    reports = _write_reports(tmp_path)
    # 200 records x 2 systems: was 4.9 MB (plotly.js inlined, every record in one open table)
    assert reports["comparison"].stat().st_size <= 1.5 * MB
    for name, path in reports.items():
        text = path.read_text(encoding="utf-8")
        assert "#000011" not in text and "<script" not in text, name
        for width in (1440, 390):
            context, pg, requests = _open(browser, path, width)
            assert_series_coloured(pg)
            assert page_overflow(pg) <= 0, f"{name} scrolls sideways at {width} px"
            if name == "comparison":
                # the systems table fits the window (it was cut at 390 px); record tables start collapsed
                wrap = pg.locator(".tablewrap").first
                assert wrap.evaluate("e => e.scrollWidth <= e.clientWidth"), f"systems table cut at {width} px"
                assert pg.locator("details:not([open])").count() >= 1
                assert pg.evaluate("() => document.documentElement.scrollHeight") < 4000
            if name == "memory":
                # the signature is a table of metric -> signature, not a JSON dump
                assert pg.locator("table.sig tr").count() >= 2 and '{"' not in pg.locator("body").inner_text()
            assert [u for u in requests if not u.startswith("file://")] == []
            context.close()
