"""components/demo_cache.py: the demo results shipped with the package (JSON, no pickle) equal what the engine
computes now, every demo page takes them instead of scoring the demo, and a result whose classes changed, a
damaged file or a switched-off snapshot is never used."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import evaluators.dialogue as dialogue
import evaluators.dialogue.scoring as scoring
from components import demo_cache, demo_snapshot
from components.cache import results
from evaluators.io.typed_json import CodecError, decode
from tests.conftest import ROOT
from tests.pages.helpers import DIALOGUE_PAGE, page_app

REGENERATE = demo_cache.WRITE_COMMAND


@pytest.fixture
def fresh_snapshot(monkeypatch):
    """The snapshot read again by the test (and forgotten after it), with no results kept before or after."""
    monkeypatch.delenv(demo_cache.SWITCH, raising=False)
    demo_cache.forget()
    results().clear()
    yield
    demo_cache.forget()
    results().clear()


def _shipped_entries() -> dict:
    try:
        return demo_cache.entries(demo_cache.read_snapshot())
    except CodecError as exc:
        pytest.fail(f"{demo_cache.SNAPSHOT.name} does not decode into the current classes ({exc}): "
                    f"the demo is computed on every fresh server until you run `{REGENERATE}` (and commit the file)")


def test_every_shipped_result_equals_a_fresh_computation_of_the_engine():
    shipped = _shipped_entries()
    fresh = demo_cache.build()  # every page run on its demo, nothing shipped used
    # the persona and long-memory demos, whose scoring loads jieba and NLTK, are in it
    assert {"dialogue-eval", "mem-scores", "mem-parity", "narrative", "testsets"} <= {ns for ns, _ in shipped}
    # the paired comparisons of the views opened after the first screen (components.demo_cache.PAGE_VIEWS)
    assert {"dialogue-pair", "mem-other", "mem-sbs", "mem-pair"} <= {ns for ns, _ in shipped}
    differences = demo_cache.differences(shipped, fresh)
    assert not differences, (f"{demo_cache.SNAPSHOT.name} is not what the engine computes now; run `{REGENERATE}` "
                             "and commit it:\n" + "\n".join(differences))


def test_the_comparison_is_exact():
    """Shipped and fresh results are compared on every field (those left out of ``==`` too), floats to the
    last digit and the sign of a zero, and on which keys are there."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Row:
        score: float
        note: str = dataclasses.field(default="", compare=False)

    slot = ("testsets", ("testsets", "demo", "single"))
    same = {slot: (Row(0.1 + 0.2, "a"), {"x": float("nan")})}
    assert demo_cache.differences(same, {slot: (Row(0.30000000000000004, "a"), {"x": float("nan")})}) == []
    for other in (Row(0.3, "a"), Row(0.1 + 0.2, "b")):
        assert demo_cache.differences(same, {slot: (other, {"x": float("nan")})}) == [
            f"testsets: the shipped result differs from the engine's now: {slot[1]!r}"]
    assert demo_cache.differences({slot: -0.0}, {slot: 0.0})  # equal by ==, not the same number
    assert demo_cache.differences({slot: (1, 2)}, {slot: [1, 2]})  # same items, another type
    assert demo_cache.differences({slot: (1, 2.0)}, {slot: (True, 2)})  # equal by ==, other types
    assert len(demo_cache.differences(same, {("testsets", "other"): same[slot]})) == 2


def test_the_snapshot_is_json_and_no_pickle_is_shipped():
    text = demo_cache.SNAPSHOT.read_text(encoding="utf-8")
    snapshot = json.loads(text)
    assert snapshot["format"] == demo_cache.FORMAT and set(snapshot) == {"format", "about", "namespaces"}
    assert set(snapshot["namespaces"]) <= demo_cache.NAMESPACES
    assert len(text.encode("utf-8")) < demo_cache.MAX_BYTES
    assert "牛郎" in text or "竹林" in text  # Chinese text readable in review, not escaped
    assert not list((ROOT / "components").glob("*.pickle"))
    if shutil.which("git") and (ROOT / ".git").exists():
        tracked = subprocess.run(["git", "ls-files", "*.pickle", "*.pkl"], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout
        assert tracked == ""


def test_every_demo_page_is_served_from_the_snapshot(monkeypatch, fresh_snapshot):
    """A fresh server opens each page of PAGE_FILES (and the views of PAGE_VIEWS) on the demo without computing
    any result of a shipped namespace: every such lookup is answered by the snapshot."""
    asked: list[tuple[str, object, bool]] = []
    original = demo_snapshot.shipped

    def recording(namespace, key):
        found, value = original(namespace, key)
        if namespace in demo_cache.NAMESPACES:
            asked.append((namespace, key, found))
        return found, value

    monkeypatch.setattr(demo_snapshot, "shipped", recording)  # where the page cache looks
    for page in demo_cache.PAGE_FILES:
        at = page_app(str(ROOT / page), timeout=180)
        at.run()
        assert not at.exception, (page, at.exception)
        switch, views = demo_cache.PAGE_VIEWS.get(page, ("", ()))
        for view in views:
            at.segmented_control(key=switch).set_value(view).run()
            assert not at.exception, (page, view, at.exception)
    computed = [f"{ns}: {key!r:.160}" for ns, key, found in asked if not found]
    assert not computed, "computed instead of taken from the snapshot:\n" + "\n".join(computed)
    # every shipped result was asked for (none is shipped for nothing)
    assert {(ns, key) for ns, key, _ in asked} == set(_shipped_entries())


def test_the_persona_page_takes_the_shipped_evaluation_instead_of_scoring(monkeypatch, fresh_snapshot):
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
        "panda-chat-large · combined", "panda-chat-small · combined", "combined score delta · 差值"]


def _snapshot_with(tmp_path, monkeypatch, change) -> dict:
    """The shipped snapshot, changed by ``change(snapshot)``, installed as the one the process reads."""
    snapshot = demo_cache.read_snapshot()
    change(snapshot)
    path = tmp_path / "demo_cache.json"
    path.write_text(json.dumps(snapshot, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(demo_snapshot, "SNAPSHOT", path)
    demo_cache.forget()
    return snapshot


def test_a_result_whose_class_has_other_fields_now_is_computed_not_used(tmp_path, monkeypatch, fresh_snapshot):
    """What a field added to or removed from a result class (since the file was written) looks like: that
    result does not decode, so the page computes it as before; the other shipped results are still used."""
    def change(snapshot):
        evaluation = snapshot["namespaces"]["dialogue-eval"][0]["result"]
        evaluation["written_by_an_older_release"] = 1  # a field the class does not have now
        case = snapshot["namespaces"]["dialogue-cases"][0]["result"]["cases"][0]
        del case[next(k for k in case if not k.startswith("$"))]  # a nested result lacks a field the class has

    snapshot = _snapshot_with(tmp_path, monkeypatch, change)
    calls = []
    original = dialogue.run_dialogue
    monkeypatch.setattr(dialogue, "run_dialogue", lambda *a, **k: calls.append(1) or original(*a, **k))
    at = page_app(DIALOGUE_PAGE, timeout=180)
    at.run()
    assert not at.exception and calls == [1]
    for namespace in ("dialogue-eval", "dialogue-cases"):
        key = decode(snapshot["namespaces"][namespace][0]["key"])
        assert demo_cache.shipped(namespace, key) == (False, None)
        with pytest.raises(CodecError, match="other fields now"):
            decode(snapshot["namespaces"][namespace][0]["result"])
    preds = snapshot["namespaces"]["dialogue-preds"][0]
    assert demo_cache.shipped("dialogue-preds", decode(preds["key"]))[0] is True  # unchanged: still shipped


def test_a_key_naming_a_class_outside_the_engine_is_left_out(tmp_path, monkeypatch, fresh_snapshot):
    import importlib

    def change(snapshot):
        snapshot["namespaces"]["testsets"][0]["key"] = {"$dataclass": "subprocess:Popen", "args": "true"}

    _snapshot_with(tmp_path, monkeypatch, change)
    imported = []
    real = importlib.import_module
    monkeypatch.setattr("evaluators.io.typed_json.importlib.import_module",
                        lambda name, *a: imported.append(name) or real(name, *a))
    assert demo_snapshot._namespace("testsets") == {}  # the entry is left out, nothing imported for it
    assert imported == []


def test_switch_off_means_nothing_shipped_is_used(monkeypatch, fresh_snapshot):
    key = decode(demo_cache.read_snapshot()["namespaces"]["testsets"][0]["key"])
    assert demo_cache.shipped("testsets", key)[0] is True
    first, second = demo_cache.shipped("testsets", key)[1], demo_cache.shipped("testsets", key)[1]
    assert first == second and first is not second  # a new copy each time
    monkeypatch.setenv(demo_cache.SWITCH, "0")
    assert demo_cache.shipped("testsets", key) == (False, None)
    # a namespace that is not shipped, and a key of an upload, are never answered
    monkeypatch.delenv(demo_cache.SWITCH)
    assert demo_cache.shipped("qa", key) == (False, None)
    assert demo_cache.shipped("testsets", ("testsets", "upload.json:0123", "answers.json:4567")) == (False, None)
    assert demo_cache.shipped("testsets", ("testsets", ["unhashable"])) == (False, None)


def test_snapshot_reads_are_capped_and_checked(tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (demo_cache.MAX_BYTES + 1))
    with pytest.raises(ValueError, match="larger than"):
        demo_cache.read_snapshot(big)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": demo_cache.FORMAT}))  # no namespaces
    with pytest.raises(ValueError, match="not a demo snapshot"):
        demo_cache.read_snapshot(other)
    other.write_text(json.dumps({"format": "evalboard demo results 0", "namespaces": {}}))  # another format
    with pytest.raises(ValueError, match="not a demo snapshot"):
        demo_cache.read_snapshot(other)
    # a damaged file, or the pickle of earlier releases, is no snapshot: the demo is computed
    for content in (b"not json", b"\x80\x05\x95\x00"):
        monkeypatch.setattr(demo_snapshot, "SNAPSHOT", tmp_path / "damaged.json")
        (tmp_path / "damaged.json").write_bytes(content)
        demo_cache.forget()
        try:
            with pytest.raises(ValueError, match="not JSON"):
                demo_cache.read_snapshot()
            assert demo_cache.shipped("testsets", ("testsets", "demo", "single")) == (False, None)
        finally:
            demo_cache.forget()


def test_writing_refuses_a_result_the_codec_cannot_write():
    with pytest.raises(TypeError, match="^mem-sbs: .*no typed JSON for builtins.object"):
        demo_cache.dump({("mem-sbs", ("mem-sbs", "demo")): [object()]})
    text = demo_cache.dump({("testsets", ("testsets", "demo", "single")): {"score": float("nan")}})
    assert "NaN" not in text and json.loads(text)["namespaces"]["testsets"][0]["result"] == {
        "score": {"$float": "nan"}}
