"""The shipped examples run: the Dask example scores on a local cluster and matches the in-process report."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import IN_CI, ROOT


def test_dask_example_matches_the_in_process_report():
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("dask[distributed] is in requirements-dev.txt and must be installed under CI=true")
        pytest.skip("dask[distributed] not installed (pip install -r examples/requirements.txt)")
    demo = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "dask_qa.py"), "--input", str(demo),
                           "--workers", "2", "--blocksize", "2KiB"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "partition(s) on 2 worker(s)" in done.stdout
    # qa_systems_demo.jsonl: EM 26 of 48 (5 + 10 + 11, see tests/unit/test_qa_compare.py)
    assert f"n=      48  EM={26 / 48:.6f}" in done.stdout
    assert "system=rag-70b" in done.stdout and f"EM={11 / 16:.6f}" in done.stdout
