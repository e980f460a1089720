"""Signed-in roles and the audit trail (issue 30): the group -> role mapping, the 16 action x role decisions
of the default policy (and a configured one), one audit row per allowed mutating action on SQLite and
PostgreSQL, nothing for a refused one, the CLI's ``--as`` / ``--role``, and the rules by name unchanged
without a role."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review import service as rs
from evaluators.review.roles import ROLES_ENV, Actor, load_config, parse_config, sign_in_expired

ITEMS = [{"kind": "qa", "id": f"q{i}", "question": q, "ground_truth": gt, "prediction": p, "system": "sys-a",
          "exact_match": 0.0, "token_f1": 0.5}
         for i, (q, gt, p) in enumerate([("《红楼梦》的作者是谁？", "曹雪芹", "作者是曹雪芹"),
                                         ("How many continents are there?", "six", "seven"),
                                         ("首都是哪里", "北京", "上海")])]

#: The 16 checks of the acceptance: four actions x four roles under the default policy (True: allowed).
#: decide: everyone but a viewer; adjudicate and a blind export: owner and adjudicator; settings: owner.
EXPECTED = {
    ("decide", "owner"): True, ("decide", "adjudicator"): True, ("decide", "annotator"): True,
    ("decide", "viewer"): False,
    ("adjudicate", "owner"): True, ("adjudicate", "adjudicator"): True, ("adjudicate", "annotator"): False,
    ("adjudicate", "viewer"): False,
    ("settings", "owner"): True, ("settings", "adjudicator"): False, ("settings", "annotator"): False,
    ("settings", "viewer"): False,
    ("export", "owner"): True, ("export", "adjudicator"): True, ("export", "annotator"): False,
    ("export", "viewer"): False,
}
#: Four people whose groups claim maps them to the four roles (as the OIDC test's users).
GROUPS = {"olga": ["eval-owners", "staff"], "adam": ["eval-adjudicators"], "anna": ["eval-annotators"],
          "vic": ["eval-viewers"]}
CONFIG = """
claim = "groups"
max_age_s = 60
[groups]
"eval-owners" = "owner"
"eval-adjudicators" = "adjudicator"
"eval-annotators" = "annotator"
"eval-viewers" = "viewer"
"""


@pytest.fixture
def roles_file(tmp_path, monkeypatch):
    path = tmp_path / "roles.toml"
    path.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv(ROLES_ENV, str(path))
    monkeypatch.delenv(rs.ADMINS_ENV, raising=False)
    return path


def _actor(name: str, via: str = "page") -> Actor:
    return Actor(name, load_config().role_for(GROUPS[name]), via=via)


def test_groups_map_to_the_strongest_role(roles_file):
    config = load_config()
    assert {n: config.role_for(g) for n, g in GROUPS.items()} == {
        "olga": "owner", "adam": "adjudicator", "anna": "annotator", "vic": "viewer"}
    assert config.role_for(["eval-viewers", "eval-adjudicators"]) == "adjudicator"  # strongest of two
    assert config.role_for("eval-annotators") == "annotator"                      # one string, not a list
    assert config.role_for(["unknown"]) == config.role_for(None) == "viewer"        # default_role
    assert config.max_age_s == 60 and config.claim == "groups"
    assert load_config("").role_for(["adjudicator"]) == "adjudicator"  # no file: groups named like the roles
    assert parse_config({"default_role": "", "groups": {}}).role_for(["x"]) == ""
    for bad in ({"groups": {"g": "admin"}}, {"actions": {"fly": ["owner"]}}, {"actions": {"decide": "owner"}},
                {"max_age_s": -1}):
        with pytest.raises(ValueError):
            parse_config(bad)


@pytest.mark.parametrize(("action", "role"), list(EXPECTED))
def test_action_by_role(action, role, roles_file, tmp_path):
    """Each of the 16 decisions, asked of the service (:func:`rs.may`) and acted out: an allowed action
    takes effect with one audit row; a refused one raises PermissionError and writes nothing."""
    store = ReviewStore(tmp_path / "r.sqlite")
    s = store.create_session("s", "qa", ITEMS, created_by="someone-else", blind=True)
    who = Actor({"owner": "olga", "adjudicator": "adam", "annotator": "anna", "viewer": "vic"}[role], role)
    assert rs.may(s, who, action) is EXPECTED[action, role]
    item = store.items(s.id)[0]
    act = {"decide": lambda: rs.decide(store, s, who, item.id, "gt_error"),
           "adjudicate": lambda: rs.adjudicate(store, s, who, item.id, "gt_error", corrected_answer="x"),
           "settings": lambda: rs.update_settings(store, s, who, guidelines="Be kind."),
           "export": lambda: rs.export_allowed(store, s, who, "jsonl")}[action]
    if EXPECTED[action, role]:
        act()
        (row,) = store.audit_rows(s.id)
        assert (row["who"], row["role"], row["action"], row["via"]) == (str(who), role, action, "page")
        assert row["item_id"] == (item.id if action in ("decide", "adjudicate") else None)
    else:
        with pytest.raises(PermissionError, match=f"as {role} may not {action}"):
            act()
        assert store.audit_rows(s.id) == []
        assert store.decisions(s.id) == [] and store.adjudications(s.id) == []
        assert store.session(s.id).guidelines == ""


def test_a_configured_policy_replaces_the_default(roles_file, tmp_path):
    roles_file.write_text(CONFIG + '[actions]\nexport = ["owner"]\ndecide = ["viewer"]\n', encoding="utf-8")
    store = ReviewStore(tmp_path / "r.sqlite")
    s = store.create_session("s", "qa", ITEMS, created_by="olga", blind=True)
    assert not rs.can_export(s, Actor("adam", "adjudicator"))
    assert rs.can_decide(s, Actor("vic", "viewer")) and not rs.can_decide(s, Actor("anna", "annotator"))
    # a name's session rights do not widen a role: the session's owner by name acting as viewer cannot manage
    assert not rs.can_manage(s, Actor("olga", "viewer")) and rs.can_manage(s, "olga")
    assert not rs.may(s, Actor("x", ""), "decide")  # signed in without a role: nothing


def test_without_a_role_the_rules_by_name_stay(tmp_path, monkeypatch):
    monkeypatch.delenv(ROLES_ENV, raising=False)
    monkeypatch.setenv(rs.ADMINS_ENV, "root")
    store = ReviewStore(tmp_path / "r.sqlite")
    s = store.create_session("s", "qa", ITEMS, created_by="olga", blind=True)
    s = store.update_session(s.id, adjudicators=["adam"])
    for who, manage, adjudicate in (("olga", True, True), ("root", True, True), ("adam", False, True),
                                    ("anna", False, False), ("", False, False), (None, False, False)):
        assert rs.can_manage(s, who) is manage and rs.can_adjudicate(s, who) is adjudicate, who
        assert rs.can_export(s, who) is adjudicate
        assert rs.can_decide(s, who) is bool(who)
    item = store.items(s.id)[0]
    rs.decide(store, s, "anna", item.id, "model_error")  # a typed name decides as before, now audited
    (row,) = store.audit_rows(s.id)
    assert (row["who"], row["role"], row["action"], row["detail"], row["via"]) == (
        "anna", None, "decide", "model_error", "page")
    with pytest.raises(rs.StaleDecision):  # refused by the store: the row goes with the action, in one transaction
        rs.decide(store, s, "anna", item.id, "correct", seen_version=0)
    assert len(store.audit_rows(s.id)) == 1


def test_every_allowed_mutating_action_leaves_one_audit_row(review_url, roles_file):
    """SQLite and PostgreSQL: decide, skip, undo, adjudicate, settings, blind, gold, export, corrections."""
    store = ReviewStore(review_url)
    s = store.create_session("audit 审计", "qa", ITEMS, created_by="olga")
    olga, adam, anna = _actor("olga"), _actor("adam"), _actor("anna")
    first, second, third = store.items(s.id)
    rs.decide(store, s, anna, first.id, "gt_error")
    rs.decide(store, s, anna, second.id, None)
    rs.undo(store, s, anna)
    rs.adjudicate(store, s, adam, first.id, "gt_error", "北京 is right", corrected_answer="北京")
    s = rs.update_settings(store, s, olga, guidelines="# v1\n只看答案。", k=2)
    s = rs.set_blind(store, s, olga, True)
    rs.mark_gold(store, s, olga, third.id, "model_error")
    rs.export_allowed(store, s, adam, "jsonl")
    rs.export_allowed(store, s, olga, "corrections")
    for refused in (lambda: rs.decide(store, s, _actor("vic"), third.id, "correct"),
                    lambda: rs.adjudicate(store, s, anna, first.id, "correct"),
                    lambda: rs.set_blind(store, s, adam, False),
                    lambda: rs.mark_gold(store, s, adam, third.id, None),
                    lambda: rs.export_allowed(store, s, anna, "csv")):
        with pytest.raises(PermissionError):
            refused()
    rows = store.audit_rows(s.id)
    assert [(r["who"], r["role"], r["action"], r["item_id"], r["detail"]) for r in rows] == [
        ("anna", "annotator", "decide", first.id, "gt_error"),
        ("anna", "annotator", "decide", second.id, "skipped"),
        ("anna", "annotator", "undo", second.id, ""),  # the item is back to no decision
        ("adam", "adjudicator", "adjudicate", first.id, "gt_error"),
        ("olga", "owner", "settings", None, "guidelines, k"),
        ("olga", "owner", "settings", None, "blind on"),
        ("olga", "owner", "gold", third.id, "model_error"),
        ("adam", "adjudicator", "export", None, "jsonl (blind) (gold)"),
        ("olga", "owner", "patch", None, "corrections (blind) (gold)"),
    ]
    assert all(r["session_id"] == s.id and r["via"] == "page" and r["at"].startswith("20") for r in rows)
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    store.dispose()


def test_the_cli_checks_as_and_role_and_audits(tmp_path, roles_file, capsys):
    db = tmp_path / "r.sqlite"
    store = ReviewStore(db)
    s = store.create_session("cli", "qa", ITEMS, created_by="olga", blind=True)
    base = ["review", "export", "--db", str(db), "--session", "cli"]
    assert main([*base, "--as", "anna", "--role", "annotator"]) == 2
    assert "anna as annotator may not export" in capsys.readouterr().err
    assert main([*base, "--as", "mallory"]) == 2  # no role: the rules by name; mallory is not an adjudicator
    assert main([*base, "--as", "olga", "--out", str(tmp_path / "o.jsonl")]) == 0  # the owner, by name
    assert main([*base, "--as", "adam", "--role", "adjudicator", "--out", str(tmp_path / "a.jsonl")]) == 0
    settings = ["review", "settings", "--db", str(db), "--session", "cli", "--adjudicators", "adam"]
    assert main([*settings, "--as", "adam", "--role", "adjudicator"]) == 2
    assert main([*settings, "--as", "olga", "--role", "owner"]) == 0
    export = tmp_path / "full.jsonl"
    assert main([*base, "--as", "olga", "--out", str(export)]) == 0
    imp = ["review", "import", "--db", str(tmp_path / "other.sqlite"), "--input", str(export)]
    assert main([*imp, "--as", "anna", "--role", "annotator"]) == 2
    assert main([*imp, "--as", "olga", "--role", "owner"]) == 0
    capsys.readouterr()
    rows = [(r["who"], r["role"], r["action"], r["via"]) for r in store.audit_rows(s.id)]
    assert rows == [("olga", None, "export", "cli"), ("adam", "adjudicator", "export", "cli"),
                    ("olga", "owner", "settings", "cli"), ("olga", None, "export", "cli")]
    (imported,) = ReviewStore(tmp_path / "other.sqlite").audit_rows()
    assert (imported["who"], imported["role"], imported["action"], imported["via"]) == ("olga", "owner", "import",
                                                                                         "cli")
    assert json.loads(export.read_text(encoding="utf-8").splitlines()[0])


def test_a_sign_in_older_than_the_max_age_expires():
    assert not sign_in_expired(1_000, 1_060, 60) and sign_in_expired(1_000, 1_061, 60)
    assert sign_in_expired(None, 1_000, 60) and sign_in_expired("1000", 1_000, 60)  # no usable iat
    assert not sign_in_expired(None, 10**10, 0)  # 0: no limit


def test_the_cli_create_and_patch_are_checked_and_audited(tmp_path, roles_file, capsys):
    from evaluators.demo import demo_path

    db, run = tmp_path / "r.sqlite", str(demo_path("qa", "qa_demo.jsonl"))
    create = ["review", "create", "--db", str(db), "--input", run, "--session", "demo"]
    assert main([*create, "--as", "anna", "--role", "annotator"]) == 2
    assert "anna as annotator may not create" in capsys.readouterr().err
    assert main([*create, "--as", "olga", "--role", "owner"]) == 0
    store = ReviewStore(db)
    s = store.session_by_name("demo")
    assert s.created_by == "olga"
    item = store.items(s.id)[0]
    store.save_decision(item.id, "anna", label="gt_error")
    rs.adjudicate(store, s, _actor("adam"), item.id, "gt_error", corrected_answer="fixed")
    patch = ["review", "patch", "--db", str(db), "--session", "demo", "--gt", run, "--out", str(tmp_path / "p.json")]
    assert main([*patch, "--as", "vic", "--role", "viewer"]) == 2
    assert main([*patch, "--as", "adam", "--role", "adjudicator"]) == 0
    capsys.readouterr()
    assert [(r["who"], r["role"], r["action"], r["via"]) for r in store.audit_rows(s.id)] == [
        ("olga", "owner", "create", "cli"), ("adam", "adjudicator", "adjudicate", "page"),
        ("adam", "adjudicator", "patch", "cli")]


@pytest.mark.parametrize("role", ["owner", "adjudicator", "annotator", "viewer"])
def test_the_cli_export_and_settings_by_role(role, tmp_path, roles_file, capsys):
    """The CLI's two of the four actions (export of a blind session, settings) for each role: exit 0 and one
    audit row (``via = cli``) as the policy allows, exit 2 and none otherwise."""
    db = tmp_path / "r.sqlite"
    store = ReviewStore(db)
    s = store.create_session("cli 盲审", "qa", ITEMS, created_by="someone-else", blind=True)
    common = ["--db", str(db), "--session", "cli 盲审", "--as", role, "--role", role]
    got = {"export": main(["review", "export", *common, "--out", str(tmp_path / "o.jsonl")]),
           "settings": main(["review", "settings", *common, "--k", "3"])}
    capsys.readouterr()
    assert got == {a: 0 if EXPECTED[a, role] else 2 for a in got}
    assert [(r["action"], r["role"], r["via"]) for r in store.audit_rows(s.id)] == [
        (a, role, "cli") for a in ("export", "settings") if EXPECTED[a, role]]
    assert store.session(s.id).k == (3 if EXPECTED["settings", role] else 1)
