"""EvalBoard is an installable package: ``pip install .`` then ``evalboard ...`` (issue 16).

The metadata checks run everywhere; the clean-virtualenv install (PyPI downloads, ~1 minute)
runs under ``CI=true`` or with ``EVALBOARD_TEST_INSTALL=1``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import IN_CI, ROOT


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


@pytest.mark.skipif(not (IN_CI or os.environ.get("EVALBOARD_TEST_INSTALL")),
                    reason="downloads the dependencies into a new virtualenv (CI, or EVALBOARD_TEST_INSTALL=1)")
def test_pip_install_in_a_clean_virtualenv_gives_the_evalboard_command(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "requirements.txt", "app.py"):
        shutil.copy(ROOT / name, src / name)
    for name in ("evaluators", "components", "pages"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / "bin"
    install = subprocess.run([str(bin_dir / "pip"), "install", "-q", "--disable-pip-version-check", str(src)],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    out = subprocess.run([str(bin_dir / "evalboard"), "qa", "--help"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: evalboard qa")
    assert "--input" in out.stdout
    # the demo data ships inside the package, and the dashboard's files beside it
    demo = subprocess.run([str(bin_dir / "python"), "-c",
                           "import evaluators.demo as d, pathlib; print(len(list(pathlib.Path(d.__file__).parent.rglob('*.json*'))))"],
                          capture_output=True, text=True, cwd=tmp_path, check=True)
    assert int(demo.stdout) > 5
    assert (venv / "share" / "evalboard" / "app.py").exists()
    assert (venv / "share" / "evalboard" / "pages" / "6_Review.py").exists()
    # the review database's migrations ship too: a new database is created from the installed package
    made = subprocess.run([str(bin_dir / "python"), "-c",
                           "from evaluators.review.store import ReviewStore; from evaluators.review import schema; "
                           f"s = ReviewStore({str(tmp_path / 'review.sqlite')!r}); print(schema.HEAD)"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-2000:]
