"""*Save this run* (issue 28): a page's scored run goes to the run registry as ``--log`` would log it, one run per
system, and the registry's summary equals what the page scored.

Toy task demo (tests/helpers/toy_task.py): system A 2/4 = 0.5, system B 3/4 = 0.75 exact match.
QA demo page: each system's logged exact match equals the page's QA report for that system.
"""

from __future__ import annotations

import pytest

from evaluators.runs import RunStore
from tests.conftest import ROOT
from tests.pages.helpers import QA_PAGE, run_page

TOY_PAGE = str(ROOT / "tests" / "helpers" / "toy_page.py")
pytestmark = pytest.mark.usefixtures("isolated")


@pytest.fixture
def registry(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'registry.sqlite'}"
    monkeypatch.setenv("EVALBOARD_DATABASE_URL", url)
    return url


def _overall(record, metric: str) -> dict[str, float]:
    return {r["system"]: r["mean"] for r in record.summary if r["metric"] == metric and r["slice"] == ""}


def test_toy_page_saves_one_run_per_system(registry):
    at = run_page(TOY_PAGE, source="demo")
    at.text_input(key="task_toylabel_save_name").set_value("nightly")
    at.button(key="task_toylabel_save_button").click().run()
    assert not at.exception, at.exception
    assert [s.value for s in at.success] == ["Saved: nightly/A, nightly/B"]
    store = RunStore(registry)
    runs = {r.name: r for r in store.runs()}
    assert set(runs) == {"nightly/A", "nightly/B"}
    assert _overall(runs["nightly/A"], "exact_match") == {"A": 0.5}
    assert _overall(runs["nightly/B"], "exact_match") == {"B": 0.75}
    at.button(key="task_toylabel_save_button").click().run()          # the same name again: refused, not raised
    assert any("already logged" in e.value for e in at.error)
    assert len(store.runs()) == 2


def test_qa_page_saves_its_systems(registry):
    at = run_page(QA_PAGE, source="demo")
    at.button(key="qa_save_button").click().run()
    assert not at.exception, at.exception
    records = RunStore(registry).runs()
    assert records and all(r.task == "qa" for r in records)
    from evaluators.demo import demo_path
    from evaluators.qa.run import QAInput, run_qa
    from evaluators.tasks.builtin import qa_run_result

    shown = [s.value for s in at.success][0]
    expected = qa_run_result(run_qa(QAInput(demo_path("qa", records[0].dataset).read_bytes(), name=records[0].dataset)))
    means = {r.system: r.mean for r in expected.summary(n_resamples=0) if r.metric == "exact_match" and r.slice == ""}
    logged = {s: m for rec in records for s, m in _overall(rec, "exact_match").items()}
    assert logged == pytest.approx(means) and shown.startswith("Saved: ")
    # the same dataset and values as `qa FILE --log` of the demo file, and re-scorable like it
    import contextlib
    import io

    from evaluators.cli import main
    from evaluators.runs.rescore import on_current_gt

    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(["qa", str(demo_path("qa", records[0].dataset)), "--log", "--run-name", "cli", "--db",
                     registry]) == 0
    store = RunStore(registry)
    by_name = {r.name: r for r in store.runs()}
    page_run, cli_run = records[0], by_name["cli"]          # one system: the file (the CLI names it by its path)
    assert cli_run.dataset_digest == page_run.dataset_digest
    assert store.load("cli").items.values == store.load(page_run.name).items.values
    rescored, version = on_current_gt(store, page_run.name)
    assert version == 0 and rescored.items.values == store.load(page_run.name).items.values


@pytest.mark.parametrize("page, state, key, task", [
    ("3_Test_Sets.py", {}, "ts_save_button", "testsets"),
    ("4_Persona_Dialogue.py", {}, "dialogue_save_button", "dialogue"),
    ("5_Long_Memory.py", {}, "mem_save_button", "memory"),
    ("1_Narrative.py", {"nar_view": "downloads"}, "nar_save_button", "narrative"),
], ids=["testsets", "dialogue", "memory", "narrative"])
def test_every_page_saves_its_run(registry, page, state, key, task):
    """Each built-in page's *Save this run* logs the page's run: one run per system, the task's name, every row of
    the page's run result (the same count as the task's adapter gives on the page's report)."""
    at = run_page(str(ROOT / "pages" / page), source="demo", **state)
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    assert [s.value.startswith("Saved: ") for s in at.success] == [True]
    records = RunStore(registry).runs()
    assert records and {r.task for r in records} == {task}
    assert all(r.n_items > 0 and r.summary for r in records)
    assert sum(len(r.systems) for r in records) == len(records)                 # one run per system
