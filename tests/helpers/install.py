"""EvalBoard installed into a clean virtualenv, once per test session (``installed_evalboard``).

The virtualenv gets the locked runtime dependencies (``pip install -r requirements.lock``: pip's
cache makes a second run quick; with ``EVALBOARD_NEWEST=1`` the newest versions that pyproject.toml's
ranges allow instead), then the package itself from a copy of the project's files
(``pip install --no-deps <copy>``, a normal PEP 517 build): the checkout is never on its path.
It runs under ``CI=true`` or with ``EVALBOARD_TEST_INSTALL=1`` (it downloads what pip has not cached).
:class:`OutboundRecorder` stands in for the rest of the network while an installed server runs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import IN_CI, ROOT

#: What the build reads: pyproject.toml's metadata, packages and data files (the dashboard and its settings).
PROJECT_FILES = ("pyproject.toml", "README.md", "requirements.txt", "app.py")
PROJECT_DIRS = ("evaluators", "components", "pages", ".streamlit")
INSTALL_SWITCH = "EVALBOARD_TEST_INSTALL"
#: Set by .ci/run for its run on the newest versions the ranges allow: install those instead of the lock.
NEWEST_SWITCH = "EVALBOARD_NEWEST"


@dataclass(frozen=True)
class Installed:
    """A virtualenv holding EvalBoard and its locked dependencies."""

    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / ("Scripts" if os.name == "nt" else "bin")

    @property
    def python(self) -> Path:
        return self.bin / ("python.exe" if os.name == "nt" else "python")

    def env(self, **extra: str) -> dict[str, str]:
        """The environment to run its commands in: nothing from the checkout (no ``PYTHONPATH``)."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env.update(extra)
        return env


def copy_project(dst: Path) -> Path:
    """Copy the files a build of the package reads to ``dst`` (created); returns ``dst``."""
    dst.mkdir(parents=True)
    for name in PROJECT_FILES:
        shutil.copy(ROOT / name, dst / name)
    for name in PROJECT_DIRS:
        shutil.copytree(ROOT / name, dst / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "secrets.toml"))
    return dst


def install_required() -> None:
    """Skip the calling test unless installs are asked for (``CI=true`` or ``EVALBOARD_TEST_INSTALL=1``)."""
    if not (IN_CI or os.environ.get(INSTALL_SWITCH)):
        pytest.skip(f"installs EvalBoard into a new virtualenv (runs under CI=true, or with {INSTALL_SWITCH}=1)")


def _run(cmd: list, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="session")
def installed_evalboard(tmp_path_factory) -> Installed:
    """EvalBoard installed into a clean virtualenv (locked dependencies, then the package), for the session."""
    install_required()
    base = tmp_path_factory.mktemp("install")
    src = copy_project(base / "src")
    installed = Installed(base / "venv")
    _run([sys.executable, "-m", "venv", installed.venv])
    env = installed.env(PIP_DISABLE_PIP_VERSION_CHECK="1")
    # --no-compile: byte-compiling every installed module (pandas, scipy, plotly ...) took more than half the
    # install; the server compiles what it imports
    pip = [installed.python, "-m", "pip", "install", "-q", "--no-compile"]
    if os.environ.get(NEWEST_SWITCH) == "1":
        # .ci/run's second pass: the package with the newest versions its ranges allow (pyproject.toml)
        _run(pip + ["--upgrade", src], env=env, cwd=base)
    else:
        _run(pip + ["-r", ROOT / "requirements.lock"], env=env, cwd=base)
        _run(pip + ["--no-deps", src], env=env, cwd=base)
    _run([installed.python, "-m", "pip", "check"], env=env, cwd=base)  # the lock satisfies the package's requirements
    shutil.rmtree(src)  # nothing may come from the copy once installed
    return installed


class OutboundRecorder:
    """A TCP listener on 127.0.0.1 given to a process as its HTTP(S) proxy: every request the process makes
    to another host through ``requests``, ``urllib`` or ``httpx`` (which read the proxy variables) arrives
    here first, and its first line (``GET http://host/...``, ``CONNECT host:443``) is kept in :attr:`seen`.
    Nothing is forwarded."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0]
                except OSError:
                    first = b"(nothing read)"
                self.seen.append(first.decode("latin-1"))

    def proxy_env(self) -> dict[str, str]:
        """Proxy variables sending every request but those to this machine here."""
        local = "127.0.0.1,localhost,::1"
        return {"HTTP_PROXY": self.url, "HTTPS_PROXY": self.url, "ALL_PROXY": self.url,
                "http_proxy": self.url, "https_proxy": self.url, "all_proxy": self.url,
                "NO_PROXY": local, "no_proxy": local}

    def close(self) -> None:
        self._sock.close()
