"""Review databases at an older schema, for the migration tests."""

from __future__ import annotations


def upgrade_to(conn, revision: str) -> None:
    """Run the review migrations on ``conn`` (an SQLAlchemy connection in a transaction) up to ``revision``."""
    from alembic import command
    from alembic.config import Config

    from evaluators.review import schema

    config = Config()
    config.set_main_option("script_location", str(schema._MIGRATIONS))
    config.attributes["connection"] = conn
    command.upgrade(config, revision)
