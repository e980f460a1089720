"""Fixtures of the page tests: the files behind deferred download buttons, and the judge settings of the
long-memory page (the empty result store is in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager


@pytest.fixture
def deferred_downloads(monkeypatch) -> dict[str, Callable[[], bytes]]:
    """``{file name: callable}`` of each download button given a callable (made on click) in the runs."""
    made: dict[str, Callable[[], bytes]] = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        made[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return made


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No judge endpoint from the environment; the long-memory page's caches go to a temporary folder."""
    for var in ("EVALBOARD_JUDGE_BASE_URL", "EVALBOARD_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY",
                "EVALBOARD_JUDGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EVALBOARD_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path
