"""The one corrections skeleton (evaluators.metrics.before_after.run_before_after) on a hand-scored toy task:
two systems, four items (two English, two Chinese), one GT correction."""

from __future__ import annotations

import dataclasses

import pytest

from evaluators.io.gt_patch import GTPatchMismatch, GTPatchSet, PatchEntry, apply_gt_patch
from evaluators.metrics.before_after import CorrectionsAdapter, PatchedInputs, per_run, run_before_after

DIGEST = "b" * 64
ITEMS = ("q1", "q2", "q3", "q4")


@dataclasses.dataclass(frozen=True)
class Toy:
    gold: dict          # item -> its one GT answer
    predictions: dict   # system -> item -> answer


INPUTS = Toy({"q1": "Mars", "q2": "Jane Austen", "q3": "北京", "q4": "十二个月"},
             {"A": {"q1": "Mars", "q2": "Jane Austen", "q3": "北京", "q4": "12"},
              "B": {"q1": "Mars", "q2": "Charlotte Brontë", "q3": "北京市", "q4": "十二个月"}})
# one correction: the GT of q3 was wrong, the reviewer typed 北京市 (a replace made for this GT file)
PATCH = GTPatchSet((PatchEntry("q3", DIGEST, "replace", ("北京",), ("北京市",), "ann"),), ("fix.jsonl",))


def toy_adapter(calls: list) -> CorrectionsAdapter:
    """The toy task's adapter: exact match per system and item; every run is logged in ``calls``."""

    def patch(x: Toy, patches: GTPatchSet) -> PatchedInputs:
        app = apply_gt_patch({k: (v,) for k, v in x.gold.items()}, patches.entries, DIGEST)
        gold = {k: app.patched(k, (v,))[0] for k, v in x.gold.items()}
        return PatchedInputs(Toy(gold, x.predictions), (("toy.json", app),), tuple(app.issues))

    def run(x: Toy) -> dict:
        calls.append(dict(x.gold))
        return {s: [float(p[i] == x.gold[i]) for i in ITEMS] for s, p in x.predictions.items()}

    return CorrectionsAdapter(patch=patch, run=run, values=per_run(lambda r: {s: {"em": v} for s, v in r.items()}),
                              metrics=("em",), binary=("em",), unit="item", n_resamples=200, seed=0)


def test_before_and_after_of_one_correction_by_hand():
    calls = []
    before, after, corrections, issues = run_before_after(INPUTS, PATCH, toy_adapter(calls))
    # before (q3's GT 北京):  A right on q1 q2 q3 -> 3/4 = 0.75;  B right on q1 q4 -> 2/4 = 0.50
    # after  (q3's GT 北京市): A right on q1 q2    -> 2/4 = 0.50;  B right on q1 q3 q4 -> 3/4 = 0.75
    assert before == {"A": [1.0, 1.0, 1.0, 0.0], "B": [1.0, 0.0, 0.0, 1.0]}
    assert after == {"A": [1.0, 1.0, 0.0, 0.0], "B": [1.0, 0.0, 1.0, 1.0]}
    assert [c["q3"] for c in calls] == ["北京", "北京市"]  # run twice: as read, then corrected
    effect = corrections.effect
    a, b = (effect.changes[0].metric("em"), effect.changes[1].metric("em"))
    assert [c.run for c in effect.changes] == ["A", "B"]
    assert (a.before.estimate, a.after.estimate, a.change.delta) == (0.75, 0.5, -0.25)
    assert (b.before.estimate, b.after.estimate, b.change.delta) == (0.5, 0.75, 0.25)
    # one changed item per system; n_paired 4
    assert [(c.n_paired, c.n_changed) for c in effect.changes] == [(4, 1), (4, 1)]
    # McNemar on A: right before only on q3 (1 discordant pair), exact binomial p = min(1, 2 * 0.5^1) = 1
    assert (a.mcnemar.only_a, a.mcnemar.only_b, a.mcnemar.both, a.mcnemar.neither) == (1, 0, 2, 1)
    assert a.mcnemar.p_value == 1.0
    # 4 items < 30: the bootstrap p is flagged; the exact sign-flip test over the 1 changed item:
    # flipping its sign gives |mean| 0.25 both ways -> p = 2/2 = 1
    assert a.change.small_sample and a.randomization.exact and a.randomization.p_value == 1.0
    # the order flips: A ahead before (0.75 vs 0.50), B ahead after (0.75 vs 0.50)
    (flip,) = effect.rank_flips
    assert (flip.metric, flip.higher_before, flip.higher_after, flip.before, flip.after) == \
        ("em", "A", "B", (0.75, 0.5), (0.5, 0.75))
    assert (effect.unit, effect.metrics, corrections.files) == ("item", ("em",), ("fix.jsonl",))
    ((name, app),) = corrections.applications
    assert name == "toy.json" and app.n_applied == 1 and app.answers == {"q3": ("北京市",)}
    assert issues == ()


def test_a_run_given_as_before_is_not_run_again_and_a_foreign_patch_runs_nothing():
    calls = []
    adapter = toy_adapter(calls)
    scored = adapter.run(INPUTS)
    before, after, corrections, _ = run_before_after(INPUTS, PATCH, adapter, before=scored)
    assert before is scored and len(calls) == 2  # the run above, then the run after only
    assert corrections.effect.changes[1].metric("em").after.estimate == 0.75
    calls.clear()
    foreign = GTPatchSet((PatchEntry("q3", "c" * 64, "replace", ("北京",), ("北京市",), "ann"),))
    with pytest.raises(GTPatchMismatch):
        run_before_after(INPUTS, foreign, adapter)
    assert calls == []  # refused before anything was scored


def test_no_item_scored_both_times_gives_a_note_not_an_error():
    calls = []
    adapter = dataclasses.replace(toy_adapter(calls), values=per_run(lambda r: {s: {"em": [None] * 4} for s in r}))
    _, _, corrections, _ = run_before_after(INPUTS, PATCH, adapter)
    assert corrections.effect is None and corrections.note == "A: no item scored before and after the corrections"
    assert corrections.applications[0][1].n_applied == 1
