"""Alembic environment of the review database: always run from :func:`evaluators.review.schema.ensure_schema`,
which passes an open connection (holding the migration lock) in ``config.attributes["connection"]``."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
