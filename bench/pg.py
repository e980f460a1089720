"""A PostgreSQL database made for one benchmark and dropped after it (``bench/review.py``, ``bench/runs.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def temporary_database(server_url: str) -> Iterator[str]:
    """A new database on the server of ``server_url``; yields its URL, drops it (``WITH (FORCE)``) at the end."""
    import sqlalchemy as sa

    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    name = f"evalboard_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as c:
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as c:
            c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
