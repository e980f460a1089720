"""Issue 30, sign-in: in Chromium, against a real local OpenID Connect provider (``oidc-provider-mock``, started
here in a thread), four people whose ``groups`` claims map to owner, adjudicator, annotator and viewer sign in
through ``st.login`` (a temporary secrets file; nothing is committed).  On the Review page each of the four
actions (decide, change settings, adjudicate, export a blind session) is offered or refused by role, as the
service's policy says (the same 16 decisions as ``tests/unit/test_review_roles.py``); each allowed action
done leaves one audit row; a sign-in older than the configured maximum age is sent back to login.  Without
sign-in, a typed name is kept across a reload."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from playwright.sync_api import expect

from evaluators.review import ReviewStore
from tests.conftest import ROOT
from tests.e2e.conftest import stop_server, wait_for_app
from tests.unit.test_review_roles import CONFIG, EXPECTED

pytestmark = pytest.mark.e2e

WAIT = 90_000
ITEMS = [{"kind": "qa", "id": f"o{i}", "question": f"问题 {i} / question {i}", "ground_truth": "北京",
          "prediction": "上海", "system": "sys-a", "exact_match": 0.0, "token_f1": 0.0} for i in range(6)]
#: sub -> (groups claim, role it maps to under CONFIG).
USERS = {"olga": (["eval-owners", "staff"], "owner"), "adam": (["eval-adjudicators"], "adjudicator"),
         "anna": (["eval-annotators"], "annotator"), "vic": (["eval-viewers"], "viewer")}
DECIDE = "1 · Model error · 模型错误"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(port: int, env: dict, secrets: str | None) -> subprocess.Popen:
    args = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
            "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    if secrets:
        args += ["--secrets.files", secrets]
    proc = subprocess.Popen(args, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT), **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    stop_server(proc)
    pytest.fail("streamlit server did not become healthy within 90 s")


def _view(page, label: str) -> None:
    page.locator('[data-testid="stButtonGroup"] button', has_text=label).first.click()
    page.wait_for_timeout(500)
    wait_for_app(page, timeout=WAIT)


def _actions(store: ReviewStore, session_id: int, who: str) -> list[str]:
    return [r["action"] for r in store.audit_rows(session_id) if r["who"] == who]


def _until(check, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while not check():
        if time.time() > deadline:
            pytest.fail("the action left no audit row within a minute")
        time.sleep(0.3)


def _offered(page, allowed, refused) -> bool:
    """Wait until the page shows the control (``allowed``) or the refusal; whether the control is there."""
    allowed.or_(refused).first.wait_for(timeout=WAIT)
    return allowed.count() > 0


def _sign_in(page, url: str, sub: str, session_id: int) -> None:
    page.goto(f"{url}/Review?session={session_id}")
    page.get_by_role("button", name="Sign in · 登录").click(timeout=WAIT)
    page.wait_for_url("**/oauth2/authorize**", timeout=WAIT)
    page.locator(f'button[name="sub"][value="{sub}"]').click()
    page.wait_for_url(f"{url}/**", timeout=WAIT)
    page.goto(f"{url}/Review?session={session_id}")
    page.get_by_text("(signed in) · role:").first.wait_for(timeout=WAIT)
    wait_for_app(page, timeout=WAIT)


def test_four_signed_in_roles_are_allowed_or_refused_and_audited(browser, tmp_path):
    oidc = pytest.importorskip("oidc_provider_mock")
    pytest.importorskip("authlib")
    roles = tmp_path / "roles.toml"
    roles.write_text(CONFIG.replace("max_age_s = 60", "max_age_s = 3600"), encoding="utf-8")
    store = ReviewStore(tmp_path / "review.sqlite")
    s = store.create_session("signed in 登录", "qa", ITEMS, created_by="someone", k=3, blind=True)
    first = store.items(s.id)[0]
    for who, label in (("x", "gt_error"), ("y", "model_error")):  # one item waits for adjudication
        store.save_decision(first.id, who, label=label)
    users = [oidc.User(sub=sub, claims={"email": f"{sub}@example.org", "name": sub.title(), "groups": groups})
             for sub, (groups, _) in USERS.items()]
    os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")
    port = _port()
    url = f"http://localhost:{port}"
    with oidc.run_server_in_thread(port=0, user_claims=users) as provider:
        secrets = tmp_path / "secrets.toml"
        secrets.write_text(
            "[auth]\n"
            f'redirect_uri = "{url}/oauth2callback"\n'
            f'cookie_secret = "{os.urandom(24).hex()}"\n'
            'client_id = "evalboard-test"\nclient_secret = "evalboard-test-secret"\n'
            f'server_metadata_url = "http://localhost:{provider.server_port}/.well-known/openid-configuration"\n',
            encoding="utf-8")
        proc = _serve(port, {"EVALBOARD_DATA_DIR": str(tmp_path), "EVALBOARD_DATABASE_URL": "",
                             "EVALBOARD_REVIEW_ROLES": str(roles), "EVALBOARD_REVIEW_ADMINS": "",
                             "AUTHLIB_INSECURE_TRANSPORT": "1"}, str(secrets))
        try:
            seen: dict[tuple[str, str], bool] = {}
            for sub, (_, role) in USERS.items():
                context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
                page = context.new_page()
                page.set_default_timeout(WAIT)
                _sign_in(page, url, sub, s.id)
                expect(page.get_by_text(f"role: {role}").first).to_be_visible()
                email = f"{sub}@example.org"
                # decide
                if seen.setdefault(("decide", role), _offered(page, page.get_by_role("button", name=DECIDE),
                                                              page.get_by_text(f"Your role ({role}) does not decide"))):
                    page.get_by_role("button", name=DECIDE).first.click()
                    _until(lambda: _actions(store, s.id, email)[-1:] == ["decide"])
                    wait_for_app(page, timeout=WAIT)
                # settings
                # the settings sit in the session block, folded once a session is open
                page.locator('[data-testid="stExpander"] summary', has_text="Session · 审阅任务").first.click()
                save = page.get_by_role("button", name="Save settings · 保存设置")
                if seen.setdefault(("settings", role), _offered(page, save,
                                                                page.get_by_text(f"Your role ({role}) does not change"))):
                    page.get_by_role("textbox", name="Guidelines (Markdown) · 审阅指南").fill(f"# v1 by {sub}\n只看答案。")
                    save.click()
                    _until(lambda: _actions(store, s.id, email)[-1:] == ["settings"])
                    wait_for_app(page, timeout=WAIT)
                wait_for_app(page, timeout=WAIT)
                # adjudicate
                _view(page, "Adjudicate · 裁决")
                if seen.setdefault(("adjudicate", role), _offered(
                        page, page.get_by_role("button", name="Decide · 裁决"),
                        page.get_by_text(f"Your role ({role}) does not adjudicate."))):
                    page.locator('[data-testid="stRadio"] label', has_text="GT error").first.click()
                    page.get_by_role("button", name="Decide · 裁决").click()
                    _until(lambda: _actions(store, s.id, email)[-1:] == ["adjudicate"])
                    wait_for_app(page, timeout=WAIT)
                # export of the blind session
                _view(page, "Export · 导出")
                button = page.get_by_role("button", name="Decisions (JSONL)")
                if seen.setdefault(("export", role), _offered(
                        page, button, page.get_by_text("This session is blind or has gold items"))):
                    with page.expect_download(timeout=WAIT) as download:
                        button.click()
                    assert download.value.path().read_bytes()
                    _until(lambda: _actions(store, s.id, email)[-1:] == ["export"])
                rows = [(r["action"], r["role"], r["via"]) for r in store.audit_rows(s.id) if r["who"] == email]
                want = [(a, role, "page") for a in ("decide", "settings", "adjudicate", "export") if EXPECTED[a, role]]
                assert rows == want, (sub, rows)  # one row per allowed action done, none for a refused one
                if role == "owner":  # a sign-in older than the maximum age goes back to the provider's login
                    roles.write_text(CONFIG.replace("max_age_s = 60", "max_age_s = 1"), encoding="utf-8")
                    time.sleep(2)
                    page.goto(f"{url}/Review?session={s.id}")
                    page.wait_for_url("**/oauth2/authorize**", timeout=WAIT)
                    roles.write_text(CONFIG.replace("max_age_s = 60", "max_age_s = 3600"), encoding="utf-8")
                context.close()
            assert seen == EXPECTED  # the 16 action x role checks, as the page offered them
            assert {r["role"] for r in store.audit_rows(s.id)} == {"owner", "adjudicator", "annotator"}
        finally:
            stop_server(proc)


def test_a_typed_name_is_kept_across_a_reload(browser, tmp_path):
    store = ReviewStore(tmp_path / "review.sqlite")
    s = store.create_session("typed", "qa", ITEMS, created_by="olga")
    port = _port()
    proc = _serve(port, {"EVALBOARD_DATA_DIR": str(tmp_path), "EVALBOARD_DATABASE_URL": ""}, None)
    try:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.set_default_timeout(WAIT)
        page.goto(f"http://127.0.0.1:{port}/Review?session={s.id}")
        wait_for_app(page, timeout=WAIT)
        name = page.get_by_role("textbox", name="Your name · 审阅人")
        name.fill("王芳 Fang")
        name.press("Enter")
        page.get_by_role("button", name=DECIDE).first.wait_for(timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
        page.reload()
        wait_for_app(page, timeout=WAIT)
        page.get_by_role("button", name=DECIDE).first.wait_for(timeout=WAIT)   # the buttons, without confirming
        expect(page.get_by_role("textbox", name="Your name · 审阅人")).to_have_value("王芳 Fang")
        page.get_by_role("button", name=DECIDE).first.click()
        for _ in range(60):
            if store.decisions(s.id):
                break
            time.sleep(0.5)
        assert [d.annotator for d in store.decisions(s.id)] == ["王芳 Fang"]
    finally:
        stop_server(proc)
