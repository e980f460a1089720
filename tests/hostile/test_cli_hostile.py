"""Every CLI command on every file of the hostile corpus: no crash, no hang, < 500 MB, located errors,
good records still scored (the acceptance of the hardening issue).

Each case runs the CLI (``evaluators.cli.main``, as ``python -m evaluators``) in its own process,
which writes its peak resident memory (``VmHWM`` of /proc/self/status, the peak of this process
image; ``ru_maxrss`` would count the forking test runner's memory) to a side file when it ends.
See tests/hostile/make_corpus.py for the cases.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.hostile.conftest import MANIFEST

TIMEOUT_S = 120
MAX_RSS_KIB = 500 * 1024
# Runs the CLI like ``python -m evaluators`` and writes its peak RSS (KiB) to argv[1] when it ends.
WRAPPER = """
import sys
side, sys.argv = sys.argv[1], ["evaluators", *sys.argv[2:]]
try:
    from evaluators.cli import main
    code = main()
finally:
    with open("/proc/self/status") as f, open(side, "w") as out:
        out.write(next(line.split()[1] for line in f if line.startswith("VmHWM:")))
sys.exit(code)
"""


def run_case(case: dict, corpus: Path, out_dir: Path) -> dict:
    """Run one case; returns exit code, stdout, stderr, peak RSS (KiB) and the output file's JSON."""
    args = [a.replace("{c}", str(corpus)) for a in case["args"]]
    out_file = out_dir / (case["name"].replace("/", "__") + ".json")
    cmd = args[0]
    if cmd == "qa":
        args += ["--output-file", str(out_file)]
    elif cmd in ("narrative", "memory"):
        args += ["--out", str(out_file)]
    elif cmd == "testsets":
        args += ["--output-file", str(out_file)]
    elif cmd == "judge":
        args += ["--out", str(out_file)]
    side = out_dir / (case["name"].replace("/", "__") + ".rss")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-c", WRAPPER, str(side), *args], cwd=ROOT, stdout=out, stderr=err,
                                env=dict(os.environ, PYTHONPATH=str(ROOT), EVALBOARD_JUDGE_BASE_URL="",
                                         EVALBOARD_JUDGE_MODEL=""))
        try:
            proc.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    rss = int(side.read_text()) if side.exists() else None
    data = None
    if cmd == "dialogue":
        try:
            data = json.loads(stdout)
        except ValueError:
            data = None
    elif out_file.exists():
        data = json.loads(out_file.read_text(encoding="utf-8"))
    return {"rc": proc.returncode, "stdout": stdout, "stderr": stderr, "rss_kib": rss, "data": data}


def scored(task: str, data: dict | None) -> int | None:
    """Good records scored, from a command's JSON output."""
    if data is None:
        return None
    if task == "qa":
        return data["overall"]["n"]
    if task == "narrative":  # a batch report, or one document's report when one pair was scored
        return sum(1 for d in data["documents"] if d.get("error") is None) if "documents" in data else 1
    if task == "testsets":
        return data["overall"]["n_items"] if "overall" in data else None
    if task == "dialogue":
        return sum(m["n_scored"] for m in data["by_model"])
    if task == "memory":
        return data["metrics"]["overall"]["count"]
    if task == "judge":
        return data["n_labels"]
    raise ValueError(task)


@pytest.fixture(scope="module")
def outcomes(corpus_dir, tmp_path_factory):
    """Every case run once (two at a time: this machine has two cores)."""
    out_dir = tmp_path_factory.mktemp("hostile_out")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda case: (case["name"], run_case(case, corpus_dir, out_dir)), MANIFEST)
        return dict(results)


def test_the_corpus_has_at_least_80_files_and_every_case_ran(outcomes):
    files = [p for p in (Path(__file__).parent / "corpus").rglob("*") if p.is_file()]
    assert len(files) >= 80
    assert len(outcomes) == len(MANIFEST) >= 80


@pytest.mark.parametrize("case", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_case(case, outcomes):
    o = outcomes[case["name"]]
    where = f"{case['name']}: rc={o['rc']}\nstderr: {o['stderr'][-2000:]}"
    assert o["rc"] != -9, f"hang (killed after {TIMEOUT_S} s) " + where
    assert "Traceback" not in o["stderr"], where
    assert o["rc"] in case["exit"], where
    assert o["rss_kib"] is not None and o["rss_kib"] < MAX_RSS_KIB, f"peak memory {o['rss_kib']} KiB; " + where
    if case["names"] and (o["rc"] != 0 or case["located"]):
        assert case["names"] in o["stderr"] or case["names"] in json.dumps(o["data"] or {}, ensure_ascii=False), \
            "the error does not name the file; " + where
    if case["located"]:
        text = o["stderr"] + json.dumps((o["data"] or {}).get("issues", []), ensure_ascii=False)
        located = re.search(re.escape(case["names"]) + r"[^\s\"]*(:\d+|\s+at\s+\S+|\"line\": \d+|\"path\": \")", text)
        assert located, "no line number or JSON path for the problem; " + where
    if o["rc"] == 0 and case["scored"] is not None:
        assert scored(case["task"], o["data"]) == case["scored"], where


def test_memory_with_a_20_mb_prediction_peaks_within_3x_its_input_plus_200_mb(outcomes, corpus_dir):
    """Issue 20.10: the memory CLI on the demo's results plus one 20 MB prediction (was 470-590 MB)."""
    o = outcomes["memory/huge_line"]
    size = (corpus_dir / "memory" / "huge_line.jsonl").stat().st_size
    assert o["rc"] == 0 and scored("memory", o["data"]) == 26
    assert o["rss_kib"] * 1024 <= 3 * size + 200 * 2 ** 20, (o["rss_kib"] // 1024, size // 2 ** 20)
