"""Build the narrative demo files (run: ``python -m evaluators.demo.narrative.build_demo``).

Two short stories written for EvalBoard — one Chinese, one English — each with a ground
truth and a deliberately imperfect prediction.  Every kind of difference the dashboard
shows is present at least once; the comments below say where.  Offsets are computed from
the text here, so edit the stories in this file and re-run it rather than editing the JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _span(text: str, piece: str, shift: int = 0, written: str | None = None) -> dict:
    start = text.index(piece)
    return {"start": start + shift, "end": start + shift + len(written or piece), "text": written or piece}


def _rel(a, t, l1="", l2="", s="") -> dict:
    return {"agent": a, "target": t, "relationship_level1": l1, "relationship_level2": l2, "sentiment": s}


def _act(c="", t="", x="", s="", f="") -> dict:
    return {"category": c, "type": t, "context": x, "status": s, "function": f}


def _event(eid, order, text_span, rels, action, agents=(), targets=()) -> dict:
    return {"id": eid, "text_span": text_span, "event_type": "", "description": "", "agents": list(agents),
            "targets": list(targets), "target_type": "character", "time_order": order, "relationships": rels,
            "action_layer": action}


def _doc(sid, title, lang, text, characters, events, annotator) -> dict:
    return {"version": "3.0",
            "metadata": {"id": sid, "title": title, "culture": "demo", "annotator": annotator},
            "source_info": {"language": lang, "type": "full_text", "text_content": text},
            "characters": [{"name": n, "alias": a, "archetype": r} for n, a, r in characters],
            "narrative_events": events}


ZH = [
    "从前，山脚下住着一个石匠，名叫阿木。阿木心地善良，常常帮村里人修桥补路。",
    "一天，村长找到阿木，请他为村子修一座石桥。阿木答应了，第二天就上山采石。",
    "山上住着一位山神，她化作白发老婆婆，问阿木为什么要搬走山石。阿木说明来意，老婆婆便指给他一块最结实的青石。",
    "阿木的邻居王二眼红，偷偷把青石推下山崖。",
    "山神大怒，降下暴雨冲垮了王二的院墙。",
    "王二向阿木认错，阿木原谅了他，两人一起修好了石桥。村民们在桥头为山神立了一座小庙。",
]
# The story text: the pieces above (one per event span) joined into paragraphs, one per line.
ZH_TEXT = "\n".join([ZH[0], ZH[1], ZH[2], ZH[3] + ZH[4], ZH[5]])


def chinese() -> tuple[dict, dict]:
    t = ZH_TEXT
    gt = _doc("ZH_001_石匠与山神", "石匠与山神", "zh", t, [
        ("阿木", "石匠", "Hero"),
        ("村长", "", "Herald"),
        ("山神", "白发老婆婆；老婆婆", "Mentor"),
        ("王二", "邻居", "Villain"),
        ("村民们", "", "Everyman"),
    ], [
        _event("zh-g1", 1, _span(t, ZH[0]), [], _act(f="exposition")),          # GT fills only the function
        _event("zh-g2", 2, _span(t, ZH[1]), [_rel("村长", "阿木", "Hierarchy", "ruler_subject", "positive")],
               _act("communicative", "command", "assign_task", "success", "trigger")),
        _event("zh-g3", 3, _span(t, ZH[2]), [_rel("山神", "阿木", "Hierarchy", "mentor_student", "")],  # GT sentiment missing
               _act("communicative", "inform", "reveal", "success", "setup")),
        _event("zh-g4", 4, _span(t, ZH[3]), [_rel("王二", "阿木", "Adversarial", "rival", "negative")],
               _act("physical", "interact", "destroy_obj", "success", "trigger")),
        _event("zh-g5", 5, _span(t, ZH[4]), [_rel("山神", "王二", "Adversarial", "enemy", "hostile")],
               _act("transaction", "punish", "", "success", "climax")),        # GT context missing
        _event("zh-g6", 6, _span(t, ZH[5]), [_rel("阿木", "王二", "Social & Alliance", "friend", "positive"),
                                             _rel("村民们", "山神", "Social & Alliance", "ally", "positive")],
               _act("communicative", "reconcile", "forgive", "success", "resolution")),
    ], "EvalBoard demo (GT)")
    first_sentence = "山上住着一位山神，她化作白发老婆婆，问阿木为什么要搬走山石。"
    pred = _doc("ZH_001_石匠与山神", "石匠与山神", "zh", t, [
        ("阿木", "", "Hero"),                      # exact match
        ("老婆婆", "", "Mentor"),                   # matches 山神 through a GT alias
        ("王二", "", "Trickster"),                  # archetype mismatch (GT Villain)
        ("村民们", "", "Everyman"),
        ("青石", "", "Other"),                      # extra character; 村长 is missing
    ], [
        _event("p1", 1, _span(t, ZH[0]), [], _act("existential", "", "", "", "setup")),  # function wrong
        _event("p2", 2, _span(t, ZH[1], shift=3),  # offsets shifted by 3 (a header): repaired from the text
               [_rel("村长", "阿木", "权威与阶级(Hierarchy)", "ruler_subject", "positive")],
               _act("Social & Communicative", "command", "assign task", "success", "trigger")),
        _event("p3", 3, _span(t, first_sentence),  # only the first sentence: partial span (IoU ~ .57)
               [_rel("老婆婆", "阿木", "Hierarchy", "mentor_student", "positive")],  # GT sentiment empty: extra
               _act("communicative", "inform", "explain", "success", "setup")),      # context wrong
        _event("p4", 4, _span(t, ZH[3]),
               [_rel("王二", "阿木", "Adversarial", "enemy", "hostile"),            # level 2 and sentiment wrong
                _rel("王二", "青石", "Adversarial", "enemy", "negative")],        # not in GT: an extra relationship
               _act("physical", "steal", "sabotage", "success", "trigger")),        # type wrong; context outside the taxonomy
        # zh-g5 (山神大怒 ...) has no prediction: a missed event and a missing span
        _event("p6", 5, _span(t, ZH[5]),
               [_rel("阿木", "王二", "Social & Alliance", "friend", "positive"),
                _rel("村民们", "山神", "Hierarchy", "ruler_subject", "positive"),    # both levels wrong
                _rel("阿木", "村民们", "Social & Alliance", "ally", "positive")],   # spurious relationship
               _act("communicative", "reconcile", "forgive", "success", "resolution")),
        _event("p7", 6, _span(t, "村民们在桥头为山神立了一座小庙。"), [],              # spurious event
               _act("existential", "cast", "bless", "success", "resolution")),
    ], "EvalBoard demo (model output)")
    return gt, pred


EN = [
    "In a fishing village by the cold sea lived Mara, the keeper of the old lighthouse. "
    "Every night she climbed the tower and lit the great lantern for the boats.",
    "One winter the merchant Silas offered her a bag of silver to let the lantern go dark.",
    "He wanted his rival's ships to wreck on the rocks.",
    "Mara refused him and told the harbor master what Silas had asked.",
    "The harbor master locked the merchant in the watch house.",
    "That night a storm came, and Mara kept the flame burning until dawn. "
    "Every boat came home safely, and the villagers called her the Light of the Cove.",
]
# The story text: the pieces above (one per event span) joined into paragraphs, one per line.
EN_TEXT = "\n".join([EN[0], EN[1] + " " + EN[2], EN[3] + " " + EN[4], EN[5]])


def english() -> tuple[dict, dict]:
    t = EN_TEXT
    gt = _doc("EN_001_lantern_keeper", "The Lantern Keeper", "en", t, [
        ("Mara", "the keeper; Light of the Cove", "Hero"),
        ("Silas", "the merchant", "Villain"),
        ("Harbor master", "", "Guardian"),
        ("the villagers", "", "Everyman"),
    ], [
        _event("en-g1", 1, _span(t, EN[0]), [], _act("physical", "interact", "", "success", "exposition")),
        _event("en-g2", 2, _span(t, EN[1]), [_rel("Silas", "Mara", "Neutral", "stranger", "neutral")],
               _act("transaction", "exchange", "bribe", "attempt", "trigger")),
        _event("en-g3", 3, _span(t, EN[2]), [], _act("mental", "plan", "scheme", "attempt", "setup")),
        _event("en-g4", 4, _span(t, EN[3]), [_rel("Mara", "Silas", "Adversarial", "enemy", "negative"),
                                             _rel("Mara", "Harbor master", "Social & Alliance", "ally", "positive")],
               _act("communicative", "inform", "report", "success", "trigger")),
        _event("en-g5", 5, _span(t, EN[4]), [_rel("Harbor master", "Silas", "Hierarchy", "ruler_subject", "hostile")],
               _act("physical", "restrain", "imprison", "success", "climax")),
        _event("en-g6", 6, _span(t, EN[5]), [_rel("the villagers", "Mara", "Social & Alliance", "friend", "positive")],
               _act("mental", "resolve", "steel_oneself", "success", "resolution")),
    ], "EvalBoard demo (GT)")
    merged = EN[1] + " " + EN[2]
    spaced = EN[3].replace("and told", "and  told")
    pred = _doc("EN_001_lantern_keeper", "The Lantern Keeper", "en", t, [
        ("Mara", "", "Hero"),
        ("The Merchant", "", "Villain"),          # matches Silas through a GT alias
        ("harbor  master", "", "Ruler"),          # exact after case/space folding; archetype wrong
        ("the storm", "", "Other"),               # extra; the villagers are missing
    ], [
        _event("x1", 1, _span(t, EN[0]), [], _act("physical", "interact", "consume", "success", "setup")),
        _event("x2", 2, _span(t, merged),         # two GT events merged: aligned to the first, the second missed
               [_rel("The Merchant", "Mara", "Adversarial", "rival", "negative")],  # labels and sentiment wrong
               _act("Transaction & Exchange", "exchange", "bribe", "attempt", "trigger")),
        _event("x4", 3, {"start": t.index(EN[3]) + 5, "end": t.index(EN[3]) + 5 + len(spaced), "text": spaced},
               [_rel("Mara", "The Merchant", "Adversarial", "enemy", "negative")],  # harbor master ally missing
               _act("communicative", "inform", "report", "success", "trigger")),
        _event("x5", 4, _span(t, EN[4]), [_rel("Harbor Master", "Silas", "Hierarchy", "ruler_subject", "negative")],
               _act("physical", "restrain", "arrest", "success", "climax")),
        _event("x6", 5, _span(t, EN[5]), [_rel("the villagers", "Mara", "Social & Alliance", "friend", "positive")],
               _act("mental", "resolve", "", "success", "resolution")),  # context missing in the prediction
    ], "EvalBoard demo (model output)")
    return gt, pred


def main() -> None:
    for gt, pred in (chinese(), english()):
        sid = gt["metadata"]["id"]
        for name, d in ((f"{sid}_v3.json", gt), (f"{sid}_prediction.json", pred)):
            (HERE / name).write_text(json.dumps(d, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
            print("wrote", name)


if __name__ == "__main__":
    main()
