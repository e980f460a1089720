"""Issue 27: the toy task's page (tests/helpers/toy_page.py, the shared components alone) shows the run, and
each of its downloads is byte for byte the CLI's file for the same inputs and format.

Values as in tests/unit/test_task_protocol.py: system A 2/4 = 0.5, system B 3/4 = 0.75 on the demo.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from evaluators.cli import main
from tests.conftest import ROOT
from tests.helpers.toy_task import DEMO_GT, DEMO_PRED
from tests.pages.helpers import problem_table, run_page

TOY_PAGE = str(ROOT / "tests" / "helpers" / "toy_page.py")
pytestmark = pytest.mark.usefixtures("isolated")


def test_toy_page_shows_the_summary_problems_and_review_button():
    at = run_page(TOY_PAGE, source="demo")
    summary = at.dataframe[0].value
    overall = summary[summary["value"] == "all"].set_index("system")["mean"].to_dict()
    assert overall == {"A": 0.5, "B": 0.75}
    assert len(at.dataframe[-1].value) == 8                                     # every record of both systems
    (problem,) = problem_table(at)  # components.problems.show_problems
    assert problem["where"] == "toy_gt.jsonl:5:1" and problem["problem"].startswith("invalid JSON")
    assert any("Review these records" in b.label for b in at.button)


@pytest.mark.parametrize("fmt, file_name", [("json", "toylabel.json"), ("csv", "toylabel.csv"), ("md", "toylabel.md")])
def test_toy_page_download_equals_the_cli_file(tmp_path, deferred_downloads, fmt, file_name):
    run_page(TOY_PAGE, source="demo")
    page_bytes = deferred_downloads[file_name]()
    (tmp_path / "toy_gt.jsonl").write_bytes(DEMO_GT)
    (tmp_path / "toy_pred.jsonl").write_bytes(DEMO_PRED)
    out = tmp_path / f"cli.{fmt}"
    with contextlib.redirect_stderr(io.StringIO()):
        code = main(["toylabel", str(tmp_path / "toy_gt.jsonl"), str(tmp_path / "toy_pred.jsonl"), "--format", fmt,
                     "--output-file", str(out)])
    assert code == 0
    page = page_bytes.encode("utf-8") if isinstance(page_bytes, str) else page_bytes
    cli = out.read_bytes()
    # the page's CSV starts with a UTF-8 byte-order mark (README: every page's CSV), the CLI's does not
    assert page == (b"\xef\xbb\xbf" + cli if fmt == "csv" else cli)
