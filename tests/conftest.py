"""Shared fixtures: project paths and the real data in ../shared/data.

Tests that need ``../shared/data`` skip when it is absent, except under ``CI=true``
where its absence is a failure (DESIGN.md, "Testing").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (ROOT.parent / "shared" / "data").resolve()
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_shared(*parts: str) -> Path:
    """Path under ../shared/data; skip the test if absent (fail under CI=true)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        msg = f"real data not found: {path}"
        if IN_CI:
            pytest.fail(msg + " (required under CI=true)")
        pytest.skip(msg)
    return path


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder."""
    return require_shared()


@pytest.fixture(scope="session")
def fairytales() -> Path:
    return require_shared("fairytales")
