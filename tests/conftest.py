"""Shared fixtures: project paths, the real data in ../shared/data, an empty result store
and an embedding backend that cannot run.

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


@pytest.fixture
def empty_result_store():
    """Start and end with no result kept by ``components.cache.cached`` (it is process-wide)."""
    from components.cache import results

    results().clear()
    yield
    results().clear()


class MissingEmbeddings:
    """An embedding backend that cannot run here (as without the optional install)."""

    name = "missing"
    signature = "emb=missing"

    def unavailable_reason(self) -> str:
        from evaluators.metrics.registry import OPTIONAL_INSTALL

        return f"package x is not installed ({OPTIONAL_INSTALL})"

    def embed(self, texts):  # pragma: no cover - an unavailable backend is never asked
        raise AssertionError("the unavailable embedding backend was asked to embed")


@pytest.fixture
def no_embeddings():
    """Semantic similarity unavailable (``MissingEmbeddings``) for the test, whatever is installed."""
    from evaluators.metrics import embeddings

    embeddings.set_embedding_backend(MissingEmbeddings())
    yield
    embeddings.set_embedding_backend(None)
