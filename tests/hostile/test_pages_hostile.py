"""Every hostile file uploaded into its page (streamlit AppTest): no exception, the problem shown with
the file's name when nothing could be used, and the good records still scored."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.hostile.conftest import CORPUS, MANIFEST
from tests.pages.helpers import (
    DIALOGUE_PAGE, JUDGELAB_PAGE, MEMORY_PAGE, NARRATIVE_PAGE, QA_PAGE, TESTSETS_PAGE, page_app, shown,
)

PAGES = {"qa": QA_PAGE, "narrative": NARRATIVE_PAGE, "testsets": TESTSETS_PAGE, "dialogue": DIALOGUE_PAGE,
         "memory": MEMORY_PAGE, "judgelab": JUDGELAB_PAGE}
CASES = [c for c in MANIFEST if c["page"]]


def page_text(at) -> str:
    """Everything a reader can see: Markdown (unescaped), alerts, captions, plain text, HTML, labels."""
    parts = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "text", "code"):
        parts += [shown(str(e.value)) for e in at.get(kind)]
    parts += [h.proto.body for h in at.get("html")]
    parts += [shown(e.label) for e in at.expander]
    parts += [str(m.label) + " " + str(m.value) for m in at.metric]
    for df in at.get("arrow_data_frame"):
        try:
            parts.append(df.value.to_string())
        except Exception:  # noqa: BLE001 - a styled table: its text is in the other parts
            pass
    return "\n".join(parts)


def metric(at, prefix: str) -> str | None:
    return next((m.value for m in at.metric if shown(m.label).startswith(prefix)), None)


def shown_count(page: str, at) -> int | None:
    """Good records shown, read from the page's cards."""
    if page == "qa":
        value = metric(at, "Scored")
        return int(value.split("/")[0]) if value else None
    if page == "narrative":
        value = metric(at, "Documents scored")
        return int(value) if value else None
    if page == "testsets":
        value = metric(at, "Scored items")
        return int(value.split("/")[1]) if value else None
    if page == "memory":
        value = metric(at, "Questions")
        return int(value) if value else None
    if page == "judgelab":
        value = metric(at, "Labelled items")
        return int(value) if value else None
    return None


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_page_upload(case, monkeypatch, tmp_path):
    monkeypatch.setenv("EVALBOARD_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    for var in ("EVALBOARD_JUDGE_BASE_URL", "EVALBOARD_JUDGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    page = case["page"]["page"]
    at = page_app(PAGES[page], source="upload")
    at.run()
    for key, rel in case["page"]["uploads"].items():
        files = [(Path(r).name, (CORPUS / r).read_bytes(), "application/octet-stream")
                 for r in (rel if isinstance(rel, list) else [rel])]
        at.file_uploader(key=key).set_value(files if isinstance(rel, list) else files[0])
    at.run()
    assert not at.exception, (case["name"], [e.value for e in at.exception])
    text = page_text(at)
    for payload in ("<script", "<img"):
        for html in at.get("html"):
            assert payload not in html.proto.body, case["name"]
    if case["exit"] == [2] and case["names"]:
        # nothing usable: the page says so and names the file (upload names carry no folder)
        name = case["names"]
        assert name in text or re.escape(name) in text, (case["name"], text[:3000])
    if case["exit"] == [0] and case["scored"] is not None and page in ("qa", "narrative", "testsets", "memory",
                                                                                     "judgelab"):
        assert shown_count(page, at) == case["scored"], (case["name"], text[:3000])
