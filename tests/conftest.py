"""Shared fixtures: project paths, the real data in ../shared/data, an empty result store
and an embedding backend that cannot run.

Tests that need ``../shared/data`` skip when it is absent, except under ``CI=true``
where its absence is a failure (DESIGN.md, "Testing").
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

# Authlib, first imported, puts warnings.simplefilter("always", AuthlibDeprecationWarning) in front of every
# filter, so the pyproject.toml filters of its deprecations (named there by message and module) would lose to it
# in the test that imports it first.  Imported here, inside catch_warnings, that filter is dropped at once.
with warnings.catch_warnings():
    try:
        import authlib.deprecate  # noqa: F401
    except ImportError:  # pragma: no cover - Authlib is in requirements.txt
        pass

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
def empty_result_store(monkeypatch):
    """Start and end with no result kept by ``components.cache.cached`` (it is process-wide), and none
    taken from the demo results the package ships (:mod:`components.demo_cache`): the demo is computed."""
    from components.cache import results
    from components.demo_cache import SWITCH

    monkeypatch.setenv(SWITCH, "0")
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


# ---------------------------------------------------------------- review databases
#: A PostgreSQL server for the review tests (``.ci/run`` starts one and sets it), e.g.
#: ``postgresql+psycopg://postgres@127.0.0.1:55432/postgres``; each test gets its own database.
TEST_DATABASE_URL = os.environ.get("EVALBOARD_TEST_DATABASE_URL", "")
REVIEW_BACKENDS = ["sqlite", "postgresql"]


def _fresh_postgres_database(request) -> str:
    import uuid

    import sqlalchemy as sa

    if not TEST_DATABASE_URL:
        msg = "EVALBOARD_TEST_DATABASE_URL is not set (no PostgreSQL server for the review tests)"
        if IN_CI:
            pytest.fail(msg + " (required under CI=true: .ci/run sets it)")
        pytest.skip(msg)
    admin = sa.create_engine(TEST_DATABASE_URL, isolation_level="AUTOCOMMIT")
    name = f"evalboard_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as c:
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.make_url(TEST_DATABASE_URL).set(database=name).render_as_string(hide_password=False)

    def drop():
        from evaluators.review import store as review_store

        for s in list(review_store.OPEN_STORES):
            if s.url == url:
                s.dispose()
        with admin.connect() as c:
            c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    request.addfinalizer(drop)
    return url


@pytest.fixture(params=REVIEW_BACKENDS)
def review_url(request, tmp_path) -> str:
    """A new, empty review database: an SQLite file, then a PostgreSQL database (when
    ``EVALBOARD_TEST_DATABASE_URL`` is set; skipped without it, failed under CI=true)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'review.sqlite'}"
    return _fresh_postgres_database(request)



# ---------------------------------------------------------------- what this session collected
#: ``{"total": n, "folders": {folder: n}, "e2e": n}`` of the tests collected in this session before ``-k`` or
#: ``-m`` deselected any (README's counts are checked against it: tests/unit/test_readme_counts.py).
COLLECTED = pytest.StashKey[dict]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    folders: dict[str, int] = {}
    for item in items:
        parts = Path(str(item.path)).resolve().parts
        if parts[:len(ROOT.parts) + 1] == (*ROOT.parts, "tests") and len(parts) > len(ROOT.parts) + 2:
            parts = parts[len(ROOT.parts):]
            folders[parts[1]] = folders.get(parts[1], 0) + 1
    config.stash[COLLECTED] = {"total": len(items), "folders": folders,
                               "e2e": sum(1 for item in items if item.get_closest_marker("e2e"))}

# ---------------------------------------------------------------- an installed EvalBoard
# Session-wide (the packaging test and the installed dashboard's browser test share one virtualenv);
# imported last: the helper reads IN_CI and ROOT from this module.
from tests.helpers.install import installed_evalboard  # noqa: E402, F401
