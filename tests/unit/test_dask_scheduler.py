"""``--scheduler``: every batch command scores its chunks on a Dask cluster and gives the in-process report.

One ``LocalCluster`` of 2 worker processes (1 thread each, no dashboard port) serves the module; each
command is run through :func:`evaluators.cli.main` twice, in this process and with ``--scheduler`` at the
cluster's address, and the two outputs are compared whole (JSON: floats within 1e-12, everything else
identical; HTML and CSV: the same text).  Chunk sizes are made small so that every worker gets several
chunks, and the scheduler's task stream shows that the chunks were scored there.  ``--scheduler local:2``
is run once from a real command line; a bad address and a missing Dask exit 2 with the reason.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from tests.conftest import IN_CI, ROOT, require_shared

DEMO = ROOT / "evaluators" / "demo"


def _needs_dask() -> None:
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("dask[distributed] is in requirements-dev.txt and must be installed under CI=true")
        pytest.skip('dask[distributed] not installed (pip install "dask[distributed]")')


#: Starts a LocalCluster of 2 processes of 1 thread (no dashboard port) in a process of its own, prints the
#: scheduler's address and keeps it until its stdin closes.
_CLUSTER = """
import sys
from distributed import Client, LocalCluster
from evaluators.parallel import local_cluster_options
with LocalCluster(**local_cluster_options(2)) as cluster, Client(cluster) as client:
    client.wait_for_workers(2)
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()
"""


@pytest.fixture(scope="module")
def cluster():
    """A local cluster of 2 processes of 1 thread, its scheduler in a process of its own (as a remote
    scheduler: the chunks are unpickled there and pickled again for the workers); yields ``(address, client)``."""
    _needs_dask()
    from distributed import Client

    proc = subprocess.Popen([sys.executable, "-c", _CLUSTER], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = proc.stdout.readline().strip()
        assert address.startswith("tcp://127.0.0.1:"), address
        with Client(address) as client:
            yield address, client
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """End a cluster process started here: its stdin closed (it closes its cluster), killed after 60 s."""
    proc.stdin.close()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


#: Keys of a report that say when it was made (the dialogue report's ``evaluation_info.timestamp``).
WHEN = {"timestamp"}


def _same(a, b, path="$") -> None:
    """``a == b`` for parsed JSON, floats within 1e-12 (``None``, strings, ints and keys identical; the
    values of :data:`WHEN` keys not compared)."""
    if isinstance(a, float) and isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12, f"{path}: {a!r} != {b!r}"
        return
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            if k not in WHEN:
                _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def _run(argv: list[str], capsys, out=None) -> str:
    """``main(argv)`` (exit 0 asserted); the file ``out`` written, else what it printed on stdout."""
    from evaluators.cli import main

    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return out.read_text(encoding="utf-8") if out is not None else captured.out


def _on_dask(argv: list[str], cluster, capsys, out=None) -> tuple[str, int]:
    """``main(argv + --scheduler ADDRESS)``: its output and how many chunks the cluster scored."""
    from distributed import get_task_stream

    address, client = cluster
    with get_task_stream(client) as stream:
        text = _run([*argv, "--scheduler", address], capsys, out)
    return text, len(stream.data)


def _compare(argv: list[str], cluster, capsys, tmp_path, *, out_name: str | None = None,
             kind: str = "json") -> int:
    """Run ``argv`` in process and on the cluster; assert the outputs equal; the number of chunks on Dask."""
    outs = []
    for k, dask in enumerate((False, True)):
        out = tmp_path / f"{k}-{out_name}" if out_name else None
        flag = "--out" if argv[0] in ("narrative", "memory", "report") else "--output-file"
        args = [*argv, *([flag, str(out)] if out else [])]
        outs.append(_on_dask(args, cluster, capsys, out) if dask else (_run(args, capsys, out), 0))
    (here, _), (there, chunks) = outs
    if kind == "json":
        _same(json.loads(here), json.loads(there))
    else:
        assert here == there
    assert here.strip()
    return chunks


# --- every batch command, on the shipped demo data -----------------------------------------------------------------

def test_qa_on_dask_equals_in_process(cluster, capsys, tmp_path, monkeypatch):
    import evaluators.qa.records as records

    monkeypatch.setattr(records, "BLOCK_BYTES", 2048)  # 48 records -> several blocks
    demo = str(DEMO / "qa" / "qa_systems_demo.jsonl")
    assert _compare(["qa", demo, "--ci-resamples", "300", "--format", "json"], cluster, capsys, tmp_path) >= 3
    # the rows rendered on the workers, sent back (no spill files there), in input order
    assert _compare(["qa", demo, "--ci-resamples", "0"], cluster, capsys, tmp_path, out_name="rows.csv",
                    kind="csv") >= 3
    assert _compare(["qa", demo, "--ci-resamples", "0"], cluster, capsys, tmp_path, out_name="report.json") >= 3


def test_compare_and_report_on_dask_equal_in_process(cluster, capsys, tmp_path, monkeypatch):
    import evaluators.qa.records as records

    monkeypatch.setattr(records, "BLOCK_BYTES", 2048)
    demo = str(DEMO / "qa" / "qa_systems_demo.jsonl")
    assert _compare(["compare", demo, "--ci-resamples", "300", "--format", "json"], cluster, capsys, tmp_path) >= 3
    assert _compare(["report", demo, "--ci-resamples", "300"], cluster, capsys, tmp_path, out_name="r.html",
                    kind="html") >= 3


def test_narrative_on_dask_equals_in_process(cluster, capsys, tmp_path, monkeypatch):
    import evaluators.narrative.batch as batch

    monkeypatch.setattr(batch, "CHUNK_PAIRS", 1)  # the two demo pairs -> one chunk each
    demo = str(DEMO / "narrative")
    assert _compare(["narrative", demo, demo, "--quiet", "--format", "json"], cluster, capsys, tmp_path,
                    out_name="n.json") == 2


def test_dialogue_on_dask_equals_in_process(cluster, capsys, tmp_path, monkeypatch):
    import evaluators.dialogue.scoring as scoring

    monkeypatch.setattr(scoring, "CHUNK_CASES", 3)
    assert _compare(["dialogue", "--cases", str(DEMO / "dialogue" / "persona_cases.json"),
                     "--pred", str(DEMO / "dialogue" / "panda-chat-large.jsonl"), "--format", "json"],
                    cluster, capsys, tmp_path) >= 2


@pytest.mark.parametrize("items, answers", [("factual_demo.json", "factual_demo_answers.json"),
                                            ("multi_turn_demo.json", "multi_turn_demo_answers.jsonl")])
def test_testsets_on_dask_equal_in_process(cluster, capsys, tmp_path, monkeypatch, items, answers):
    import evaluators.testsets.evaluate as ts

    monkeypatch.setattr(ts, "CHUNK_ITEMS", 1)
    folder = DEMO / "testsets"
    assert _compare(["testsets", str(folder / items), str(folder / answers), "--format", "json"],
                    cluster, capsys, tmp_path) >= 2


def test_memory_on_dask_equals_in_process(cluster, capsys, tmp_path, monkeypatch):
    import evaluators.memory.metrics as mm

    monkeypatch.setattr(mm, "CHUNK_QUESTIONS", 4)
    assert _compare(["memory", "--results", str(DEMO / "memory" / "demo_results.jsonl"), "--metrics",
                     "token_f1_char,rouge1,locomo_f1", "--ci-resamples", "300", "--format", "json"],
                    cluster, capsys, tmp_path, out_name="m.json") >= 2


# --- public data -------------------------------------------------------------------------------------------------

@pytest.mark.realdata
def test_public_files_on_dask_equal_in_process(cluster, capsys, tmp_path, monkeypatch):
    import evaluators.dialogue.scoring as scoring
    import evaluators.narrative.batch as batch
    import evaluators.qa.records as records

    monkeypatch.setattr(records, "BLOCK_BYTES", 64 << 10)
    qa = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")  # 600 fact-check records
    assert _compare(["qa", str(qa), "--ci-resamples", "300", "--format", "json"], cluster, capsys, tmp_path) >= 2
    monkeypatch.setattr(batch, "CHUNK_PAIRS", 1)
    gt, pred = require_shared("fairytales", "gt_v3"), require_shared("fairytales", "predictions")
    assert _compare(["narrative", str(gt), str(pred), "--quiet", "--format", "json"], cluster, capsys, tmp_path,
                    out_name="n.json") >= 2
    monkeypatch.setattr(scoring, "CHUNK_CASES", 7)
    folder = require_shared("persona_chat")
    assert _compare(["dialogue", "--cases", str(folder / "peppa_structured_test_cases.json"),
                     "--pred", str(folder / "peppa_structured_evaluation_202510101638_report.json"),
                     "--format", "json"], cluster, capsys, tmp_path) >= 2


# --- the command line ----------------------------------------------------------------------------------------------

def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluators", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**os.environ, **(env or {})})


def test_scheduler_local_2_from_the_command_line():
    """``--scheduler local:2`` starts a cluster of 2 processes, scores there, closes it: the same JSON."""
    _needs_dask()
    demo = str(DEMO / "qa" / "qa_systems_demo.jsonl")
    here = _cli("qa", demo, "--ci-resamples", "200", "--format", "json")
    there = _cli("qa", demo, "--ci-resamples", "200", "--format", "json", "--scheduler", "local:2")
    assert here.returncode == 0 and there.returncode == 0, there.stderr
    assert here.stdout == there.stdout
    assert "8787" not in there.stderr


def test_a_bad_scheduler_exits_2_naming_it(capsys):
    _needs_dask()
    from evaluators.cli import main

    demo = str(DEMO / "qa" / "qa_systems_demo.jsonl")
    assert main(["qa", demo, "--scheduler", "local:zero"]) == 2
    assert "--scheduler local:zero" in capsys.readouterr().err
    assert main(["qa", demo, "--scheduler", "nowhere"]) == 2
    assert "--scheduler nowhere: not a scheduler address" in capsys.readouterr().err
    # nothing listens on port 1: refused until Dask's connect timeout (shortened here), then exit 2
    done = _cli("qa", demo, "--scheduler", "tcp://127.0.0.1:1",
                env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"})
    assert done.returncode == 2, done.stderr
    assert "no Dask scheduler answered at tcp://127.0.0.1:1" in done.stderr and "Traceback" not in done.stderr


def test_without_dask_the_scheduler_option_says_what_to_install(monkeypatch, capsys):
    from evaluators.cli import main

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    assert main(["qa", str(DEMO / "qa" / "qa_systems_demo.jsonl"), "--scheduler", "local:2"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "dask[distributed]"' in err and "requirements-optional.txt" in err


def test_parse_scheduler():
    from evaluators.parallel import SchedulerError, parse_scheduler

    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("local")[0] == "local" and parse_scheduler("local")[1] >= 1
    assert parse_scheduler("10.1.2.3:8786") == ("url", "tcp://10.1.2.3:8786")
    assert parse_scheduler("tls://sched.example:8786") == ("url", "tls://sched.example:8786")
    for bad in ("", "local:0", "local:", "tcp://host", "tcp://"):
        with pytest.raises(SchedulerError):
            parse_scheduler(bad)


def test_an_inherited_value_that_came_pickled_is_pickled_again_with_it():
    """A Dask scheduler in a process of its own unpickles the chunks and pickles them again for its workers:
    an :class:`~evaluators.parallel.Inherited` that arrived with its value must travel on with it (were it
    sent as a key, the worker would find nothing under it and drop its connection)."""
    import pickle

    from evaluators.parallel import _inherited

    arrived = _inherited(123456789, {"scorer": 1})  # as unpickled in the scheduler: with its value, no registry
    again = pickle.loads(pickle.dumps(arrived))
    assert again() == {"scorer": 1} and again.carried


def test_a_shard_scored_on_dask_is_the_shard_scored_in_process(cluster, capsys, tmp_path, monkeypatch):
    """``testsets --shard`` and ``memory --shard`` hand their chunks to the same backend: the shard files are equal."""
    import evaluators.memory.metrics as mm
    import evaluators.testsets.evaluate as ts

    monkeypatch.setattr(ts, "CHUNK_ITEMS", 1)
    folder = DEMO / "testsets"
    # the equal shard files are the claim; >= 1 chunk says the cluster scored (CI once counted 1 of 2 under load)
    assert _compare(["testsets", str(folder / "factual_demo.json"), str(folder / "factual_demo_answers.json"),
                     "--shard", "1/2"], cluster, capsys, tmp_path, out_name="s.json") >= 1
    monkeypatch.setattr(mm, "CHUNK_QUESTIONS", 2)
    assert _compare(["memory", "--results", str(DEMO / "memory" / "demo_results.jsonl"), "--metrics",
                     "token_f1_char,rouge1", "--shard", "2/2"], cluster, capsys, tmp_path, out_name="s.json") >= 1


def _square_all(chunk: list[int]) -> list[int]:
    return [x * x for x in chunk]


def _fail_on_three(chunk: list[int]) -> list[int]:
    if 3 in chunk:
        raise ValueError("three")
    return chunk


def test_imap_chunks_on_dask_keeps_input_order_and_raises_a_workers_error(cluster):
    from evaluators.parallel import chunked, forks_workers, imap_chunks, local_pool, map_ordered, open_scheduler

    address, client = cluster
    with open_scheduler(address) as dask:
        assert dask.workers == 2 and not forks_workers() and not local_pool()
        out = [r for _, res in imap_chunks(_square_all, chunked(range(50), 4), dask.workers) for r in res]
        assert out == [x * x for x in range(50)]
        assert list(map_ordered(_square_all, range(9), dask.workers, chunk_size=2)) == [x * x for x in range(9)]
        with pytest.raises(ValueError, match="three"):
            for _ in imap_chunks(_fail_on_three, chunked(range(10), 2), dask.workers):
                pass
    assert local_pool()  # closed: back to the process pool


# ------------------------------------------------------------------------------------------ every worker gone

class _Pending:
    """A Dask future that is never done (``result(timeout)`` raises ``TimeoutError``) until ``done_after`` waits."""

    def __init__(self, done_after: int | None = None, value=None):
        self.waits, self.done_after, self.value = 0, done_after, value

    def result(self, timeout=None):
        self.waits += 1
        if self.done_after is not None and self.waits > self.done_after:
            return self.value
        raise TimeoutError


class _Cluster:
    """A client whose ``nthreads()`` answers from a script: a worker count per call (the last one repeated), or an
    exception (a scheduler that does not answer)."""

    def __init__(self, *answers):
        self.answers, self.calls = list(answers), 0

    def nthreads(self):
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, Exception):
            raise answer
        return {f"tcp://w{k}": 1 for k in range(answer)}


def test_await_result_gives_up_only_after_the_cluster_has_had_no_worker_for_the_grace():
    # with a fake client and fake futures (the timing logic alone; the real cluster is the test below)
    from evaluators.parallel import SchedulerError, await_result

    # workers there: a long chunk is waited for (7 waits), whatever the grace
    assert await_result(_Cluster(2), _Pending(done_after=7, value="ok"), "x", grace=0.0, poll=0.001) == "ok"
    # no worker from the start: stopped once `grace` has passed, the message naming the scheduler and the grace
    with pytest.raises(SchedulerError, match=r"--scheduler tcp://h:1: the Dask cluster has had no worker for 0.05 s"):
        await_result(_Cluster(0), _Pending(), "tcp://h:1", grace=0.05, poll=0.001)
    # a scheduler that no longer answers counts as no worker
    with pytest.raises(SchedulerError, match="no worker"):
        await_result(_Cluster(OSError("closed")), _Pending(), "x", grace=0.02, poll=0.001)
    # every worker gone for a while, then one back within the grace: the result still comes
    cluster = _Cluster(0, 0, 0, 1)
    assert await_result(cluster, _Pending(done_after=20, value=5), "x", grace=30.0, poll=0.001) == 5
    assert cluster.calls == 20


#: A scheduler without workers in a process of its own; prints its address, keeps it until its stdin closes.
_SCHEDULER = """
import sys
from distributed import LocalCluster
from evaluators.parallel import local_cluster_options
with LocalCluster(**{**local_cluster_options(1), "n_workers": 0}) as cluster:
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()
"""


def test_a_run_whose_every_worker_is_killed_exits_2_with_the_reason(capsys, tmp_path, monkeypatch):
    """A scheduler and one worker process without a nanny (nothing restarts it); the client is opened, the worker
    killed (SIGKILL), then ``qa --shard 1/1 --scheduler`` sends its chunks there: no traceback, no endless wait,
    exit 2 naming what happened, no shard file."""
    _needs_dask()
    import time

    import evaluators.parallel as parallel
    from evaluators.cli import main

    sched = subprocess.Popen([sys.executable, "-c", _SCHEDULER], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    worker = None
    try:
        address = sched.stdout.readline().strip()
        assert address.startswith("tcp://127.0.0.1:"), address
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                                   "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"], cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dask = parallel.open_scheduler(address)  # waits for the worker
        assert len(dask.client.nthreads()) == 1
        worker.kill()
        worker.wait(timeout=30)
        deadline = time.monotonic() + 60
        while dask.client.nthreads() and time.monotonic() < deadline:  # the scheduler sees it gone
            time.sleep(0.2)
        assert dask.client.nthreads() == {}
        monkeypatch.setattr(parallel, "open_scheduler", lambda spec: dask)  # the command gets this client
        monkeypatch.setattr(parallel, "connect_timeout", lambda: 2.0)  # the grace, shortened for the test
        out = tmp_path / "s.json"
        capsys.readouterr()
        started = time.monotonic()
        code = main(["qa", str(DEMO / "qa" / "qa_demo.jsonl"), "--shard", "1/1", "--output-file", str(out),
                     "--scheduler", address])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and not out.exists()
        assert f"error: --scheduler {address}: the Dask cluster has had no worker for 2 s" in err
        assert time.monotonic() - started < 30  # 2 s of grace and a few polls, not for ever
        assert parallel._DASK is None  # closed by the command
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
            worker.wait()
        _stop(sched)
