"""The lock files pin what the requirement files declare, agree with each other, and are what CI installed.

``requirements.lock`` (the runtime) and ``requirements-dev.lock`` (runtime + tests) are written by
pip-compile from ``requirements.txt`` and ``requirements-dev.txt`` (the command is in README "Run the
tests"); the ranges stay in the ``.txt`` files and ``pyproject.toml`` for people who embed the engine.
"""

from __future__ import annotations

import os
import re
from importlib import metadata

import pytest

from tests.conftest import ROOT
from tests.unit.test_declared_imports import normalize, requirement_names

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def pins(name: str) -> dict[str, str]:
    """``{normalised distribution: version}`` of a lock file."""
    out = {}
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line)
        if match:
            out[normalize(match.group(1))] = match.group(2)
    return out


def test_every_declared_requirement_is_pinned():
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    assert requirement_names(ROOT / "requirements.txt") - set(runtime) == set()
    declared_dev = {n for n in requirement_names(ROOT / "requirements-dev.txt")}
    assert declared_dev - set(dev) == set()


def test_the_two_locks_pin_the_runtime_alike():
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    assert {n: v for n, v in runtime.items() if dev.get(n) != v} == {}


def test_the_locks_are_written_from_the_current_requirement_files():
    # pip-compile writes the input file of every top-level pin ("# via -r requirements.txt"): a name
    # added to a .txt file and not compiled yet has no pin (the test above); one removed keeps its "via".
    for lock, txt in (("requirements.lock", "requirements.txt"), ("requirements-dev.lock", "requirements-dev.txt")):
        text = (ROOT / lock).read_text(encoding="utf-8")
        top = set()
        for block in re.split(r"\n(?=[A-Za-z0-9])", text):
            match = _PIN.match(block)
            if match and re.search(r"#\s+(?:via\s+)?-r requirements(?:-dev)?\.txt", block):
                top.add(normalize(match.group(1)))
        direct = {normalize(m.group(1)) for line in (ROOT / txt).read_text().splitlines()
                  if (m := re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line))}
        if txt == "requirements-dev.txt":
            direct |= {normalize(m.group(1)) for line in (ROOT / "requirements.txt").read_text().splitlines()
                       if (m := re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line))}
        assert top == direct, lock


@pytest.mark.skipif(os.environ.get("CI") != "true" or os.environ.get("EVALBOARD_NEWEST") == "1",
                    reason="CI installs the lock into a new virtualenv; elsewhere the environment is the developer's")
def test_ci_runs_the_locked_versions():
    wrong = {}
    for name, version in pins("requirements-dev.lock").items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            wrong[name] = (version, installed)
    assert wrong == {}
