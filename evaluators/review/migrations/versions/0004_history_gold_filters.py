"""Schema 4: the append-only decision history (every save, undo and import of a decision, who and
when, old -> new, the guidelines version and whether the session was blind), the guidelines version
of each decision, and each item's system and automatic score (the Review queue's filters).

Existing decisions get one ``migrated`` history row each (their state at the upgrade); existing
items get their system and score from their payload.

Revision ID: 0004
Revises: 0003
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

#: Where an item kept its automatic score at this revision (evaluators.review.items.AUTOMATIC, copied).
_AUTOMATIC = {"qa": ("exact_match",), "memory": ("scores", "judge_score"), "dialogue": ("combined",),
              "testsets": ("score",)}


def _score(payload: dict):
    value = payload
    path = _AUTOMATIC.get(str(payload.get("kind", "")), ())
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if path and isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _system(payload: dict):
    value = payload.get("system")
    return None if value is None or isinstance(value, (dict, list)) or value == "" else str(value)[:256]


def upgrade() -> None:
    op.create_table(
        "decision_history", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.Integer, nullable=False), sa.Column("item_id", sa.Integer, nullable=False),
        sa.Column("annotator", sa.String(256), nullable=False), sa.Column("actor", sa.String(256), nullable=False),
        sa.Column("action", sa.String(16), nullable=False), sa.Column("at", sa.String(40), nullable=False),
        sa.Column("old_version", sa.Integer), sa.Column("old_label", sa.String(32)), sa.Column("old_score", sa.Integer),
        sa.Column("old_comment", sa.Text), sa.Column("old_status", sa.String(16)),
        sa.Column("old_guidelines_version", sa.Integer),
        sa.Column("new_version", sa.Integer), sa.Column("new_label", sa.String(32)),
        sa.Column("new_score", sa.Integer), sa.Column("new_comment", sa.Text), sa.Column("new_status", sa.String(16)),
        sa.Column("guidelines_version", sa.Integer), sa.Column("blind", sa.Boolean, nullable=False),
        sa.Column("undoes", sa.Integer, nullable=True))
    op.add_column("decisions", sa.Column("guidelines_version", sa.Integer, nullable=True))
    op.add_column("items", sa.Column("system", sa.String(256), nullable=True))
    op.add_column("items", sa.Column("metric", sa.Float, nullable=True))
    bind = op.get_bind()
    bind.execute(sa.text(
        "INSERT INTO decision_history (session_id, item_id, annotator, actor, action, at, new_version, new_label, "
        "new_score, new_comment, new_status, blind) "
        "SELECT decisions.session_id, decisions.item_id, decisions.annotator, decisions.annotator, 'migrated', "
        "decisions.updated_at, decisions.version, decisions.label, decisions.score, decisions.comment, "
        "decisions.status, sessions.blind FROM decisions JOIN sessions ON sessions.id = decisions.session_id "
        "ORDER BY decisions.updated_at, decisions.id"))
    last = 0
    while True:  # the filter columns of existing items, 2,000 at a time
        rows = bind.execute(sa.text("SELECT id, payload FROM items WHERE id > :last ORDER BY id LIMIT 2000"),
                            {"last": last}).all()
        if not rows:
            break
        last = rows[-1][0]
        values = []
        for item_id, text in rows:
            try:
                payload = json.loads(text)
            except ValueError:
                payload = {}
            payload = payload if isinstance(payload, dict) else {}
            values.append({"i": item_id, "s": _system(payload), "m": _score(payload)})
        bind.execute(sa.text("UPDATE items SET system = :s, metric = :m WHERE id = :i"), values)
    op.create_index("ix_history_session_annotator", "decision_history", ["session_id", "annotator", "id"])
    op.create_index("ix_history_item", "decision_history", ["item_id", "id"])
    bind.execute(sa.text("UPDATE meta SET value = '4' WHERE key = 'schema_version'"))
