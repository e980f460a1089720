"""``evalboard serve``: where the dashboard is found, and the ``streamlit run`` command it becomes.

No server starts here (``os.execve`` is replaced); ``tests/e2e/test_installed_dashboard.py`` serves an
installed copy in Chromium.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from evaluators.cli import main, serve
from tests.conftest import ROOT


def _dashboard(folder: Path, config: bool = True) -> Path:
    """A minimal dashboard folder: app.py, pages/ and (unless ``config=False``) the project's config.toml."""
    (folder / "pages").mkdir(parents=True)
    (folder / "app.py").write_text("import streamlit\n", encoding="utf-8")
    if config:
        (folder / ".streamlit").mkdir()
        shutil.copy(ROOT / ".streamlit" / "config.toml", folder / ".streamlit" / "config.toml")
    return folder


@pytest.fixture
def exec_calls(monkeypatch):
    """Record ``os.execve`` instead of replacing the test process by a server."""
    calls = []
    monkeypatch.setattr(serve.os, "execve", lambda path, argv, env: calls.append((path, list(argv), dict(env))))
    return calls


def test_in_a_checkout_the_repository_is_the_dashboard():
    assert serve.candidate_dirs()[0] == ROOT
    assert serve.find_dashboard() == ROOT


def test_installed_locations_are_candidates():
    import sys
    import sysconfig

    found = serve.candidate_dirs()
    for prefix in (sysconfig.get_path("data"), sys.prefix):
        assert Path(prefix) / "share" / "evalboard" in found
    assert len({str(d) for d in found}) == len(found)  # no folder twice


def test_the_first_folder_holding_app_py_and_pages_wins(tmp_path):
    empty, only_app, real = tmp_path / "empty", tmp_path / "only_app", _dashboard(tmp_path / "share" / "evalboard")
    empty.mkdir()
    only_app.mkdir()
    (only_app / "app.py").write_text("", encoding="utf-8")
    assert serve.find_dashboard([empty, only_app, real]) == real
    assert serve.find_dashboard([empty, only_app]) is None


def test_every_project_setting_becomes_a_flag():
    cmd = serve.streamlit_command(ROOT, environ={}, python="py")
    assert cmd[:5] == ["py", "-m", "streamlit", "run", str(ROOT / "app.py")]
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert len(flags) == sum(len(options) for options in config.values())
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--client.showSidebarNavigation"] == "false"
    assert flags["--server.headless"] == "true"
    assert flags["--server.maxUploadSize"] == str(config["server"]["maxUploadSize"])
    assert flags["--theme.primaryColor"] == config["theme"]["primaryColor"]
    # the banner's address is set: a headless server does not ask checkip.amazonaws.com for its external IP
    assert flags["--browser.serverAddress"] == "localhost"


def test_the_users_options_replace_the_projects():
    cmd = serve.streamlit_command(ROOT, port=8722, environ={"STREAMLIT_THEME_BASE": "dark"}, python="py",
                                  extra=["--server.maxUploadSize=50", "--browser.gatherUsageStats", "true",
                                         "--server.address", "0.0.0.0"])
    assert cmd[-5:] == ["--server.maxUploadSize=50", "--browser.gatherUsageStats", "true", "--server.address", "0.0.0.0"]
    mine = cmd[5:-5]
    assert "--server.maxUploadSize" not in mine and "--browser.gatherUsageStats" not in mine
    assert "--theme.base" not in mine  # set in the environment: the user's
    assert mine[-2:] == ["--server.port", "8722"]
    assert "--client.showSidebarNavigation" in mine
    with pytest.raises(ValueError, match="port once"):
        serve.streamlit_command(ROOT, port=1, extra=["--server.port", "2"], environ={})


def test_environment_variable_names_are_streamlits():
    assert serve.env_var("server.maxUploadSize") == "STREAMLIT_SERVER_MAX_UPLOAD_SIZE"
    assert serve.env_var("browser.gatherUsageStats") == "STREAMLIT_BROWSER_GATHER_USAGE_STATS"
    assert serve.env_var("client.showSidebarNavigation") == "STREAMLIT_CLIENT_SHOW_SIDEBAR_NAVIGATION"
    assert serve.env_var("theme.base") == "STREAMLIT_THEME_BASE"


def test_serve_passes_unknown_options_to_streamlit(exec_calls, tmp_path, monkeypatch):
    monkeypatch.delenv("EVALBOARD_JUDGE_CACHE_DIR", raising=False)
    data = tmp_path / "data" / "here"
    assert main(["serve", "--port", "8723", "--data-dir", str(data), "--server.address", "127.0.0.1",
                 "--server.fileWatcherType=none"]) == 0
    (path, argv, env), = exec_calls
    assert path == argv[0] and argv[1:5] == ["-m", "streamlit", "run", str(ROOT / "app.py")]
    assert argv[-3:] == ["--server.address", "127.0.0.1", "--server.fileWatcherType=none"]
    assert argv[argv.index("--server.port") + 1] == "8723"
    assert env["EVALBOARD_DATA_DIR"] == str(data.resolve()) and data.is_dir()
    assert env["EVALBOARD_JUDGE_CACHE_DIR"] == str(data.resolve() / "judge_cache")


def test_other_commands_still_refuse_unknown_options(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["qa", "--input", "x.jsonl", "--server.port", "1"])
    assert stop.value.code == 2
    assert "unrecognized arguments: --server.port" in capsys.readouterr().err


def test_no_dashboard_exits_2_naming_where_it_looked(exec_calls, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(serve, "candidate_dirs", lambda: [tmp_path / "a", tmp_path / "b"])
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "dashboard (app.py and pages/) was not found" in err
    assert str(tmp_path / "a") in err and str(tmp_path / "b") in err
    assert exec_calls == []


def test_a_dashboard_without_its_settings_exits_2(exec_calls, tmp_path, monkeypatch, capsys):
    folder = _dashboard(tmp_path / "share" / "evalboard", config=False)
    monkeypatch.setattr(serve, "candidate_dirs", lambda: [folder])
    assert main(["serve"]) == 2
    assert "config.toml are missing" in capsys.readouterr().err
    assert exec_calls == []


def test_an_installed_layout_is_served_from_its_share_folder(exec_calls, tmp_path, monkeypatch):
    folder = _dashboard(tmp_path / "prefix" / "share" / "evalboard")
    monkeypatch.setattr(serve, "candidate_dirs", lambda: [tmp_path / "site-packages", folder])
    assert main(["serve"]) == 0
    (_, argv, _), = exec_calls
    assert argv[4] == str(folder / "app.py")
    assert "--server.port" not in argv


def test_config_flags_of_nested_tables_and_lists(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[server]\nport = 1\nfolderWatchList = ["a"]\n[theme.sidebar]\nbackgroundColor = "#fff"\n'
                      '[client]\ntoolbarMode = "minimal"\nshowErrorDetails = true\n', encoding="utf-8")
    assert serve.config_flags(config) == {"server.port": "1", "theme.sidebar.backgroundColor": "#fff",
                                          "client.toolbarMode": "minimal", "client.showErrorDetails": "true"}
