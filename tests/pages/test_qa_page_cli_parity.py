"""The QA page's JSON download equals ``python -m evaluators qa --output-file x.json`` for the same input.

Both call :func:`evaluators.qa.run.run_qa` and write the report with the same writer; the CLI
renders rows while scoring (a spool), the page writes them from the finished report, and
the bytes are the same.  Real-data cases read ../shared/data/qa_factcheck (skip without it).
"""

from __future__ import annotations

import json
import shutil

import pytest

from evaluators.cli import main
from evaluators.demo import demo_path
from tests.conftest import require_shared
from tests.pages.helpers import QA_PAGE, run_page


def _cli_json(folder, name: str, monkeypatch, *extra: str) -> bytes:
    monkeypatch.chdir(folder)  # the report names its input as given: a bare name, as an upload's
    assert main(["qa", "--input", name, "--output-file", "cli_report.json", *extra]) == 0
    return (folder / "cli_report.json").read_bytes()


def test_demo_download_equals_the_cli_json(deferred_downloads, tmp_path, monkeypatch):
    shutil.copy(demo_path("qa", "factcheck_demo.jsonl"), tmp_path / "factcheck_demo.jsonl")
    cli = _cli_json(tmp_path, "factcheck_demo.jsonl", monkeypatch)
    run_page(QA_PAGE)  # the fact-check demo is the default
    page = deferred_downloads["factcheck_demo_report.json"]()
    assert page == cli
    report = json.loads(cli)
    assert report["n_records"] == 17 and report["overall"]["exact_match"] == 0.625  # 10 of 16 scored


@pytest.mark.parametrize(("folder", "name"), [("cfever_slice", "dumb_dev_pred.jsonl"),  # fact-check, Chinese
                                              ("hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")])  # 3 systems
def test_real_upload_download_equals_the_cli_json(deferred_downloads, tmp_path, monkeypatch, folder, name):
    src = require_shared("qa_factcheck", folder, name)
    shutil.copy(src, tmp_path / name)
    cli = _cli_json(tmp_path, name, monkeypatch)
    at = run_page(QA_PAGE, source="upload")
    at.file_uploader(key="qa_upload").upload(name, src.read_bytes()).run()
    assert not at.exception, at.exception
    page = deferred_downloads[f"{name.rsplit('.', 1)[0]}_report.json"]()
    assert page == cli
    report = json.loads(cli)
    assert report["file"] == name and report["n_records"] == len(report["records"]) > 0
