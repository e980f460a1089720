"""Fixtures of the page tests: the files behind deferred download buttons, and the judge settings of the
long-memory page (the empty result store is in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.pages.helpers import capture_downloads


@pytest.fixture
def deferred_downloads(monkeypatch) -> dict[str, Callable[[], bytes]]:
    """``{file name: callable}`` of each download button given a callable (made on click) in the runs."""
    return capture_downloads(monkeypatch)


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No judge endpoint from the environment; the long-memory page's caches go to a temporary folder."""
    for var in ("EVALBOARD_JUDGE_BASE_URL", "EVALBOARD_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY",
                "EVALBOARD_JUDGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EVALBOARD_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path
