"""One reply store (evaluators.io.replies.ReplyStore) for the judge cache and the live checkpoint (issue 16).

Existing files of both kinds are read as before: the demo's judge cache (JSON document) and a
checkpoint in the JSONL lines run_live has always written, with a line cut by an interruption.
"""

from __future__ import annotations

import json

import pytest

from evaluators.demo import demo_path
from evaluators.dialogue.live import open_checkpoint
from evaluators.io import InputError
from evaluators.io import replies
from evaluators.io.replies import ReplyStore
from evaluators.memory.judge import Judgement, JudgeCache


def test_the_judge_cache_is_a_reply_store_and_reads_the_existing_file(tmp_path):
    path = demo_path("memory", "demo_judge_cache.json")
    cache = JudgeCache(path)
    assert isinstance(cache, ReplyStore) and cache.layout == "json"
    raw = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert len(cache.entries) == len(raw) == 24 and cache.entries == raw
    # written back and read again: the same entries (the cache file's layout is unchanged)
    copy = JudgeCache(tmp_path / "c.json")
    copy.entries = dict(cache.entries)
    copy.save()
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert (data["format"], data["version"]) == ("evalboard-memory-judge-cache", 1)
    assert JudgeCache(tmp_path / "c.json").entries == raw
    copy.put("q9", "fp", Judgement(score=0.6, mode="continuous", reasoning="部分正确 partly right", model="m"))
    assert copy.get("q9", "fp").score == 0.6 and copy.get("q9", "other") is None


def test_a_judge_cache_of_another_format_is_refused_naming_it(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something-else", "entries": {}}), encoding="utf-8")
    with pytest.raises(InputError, match="not a judge cache"):
        JudgeCache(bad)


def test_the_live_checkpoint_is_a_reply_store_reading_existing_lines(tmp_path):
    ckpt = tmp_path / "live.jsonl"
    lines = [{"model": "m1", "scene": "s1", "dialogue_index": 0, "occurrence": 0, "prediction": "你好", "error": None},
             {"model": "m1", "scene": "s1", "dialogue_index": 1, "occurrence": 0, "prediction": "", "error": "x"},
             {"model": "m2", "scene": "s1", "dialogue_index": 0, "occurrence": 0, "prediction": "hi", "error": None}]
    ckpt.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines) + '{"model": "m1", "sce',
                    encoding="utf-8")
    store = open_checkpoint(ckpt, "m1")
    assert isinstance(store, ReplyStore) and store.layout == "jsonl"
    # m1's answered case only: the failed one and m2's are not reused, the cut line is skipped and ended
    assert list(store.entries.values()) == [lines[0]]
    assert [i.line for i in store.issues] == [4]
    assert ckpt.read_bytes().endswith(b'"sce\n')
    store.put(("s1", 1, 0), {**lines[1], "prediction": "再见 bye", "error": None})
    again = open_checkpoint(ckpt, "m1")
    assert sorted(r["prediction"] for r in again.entries.values()) == ["你好", "再见 bye"]


def test_every_read_is_capped(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    JudgeCache(path).save()
    monkeypatch.setattr(replies, "MAX_STORE_BYTES", 10)
    with pytest.raises(InputError, match="over the 10-byte limit"):
        JudgeCache(path)
