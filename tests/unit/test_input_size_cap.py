"""Every file a command reads from disk goes through one capped read (io.sources.read_file_bytes):
a file over MAX_FILE_BYTES is refused with its name, its size and the limit, before it is read."""

from __future__ import annotations

import errno

import pytest

from evaluators.cli import main
from evaluators.io import sources
from tests.conftest import ROOT

DEMO = ROOT / "evaluators" / "demo"


def test_read_file_bytes_refuses_a_file_over_the_limit(tmp_path, monkeypatch):
    f = tmp_path / "big.json"
    f.write_bytes(b"x" * 101)
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 100)
    with pytest.raises(OSError) as exc:
        sources.read_file_bytes(f)
    assert exc.value.errno == errno.EFBIG and exc.value.filename == str(f)
    assert "101 bytes, over the 100-byte limit" in exc.value.strerror
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 101)  # at the limit: read
    assert sources.read_file_bytes(f) == b"x" * 101


@pytest.mark.parametrize("argv, big", [
    (["qa", "--input", str(DEMO / "qa" / "qa_demo.jsonl"), "--predictions", "{big}"], "preds.json"),
    (["memory", "--results", "{big}"], "results.jsonl"),
    (["dialogue", "--cases", "{big}", "--pred", str(DEMO / "dialogue" / "panda-chat-large.jsonl")], "cases.json"),
    (["dialogue", "--cases", str(DEMO / "dialogue" / "persona_cases.json"), "--pred", "{big}"], "pred.jsonl"),
    (["testsets", "--items", "{big}", "--pred", str(DEMO / "testsets" / "factual_demo_answers.json")], "items.json"),
    (["narrative", "--gt", str(DEMO / "narrative"), "--pred", str(DEMO / "narrative"),
      "--relationship-taxonomy", "{big}"], "taxonomy.json"),
    # the reads added with the extraction audit, tokenizer warnings and review settings / create
    (["audit", str(DEMO / "qa" / "factcheck_demo.jsonl"), "--rules", "{big}"], "rules.json"),
    (["review", "create", "--db", "{big}.sqlite", "--input", str(DEMO / "qa" / "qa_demo.jsonl"), "--session", "s",
      "--guidelines", "{big}"], "guidelines.md"),
])
def test_each_command_refuses_an_input_over_the_limit_and_names_it(argv, big, tmp_path, monkeypatch, capsys):
    path = tmp_path / big
    path.write_bytes(b"{}" + b" " * 5000)  # 5,002 bytes: over a 5,000-byte cap, valid JSON under it
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 5000)
    rc = main([a.replace("{big}", str(path)) for a in argv])
    err = capsys.readouterr().err
    assert rc not in (0, None), err
    assert big in err and "5,002 bytes, over the 5,000-byte limit" in err


def test_a_baseline_report_over_the_limit_is_refused_by_name_and_the_comparison_still_runs(tmp_path, monkeypatch,
                                                                                           capsys):
    """``--baseline-report`` only adds the tokenizer-change warning: a file over the cap is not read, said so."""
    path = tmp_path / "baseline.json"
    path.write_bytes(b"{}" + b" " * 5000)
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 5000)
    assert main(["compare", str(DEMO / "qa" / "qa_systems_demo.jsonl"), "--ci-resamples", "0",
                 "--baseline-report", str(path)]) == 0
    err = capsys.readouterr().err
    assert "cannot read the baseline report" in err and "5,002 bytes, over the 5,000-byte limit" in err
