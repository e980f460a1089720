"""Agreement by slice (system, question type, guidelines version) and over time: hand-derived kappas, each
slice with its own interval and under-30 flag (evaluators.review.agreement, service, CLI ``review agreement --slice``)."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review import service as rs
from evaluators.review.agreement import agreement_by_slice, agreement_over_time
from evaluators.review.store import Decision

ME, AV = "model_error", "acceptable_variant"
# all agree on two labels: po = 1, pe < 1 -> kappa 1
AGREE = [(ME, ME)] * 10 + [(AV, AV)] * 10
# alice ME on 7 + 8 = 15 items, bob ME on 7 + 7 = 14; po = (7 + 8) / 30 = 1/2;
# pe = (15 * 14 + 15 * 16) / 30² = 450 / 900 = 1/2 -> kappa = (1/2 - 1/2) / (1 - 1/2) = 0
CHANCE = [(ME, ME)] * 7 + [(AV, AV)] * 8 + [(ME, AV)] * 8 + [(AV, ME)] * 7


def _decisions(pairs, first_id=0, start_second=0):
    """Two reviewers' decisions on items first_id..; item i's second decision at second start_second + i."""
    out = []
    for n, (a, b) in enumerate(pairs):
        i = first_id + n
        t = f"2026-01-01T00:{(start_second + n) // 60:02d}:{(start_second + n) % 60:02d}.000000+00:00"
        out += [Decision(i, "d", "alice", a, None, "", "submitted", 1, t), Decision(i, "d", "bob", b, None, "",
                                                                               "submitted", 1, t)]
    return out


def _kappa(block):
    return block["label"]["figures"]["cohen_kappa_mean"]


def test_agreement_by_slice_gives_each_slice_its_figures_and_flags():
    decisions = _decisions(AGREE) + _decisions(CHANCE, first_id=100)
    system = {i: "sys-a" for i in range(20)} | {i: "sys-b" for i in range(100, 130)}
    blocks = agreement_by_slice(decisions + [Decision(500, "d", "alice", ME, None, "", "skipped", 1, "t")], system)
    assert list(blocks) == ["sys-a", "sys-b"]  # the skipped decision on item 500 does not count
    a, b = _kappa(blocks["sys-a"]), _kappa(blocks["sys-b"])
    assert a["value"] == 1.0 and (a["ci_low"], a["ci_high"]) == (1.0, 1.0) and a["n_items"] == 20
    assert not a["meaningful"] and a["note"] == "not yet meaningful: 20 items (fewer than 30)"
    assert b["value"] == pytest.approx(0.0, abs=1e-12) and b["n_items"] == 30 and b["meaningful"]
    assert b["ci_low"] < 0 < b["ci_high"]
    # a callable slices by the decision itself (any key of it: here its item id)
    by_label = agreement_by_slice(decisions, lambda d: d.item_id >= 100)
    assert _kappa(by_label[True])["value"] == pytest.approx(0.0, abs=1e-12)


def test_agreement_over_time_cuts_items_by_their_last_decision():
    # the first 20 items agree, the 30 decided after them agree only by chance: two windows of 25 items would mix
    # them, so ask for windows that fall on the boundary: 50 items in 2 windows of 25 -> first 20 agree + 5 chance
    decisions = _decisions(AGREE) + _decisions(CHANCE, first_id=100, start_second=20)
    early, late = agreement_over_time(decisions, windows=2)
    assert (early["window"], late["window"]) == (1, 2) and early["n_decisions"] == late["n_decisions"] == 50
    assert early["start"] == "2026-01-01T00:00:00.000000+00:00" and late["end"] == "2026-01-01T00:00:49.000000+00:00"
    # window 2: the last 25 of CHANCE: (ME,ME) x 2, (AV,AV) x 8, (ME,AV) x 8, (AV,ME) x 7; po = 10/25;
    # alice ME 2 + 8 = 10, bob ME 2 + 7 = 9; pe = (10 * 9 + 15 * 16) / 625 = 330 / 625;
    # kappa = (250/625 - 330/625) / (295/625) = -80/295
    assert _kappa(late["agreement"])["value"] == pytest.approx(-80 / 295)
    # window 1: AGREE's 20 + CHANCE's first 5, all (ME,ME): po = 25/25 -> kappa 1
    assert _kappa(early["agreement"])["value"] == 1.0
    assert all(not _kappa(w["agreement"])["meaningful"] for w in (early, late))  # 25 items each: flagged
    (whole,) = agreement_over_time(decisions, windows=1)
    assert whole["n_decisions"] == 100
    assert agreement_over_time([], windows=3) == []
    with pytest.raises(ValueError):
        agreement_over_time(decisions, windows=0)


def test_slice_rows_and_cli_by_system(tmp_path, capsys):
    db = tmp_path / "slices.sqlite"
    store = ReviewStore(db)
    items = [{"kind": "qa", "id": f"q{i}", "question": f"问题 {i}", "ground_truth": "a", "prediction": "a",
              "system": "sys-a" if i < 20 else "sys-b"} for i in range(50)]
    s = store.create_session("slices", "qa", items, created_by="x", k=2)
    for item, (a, b) in zip(store.items(s.id), AGREE + CHANCE):
        store.save_decision(item.id, "alice", label=a)
        store.save_decision(item.id, "bob", label=b)
    rows = rs.agreement_slice_rows(store, s, "system")
    kappas = {r["system"]: r for r in rows if r["rating"] == "labels (nominal)"
              and r["statistic"] == "Cohen's kappa (mean of pairs)"}
    assert kappas["sys-a"]["value"] == 1.0 and kappas["sys-a"]["meaningful"].startswith("not yet meaningful: 20")
    assert kappas["sys-b"]["value"] == pytest.approx(0.0, abs=1e-12) and kappas["sys-b"]["meaningful"] == "yes"
    timed = rs.agreement_slice_rows(store, s, "time")
    assert {r["window"] for r in timed} == set(range(1, 11))
    assert all(r["n_items"] == 5 for r in timed if r["rating"] == "labels (nominal)")  # 50 items / 10 windows
    assert all(r["n_items"] == 0 for r in timed if r["rating"] != "labels (nominal)")  # no 1-5 score given
    with pytest.raises(ValueError):
        rs.agreement_slice_rows(store, s, "colour")
    assert main(["review", "agreement", "--db", str(db), "--session", "slices", "--slice", "system"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["by"] == "system" and [x["slice"] for x in out["slices"]] == ["sys-a", "sys-b"]
    assert _kappa(out["slices"][0]["agreement"])["value"] == 1.0
    assert main(["review", "agreement", "--db", str(db), "--session", "slices", "--slice", "question-type"]) == 0
    (none,) = json.loads(capsys.readouterr().out)["slices"]  # QA items have no question type: one slice
    assert none["slice"] == "none" and none["agreement"]["label"]["n_items"] == 50
    assert main(["review", "agreement", "--db", str(db), "--session", "slices", "--slice", "guidelines"]) == 0
    (unversioned,) = json.loads(capsys.readouterr().out)["slices"]  # no guidelines version recorded: one slice
    assert unversioned["slice"] == "none" and _kappa(unversioned["agreement"])["n_items"] == 50


def test_cli_by_system_of_a_blind_session_only_for_those_who_see_its_systems(tmp_path, capsys, monkeypatch):
    """Walked: a blind session's *Agreement by system* named its systems to any reviewer (page and CLI)."""
    monkeypatch.delenv("EVALBOARD_REVIEW_ADMINS", raising=False)
    db = tmp_path / "blind.sqlite"
    store = ReviewStore(db)
    items = [{"kind": "qa", "id": f"q{i}", "question": "q", "ground_truth": "a", "prediction": "b",
              "system": "sys-secret"} for i in range(4)]
    s = store.create_session("blind", "qa", items, created_by="olga", k=2, blind=True)
    for item in store.items(s.id):
        store.save_decision(item.id, "ravi", label="model_error")
        store.save_decision(item.id, "mei", label="correct")
    base = ["review", "agreement", "--db", str(db), "--session", "blind", "--slice"]
    assert main([*base, "system", "--as", "ravi"]) == 2
    assert "sys-secret" not in capsys.readouterr().out
    assert main([*base, "time", "--as", "ravi"]) == 0      # the other slices name no system
    capsys.readouterr()
    assert main([*base, "system", "--as", "olga"]) == 0    # the owner
    assert [x["slice"] for x in json.loads(capsys.readouterr().out)["slices"]] == ["sys-secret"]
