"""components/demo_cache.py: the demo results shipped with the package equal what the engine computes
now, pages take them instead of scoring the demo, and a stale or damaged snapshot is never used."""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings
from collections.abc import Mapping, Sequence

import pytest

import evaluators.dialogue as dialogue
import evaluators.dialogue.scoring as scoring
from components import demo_cache
from components.cache import results
from tests.pages.helpers import DIALOGUE_PAGE, page_app

REGENERATE = "python -m components.demo_cache --write"


def canonical(value):
    """``value`` as nested tuples of plain values: every dataclass field (those left out of ``==`` too),
    mappings and sets in a fixed order, any sequence as its items (a lazy sequence such as
    :class:`evaluators.narrative.alignment.EventLabels` pickles as the tuple it equals), floats by
    ``repr`` (NaN equals NaN)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__,
                tuple((f.name, canonical(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted(((canonical(k), canonical(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted((canonical(v) for v in value), key=repr)))
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Sequence):
        return ("sequence", tuple(canonical(v) for v in value))
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    if hasattr(value, "__dict__") and not callable(value):
        return (type(value).__qualname__, canonical(vars(value)))
    return value


@pytest.fixture
def fresh_snapshot():
    """The shipped snapshot read again by the test (and forgotten after it)."""
    demo_cache.forget()
    yield
    demo_cache.forget()
    results().clear()


def test_the_shipped_snapshot_is_current():
    code, _, libraries = demo_cache.read_snapshot()["fingerprint"].partition("|")
    assert code == demo_cache.code_fingerprint(), (
        f"evaluators/ or components/*.py changed since {demo_cache.SNAPSHOT.name} was written: the demo is "
        f"computed on every fresh server until you run `{REGENERATE}` (and commit the file)")
    installed = ",".join(f"{k}={v}" for k, v in demo_cache.library_versions().items())
    if libraries != installed:  # another environment (the values are compared with its results below)
        warnings.warn(f"{demo_cache.SNAPSHOT.name} was written with {libraries}; installed here: {installed}. "
                      "This environment scores the demo instead of using it.", stacklevel=1)


def test_every_shipped_result_equals_a_fresh_computation_of_the_engine():
    shipped = demo_cache.entries(demo_cache.read_snapshot())
    fresh = demo_cache.build()  # every page run on its demo, nothing shipped used
    # the persona and long-memory demos, whose scoring loads jieba and NLTK, are in it
    assert {"dialogue-eval", "mem-scores", "mem-parity", "narrative", "testsets"} <= {ns for ns, _ in shipped}
    # the paired comparisons of the views opened after the first screen (components.demo_cache.PAGE_VIEWS)
    assert {"dialogue-pair", "mem-other", "mem-sbs", "mem-pair"} <= {ns for ns, _ in shipped}
    assert set(shipped) == set(fresh), f"run `{REGENERATE}`"
    for slot, value in fresh.items():
        assert shipped[slot] == value, f"{slot[0]}: shipped result differs from the engine's; run `{REGENERATE}`"
        assert canonical(shipped[slot]) == canonical(value), slot[0]


def test_the_persona_page_takes_the_shipped_evaluation_instead_of_scoring(monkeypatch, fresh_snapshot):
    results().clear()
    monkeypatch.delenv(demo_cache.SWITCH, raising=False)
    computed = page_app(DIALOGUE_PAGE, timeout=180, dialogue_view="compare")  # the paired comparison's view
    monkeypatch.setenv(demo_cache.SWITCH, "0")
    computed.run()  # scored by the engine
    assert not computed.exception
    expected = [(m.label, m.value) for m in computed.metric]

    results().clear()
    monkeypatch.delenv(demo_cache.SWITCH)

    def must_not_run(*args, **kwargs):
        raise AssertionError("the demo was scored although the package ships its evaluation")

    monkeypatch.setattr(dialogue, "run_dialogue", must_not_run)
    monkeypatch.setattr(scoring, "compare_two_models", must_not_run)  # the paired comparison is shipped too
    at = page_app(DIALOGUE_PAGE, timeout=180, dialogue_view="compare")
    at.run()
    assert not at.exception
    assert [(m.label, m.value) for m in at.metric] == expected
    # the two demo models' combined scores and their paired comparison (view "Model comparison")
    assert [label for label, _ in expected[:3]] == [
        "panda\\-chat\\-large · combined", "panda\\-chat\\-small · combined", "combined score delta · 差值"]


def test_a_stale_snapshot_is_not_used(monkeypatch, fresh_snapshot):
    results().clear()
    monkeypatch.delenv(demo_cache.SWITCH, raising=False)
    monkeypatch.setattr(demo_cache, "fingerprint", lambda: "0" * 32)  # the code changed since it was written
    calls = []
    original = dialogue.run_dialogue
    monkeypatch.setattr(dialogue, "run_dialogue", lambda *a, **k: calls.append(1) or original(*a, **k))
    at = page_app(DIALOGUE_PAGE, timeout=180)
    at.run()
    assert not at.exception and calls == [1]
    assert demo_cache._namespace("dialogue-eval") == {}  # nothing of the stale snapshot is answered


def test_switch_off_means_nothing_shipped_is_used(monkeypatch, fresh_snapshot):
    key = next(iter(pickle.loads(demo_cache.read_snapshot()["namespaces"]["testsets"])))
    monkeypatch.delenv(demo_cache.SWITCH, raising=False)
    assert demo_cache.shipped("testsets", key)[0] is True
    monkeypatch.setenv(demo_cache.SWITCH, "0")
    assert demo_cache.shipped("testsets", key) == (False, None)
    # a namespace that is not shipped, and a key of an upload, are never answered
    monkeypatch.delenv(demo_cache.SWITCH)
    assert demo_cache.shipped("qa", key) == (False, None)
    assert demo_cache.shipped("testsets", ("testsets", "upload.json:0123", "answers.json:4567")) == (False, None)


def test_snapshot_reads_are_capped_and_checked(tmp_path, monkeypatch):
    big = tmp_path / "big.pickle"
    big.write_bytes(b"\x00" * (demo_cache.MAX_BYTES + 1))
    with pytest.raises(ValueError, match="larger than"):
        demo_cache.read_snapshot(big)
    other = tmp_path / "other.pickle"
    other.write_bytes(pickle.dumps({"fingerprint": "x"}))  # no namespaces
    with pytest.raises(ValueError, match="not a demo snapshot"):
        demo_cache.read_snapshot(other)
    # a damaged file is no snapshot: the demo is computed
    monkeypatch.setattr(demo_cache, "SNAPSHOT", tmp_path / "damaged.pickle")
    (tmp_path / "damaged.pickle").write_bytes(b"not a pickle")
    demo_cache.forget()
    try:
        assert demo_cache.shipped("testsets", ("testsets", "demo", "single")) == (False, None)
    finally:
        demo_cache.forget()


def test_the_fingerprint_follows_engine_files_components_and_library_versions(tmp_path, monkeypatch):
    (tmp_path / "evaluators" / "demo").mkdir(parents=True)
    (tmp_path / "components").mkdir()
    (tmp_path / "evaluators" / "run.py").write_text("A = 1\n")
    (tmp_path / "evaluators" / "demo" / "gt.json").write_text("{}")
    (tmp_path / "components" / "views.py").write_text("B = 1\n")
    monkeypatch.setattr(demo_cache, "ROOT", tmp_path)
    first = demo_cache.fingerprint()
    assert first == demo_cache.fingerprint() and len(demo_cache.code_fingerprint()) == 32
    seen = {first}
    (tmp_path / "evaluators" / "demo" / "gt.json").write_text('{"x": 1}')  # demo data edited
    seen.add(demo_cache.fingerprint())
    (tmp_path / "components" / "views.py").write_text("B = 2\n")  # components code edited
    seen.add(demo_cache.fingerprint())
    (tmp_path / "evaluators" / "new.py").write_text("")  # a file added
    seen.add(demo_cache.fingerprint())
    monkeypatch.setattr(demo_cache, "LIBRARIES", (*demo_cache.LIBRARIES, "cachetools"))  # another library
    seen.add(demo_cache.fingerprint())
    assert len(seen) == 5
    # compiled files and other components files are not part of it
    (tmp_path / "evaluators" / "__pycache__").mkdir()
    (tmp_path / "evaluators" / "__pycache__" / "run.cpython-311.pyc").write_bytes(b"\x00")
    (tmp_path / "components" / "notes.txt").write_text("x")
    assert demo_cache.fingerprint() in seen
