"""EvalBoard is an installable package: ``pip install .`` then ``evalboard ...`` (issue 16).

The metadata checks run everywhere; the clean-virtualenv install (``tests/helpers/install.py``: the
locked dependencies, ~1 minute with pip's cache, shared with ``tests/e2e/test_installed_dashboard.py``)
runs under ``CI=true`` or with ``EVALBOARD_TEST_INSTALL=1``.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from tests.conftest import ROOT


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("-r")]


def test_dependencies_equal_requirements_txt():
    assert _project()["project"]["dependencies"] == _requirements(ROOT / "requirements.txt")


def test_every_page_and_package_data_folder_is_installed():
    config = _project()["tool"]["setuptools"]
    assert sorted(Path(p).name for p in config["data-files"]["share/evalboard/pages"]) == \
        sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    data = {p.parent.relative_to(ROOT / "evaluators").as_posix()
            for p in (ROOT / "evaluators").rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
            and "__pycache__" not in p.parts}
    patterns = config["package-data"]["evaluators"]
    # each folder holding data files is matched by one pattern (``demo/*/*`` covers demo/<task>/)
    for folder in data:
        assert any(re.fullmatch(pat.rsplit("/", 1)[0].replace("*", "[^/]+"), folder) for pat in patterns), folder
    # the dashboard's one data file: the demo's results (JSON), read from the installed package folder
    from components import demo_cache

    assert config["package-data"]["components"] == [demo_cache.SNAPSHOT.name]
    assert demo_cache.SNAPSHOT.parent == ROOT / "components" and demo_cache.SNAPSHOT.is_file()
    assert {p.name for p in (ROOT / "components").iterdir() if p.is_file() and p.suffix != ".py"} == {
        demo_cache.SNAPSHOT.name}


def test_console_script_is_the_module_cli():
    assert _project()["project"]["scripts"] == {"evalboard": "evaluators.cli:main_exit"}


def test_the_dashboard_settings_are_installed_beside_it():
    """``.streamlit/config.toml`` ships beside the installed app.py (Streamlit reads a config file beside the
    main script; ``evalboard serve`` passes its options as flags)."""
    files = _project()["tool"]["setuptools"]["data-files"]
    assert files["share/evalboard/.streamlit"] == [".streamlit/config.toml"]
    assert files["share/evalboard"] == ["app.py"]


def test_pip_install_in_a_clean_virtualenv_gives_the_evalboard_command(installed_evalboard, tmp_path):
    venv, bin_dir = installed_evalboard.venv, installed_evalboard.bin
    env = installed_evalboard.env()
    out = subprocess.run([str(bin_dir / "evalboard"), "qa", "--help"], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: evalboard qa")
    assert "--input" in out.stdout
    # the demo data ships inside the package, and the dashboard's files beside it
    demo = subprocess.run([str(bin_dir / "python"), "-c",
                           "import evaluators.demo as d, pathlib; print(len(list(pathlib.Path(d.__file__).parent.rglob('*.json*'))))"],
                          capture_output=True, text=True, cwd=tmp_path, check=True, env=env)
    assert int(demo.stdout) > 5
    share = venv / "share" / "evalboard"
    assert (share / "app.py").exists()
    assert sorted(p.name for p in (share / "pages").glob("*.py")) == sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    assert (share / ".streamlit" / "config.toml").read_bytes() == (ROOT / ".streamlit" / "config.toml").read_bytes()
    # `evalboard serve` finds them: in the distribution's file list and under the prefix
    found = subprocess.run([str(bin_dir / "python"), "-c",
                            "from evaluators.cli import serve; print(serve.find_dashboard()); print(serve._recorded())"],
                           capture_output=True, text=True, cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr[-2000:]
    assert found.stdout.splitlines() == [str(share.resolve()), repr([share.resolve()])]
    # the review database's migrations ship too: a new database is created from the installed package
    made = subprocess.run([str(bin_dir / "python"), "-c",
                           "from evaluators.review.store import ReviewStore; from evaluators.review import schema; "
                           f"s = ReviewStore({str(tmp_path / 'review.sqlite')!r}); print(schema.HEAD)"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr[-2000:]
