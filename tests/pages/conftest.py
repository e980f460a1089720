"""Fixtures of the page tests: an empty result store, and the files behind deferred download buttons."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from components import uploads


@pytest.fixture
def empty_result_store():
    """Start and end with no result kept by ``components.uploads.cached`` (it is process-wide)."""
    uploads._result_store.clear()
    yield
    uploads._result_store.clear()


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
