"""The shipped examples run: the Dask example scores on a local cluster and matches the in-process report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import IN_CI, ROOT


def _needs_dask() -> None:
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("dask[distributed] is in requirements-dev.txt and must be installed under CI=true")
        pytest.skip("dask[distributed] not installed (pip install -r examples/requirements.txt)")


def test_dask_example_matches_the_in_process_report():
    _needs_dask()
    demo = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "dask_qa.py"), "--input", str(demo),
                           "--workers", "2", "--blocksize", "2KiB"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "partition(s) on 2 worker(s)" in done.stdout
    # qa_systems_demo.jsonl: EM 26 of 48 (5 + 10 + 11, see tests/unit/test_qa_compare.py)
    assert f"n=      48  EM={26 / 48:.6f}" in done.stdout
    assert "system=rag-70b" in done.stdout and f"EM={11 / 16:.6f}" in done.stdout


#: Runs the example's main() with LocalCluster wrapped so that, once the cluster is up (while the
#: example scores), the listening sockets of this process and its children are written out.
_PORTS_DRIVER = """
import json, sys, warnings
import psutil
import dask.distributed
seen = []

class Recording(dask.distributed.LocalCluster):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        me = psutil.Process()
        for proc in [me, *me.children(recursive=True)]:
            for conn in proc.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    seen.append([conn.laddr.ip, conn.laddr.port])

if __name__ == "__main__":  # worker processes are spawned: they import this file again
    import importlib.util
    spec = importlib.util.spec_from_file_location("dask_qa", sys.argv[1])
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    dask.distributed.LocalCluster = Recording
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc = example.main(["--input", sys.argv[2], "--workers", "2", "--blocksize", "2KiB"])
    print(json.dumps({"rc": rc, "listening": seen, "warnings": [str(w.message) for w in caught]}))
"""


def test_dask_example_opens_no_port_it_was_not_asked_for(tmp_path):
    """``dashboard_address=None`` made distributed's scheduler listen on its default 127.0.0.1:8787.

    Every socket listening while the example runs (scheduler, nannies, workers, the scheduler's
    web server) must be on the loopback interface and none on 8787.  Were 8787 held by someone
    else, the old code would have moved to another port with a "Port 8787 is already in use"
    warning: that warning is a failure too.
    """
    _needs_dask()
    driver = tmp_path / "driver.py"
    driver.write_text(_PORTS_DRIVER, encoding="utf-8")
    demo = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"
    done = subprocess.run([sys.executable, str(driver), str(ROOT / "examples" / "dask_qa.py"), str(demo)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["rc"] == 0
    # scheduler + its web server in this process, a nanny per worker here, each worker its own: at least 3
    assert len(found["listening"]) >= 3, found
    assert [port for _, port in found["listening"] if port == 8787] == []
    assert {ip for ip, _ in found["listening"]} == {"127.0.0.1"}
    assert not [w for w in found["warnings"] + [done.stderr] if "8787" in w], done.stderr
