"""Review sessions in and out as JSONL: everything a session holds, imported in batches without
ever replacing newer work.

An export (format 2) is, in this order::

    {"type": "session", "format": 2, "session": name, "kind", "created_by", "created_at", "blind", "k", "seed",
     "settings": {"guidelines", "guidelines_version", "adjudicators", ...}, "uploads": [...]}
    {"type": "item", "session": name, "item_digest": sha256, "position": 0, "item": {...payload...}, "gold": null}
    ...                                  (every item, decided or not, by position)
    {"type": "decision", "session": name, "item_digest": ..., "annotator": ..., "label": ..., "score": ...,
     "comment": ..., "status": ..., "version": 1, "updated_at": ..., "seconds": 12.5,
     "guidelines_version": 2}
    ...                                  (by item position, then annotator; ``seconds``, the time on
                                          the item, and ``guidelines_version`` only where recorded)
    {"type": "adjudication", "session": name, "item_digest": ..., "adjudicator": ..., "label": ..., ...}

Lines of format 1 (a decision with its ``item`` payload and no ``type``) import too.

Importing restores the session (blind mode, k, seed, settings, roles, every item and its
position) when it is missing, and writes each decision keyed on (item digest, annotator):

- a decision the database does not hold is added;
- a stored decision is replaced only by a newer one (a higher or equal version *and* a later
  time); an older or contradicting line is a *conflict*, reported with its line, and skipped;
- the replacement is version-checked (optimistic locking): a reviewer's save between the import's
  read and its write wins, and the line is reported as a conflict;
- a second line for the same (item, annotator) is reported as a duplicate and skipped;
- every decision written is a row of the decision history (action ``import``, by the importer);
  the history itself is not exported (it stays with its database);
- every field is type-checked; a bad, too deep or undecodable line is reported with its line
  (and field) and skipped, and the good lines still import.

Lines are read one at a time and written in batches of :data:`BATCH_LINES` (one transaction
each), so memory stays flat and a large file imports at thousands of lines a second.  On
PostgreSQL each step of a batch (find items, add items, read the stored decisions, add, replace,
count) is one statement over binary arrays, so a batch costs a handful of round trips whatever
its size.  Importing the same file twice changes nothing; export -> import into an empty
database -> export gives the same bytes.  Other readers (Label Studio tasks:
:mod:`evaluators.review.label_studio`) hand their records to the same path
(:func:`import_records`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from evaluators.io import InputIssue
from evaluators.io.readers import iter_jsonl
from evaluators.results import DictMixin
from evaluators.review.items import filter_columns
from evaluators.review.limits import MAX_NAME, canonical_payload, check_name, check_text
from evaluators.review.schema import (
    adjudications_table,
    decisions_table,
    items_table,
    sessions_table,
)
from evaluators.review.store import (
    ALL_LABELS,
    ReviewStore,
    _audit_insert,
    _now,
    _settings_json,
    check_decision,
    history_row,
    is_two_sided,
    item_rank,
    label_fits,
    new_session_id,
    ordered_by_position,
    record_history,
)

FORMAT = 2
#: What :func:`~evaluators.review.store.label_fits` needs of a two-sided and of a one-sided item.
_TWO_SIDED, _ONE_SIDED = {"sides": {}}, {}
#: Lines per import batch (one transaction).
BATCH_LINES = 5_000
_HASH = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class ImportReport(DictMixin):
    """What an import did.

    Attributes
    ----------
    written : int
        Decisions added or replaced.
    unchanged : int
        Decisions already stored as in the file.
    conflicts : int
        Lines not imported because the stored decision is newer (or changed meanwhile).
    duplicates : int
        Second lines for one (item, annotator).
    sessions_created, items_added, adjudications : int
    issues : list of InputIssue
        Every skipped line (bad, conflict, duplicate), located by line.
    """

    written: int = 0
    unchanged: int = 0
    conflicts: int = 0
    duplicates: int = 0
    sessions_created: int = 0
    items_added: int = 0
    adjudications: int = 0
    issues: list[InputIssue] = field(default_factory=list)

    @property
    def imported(self) -> int:
        """Lines that ended in the database's state (written or unchanged)."""
        return self.written + self.unchanged


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:60])
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return f"a JSON {type(value).__name__}"


def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


# ---------------------------------------------------------------- export
def iter_export(store: ReviewStore, session_id: int) -> Iterator[str]:
    """The session as JSONL lines (each ending in a newline), streamed (see the module docstring)."""
    s = store.session(session_id)
    yield _dumps({"type": "session", "format": FORMAT, "session": s.name, "kind": s.kind,
                  "created_by": s.created_by, "created_at": s.created_at, "blind": s.blind, "k": s.k,
                  "seed": s.seed, "settings": s.settings or {}, "uploads": list(s.uploads)}) + "\n"
    for item in store.iter_items(session_id):
        yield _dumps({"type": "item", "session": s.name, "item_digest": item.digest, "position": item.position,
                      "item": item.payload, "gold": item.gold}) + "\n"
    for dec in store.iter_decisions(session_id):
        yield _dumps({"type": "decision", "session": s.name, "item_digest": dec.item_digest,
                      "annotator": dec.annotator, "label": dec.label, "score": dec.score, "comment": dec.comment,
                      "status": dec.status, "version": dec.version, "updated_at": dec.updated_at,
                      **({"seconds": dec.seconds} if dec.seconds is not None else {}),
                      **({"guidelines_version": dec.guidelines_version}
                         if dec.guidelines_version is not None else {})}) + "\n"
    for adj in store.adjudications(session_id):
        yield _dumps({"type": "adjudication", "session": s.name, "item_digest": adj["item_digest"],
                      "adjudicator": adj["adjudicator"], "label": adj["label"], "comment": adj["comment"],
                      "updated_at": adj["updated_at"],
                      **({"corrected_answer": adj["corrected_answer"]} if adj["corrected_answer"] else {})}) + "\n"


def export_jsonl(store: ReviewStore, session_id: int) -> str:
    """:func:`iter_export` as one text (small sessions, downloads)."""
    return "".join(iter_export(store, session_id))


def write_jsonl(store: ReviewStore, session_id: int, out: IO[str]) -> int:
    """Stream the export into a text file; returns the number of lines."""
    n = 0
    for n, line in enumerate(iter_export(store, session_id), start=1):
        out.write(line)
    return n


# ---------------------------------------------------------------- import
class _Importer:
    def __init__(self, store: ReviewStore, file: str, created_by: str, audit: Mapping[str, Any] | None = None):
        self.store, self.file, self.created_by = store, file, created_by
        #: the import's audit row, until the first write commits it (:meth:`audit_once`)
        self.audit: Mapping[str, Any] | None = audit
        self.sessions: dict[str, tuple[int, int]] = {}      # name -> (id, k)
        self.created: set[int] = set()
        self.seen: dict[tuple[int, str], int] = {}          # (item id, annotator) -> first line
        self.issues: list[InputIssue] = []
        self.counts = {"written": 0, "unchanged": 0, "conflicts": 0, "duplicates": 0, "sessions_created": 0,
                       "items_added": 0, "adjudications": 0}
        self.batch: list[tuple[int, str, dict]] = []  # (line, type, checked line); its place in d["_where"]
        #: items found or added so far: (session, digest) -> (item id, two-sided)
        self.items: dict[tuple[int, str], tuple[int, bool]] = {}
        #: PostgreSQL: each step of a batch is one statement over arrays (see :func:`_insert_decisions`)
        self.pg = store.engine.dialect.name == "postgresql"
        #: a dry run: the one connection whose outer transaction holds every write, rolled back at the end
        self.dry: sa.Connection | None = None

    @contextmanager
    def write(self) -> Iterator[sa.Connection]:
        """A write transaction (its own; in a dry run a savepoint of the dry run's transaction)."""
        if self.dry is None:
            with self.store._write() as c:
                yield c
        else:
            with self.dry.begin_nested():
                yield self.dry

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """A connection to read with (in a dry run the dry run's own, which sees its writes)."""
        if self.dry is None:
            with self.store.engine.connect() as c:
                yield c
        else:
            yield self.dry

    def audit_once(self, c: sa.Connection) -> None:
        """Write the import's audit row in this write transaction if no earlier one has (the first write
        of the import carries it: no change of an import is committed without it)."""
        if self.audit is not None:
            _audit_insert(c, self.audit)
            self.audit = None

    def issue(self, line: int, message: str, kind: str = "schema", path: str | None = None,
              where: str | None = None) -> None:
        """Report a skipped line; ``where`` is the JSON path of the record in its file (Label Studio
        tasks), ``path`` the field within it."""
        if where:
            path = where + ("." + path if path else "")
        self.issues.append(InputIssue(self.file, message, line=line, path=path, kind=kind))

    # -- one line: checked, then queued
    def line(self, lineno: int, d: dict, *, where: str | None = None, unversioned: bool = False) -> None:
        """Check one line (a dict of the JSONL format) and queue it.

        ``where`` locates a record that is not a whole line (a Label Studio annotation);
        ``unversioned`` marks a decision whose file keeps no version (Label Studio): its time
        alone decides against a stored decision, and the write is still version-checked.

        Raises
        ------
        ValueError
            A bad field (the caller reports it with ``lineno`` and ``where``).
        """
        for private in ("_text", "_where"):  # our own keys, never taken from a file
            d.pop(private, None)
        d["_where"] = where
        kind = d.get("type", "decision" if "item" in d else None)
        if kind not in ("session", "item", "decision", "adjudication"):
            self.issue(lineno, f"'type' must be session, item, decision or adjudication, not {_show(kind)}",
                       path="type", where=where)
            return
        name = d.get("session")
        if not isinstance(name, str) or not name.strip():
            self.issue(lineno, f"'session' must be a session name, not {_show(name)}", path="session", where=where)
            return
        if kind == "session":
            self.flush()
            self.session_line(lineno, d)
            return
        if kind in ("item", "decision") and "item" in d:
            payload = d["item"]
            text = canonical_payload(payload, where="item")
            digest = _sha(text)
            if d.get("item_digest") is not None and d["item_digest"] != digest:
                raise ValueError("item_digest does not match the item (edited by hand?)")
            _check_payload(payload)
            d["_text"], d["item_digest"] = text, digest
        digest = d.get("item_digest")
        if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HASH):
            raise ValueError(f"item_digest must be a SHA-256 hex digest, not {_show(digest)}")
        if kind == "item":
            gold = d.get("gold")
            if gold is not None and gold not in ALL_LABELS:
                raise ValueError(f"gold must be one of {', '.join(ALL_LABELS)} or null, not {_show(gold)}")
            position = d.get("position")
            if position is not None and (isinstance(position, bool) or not isinstance(position, int)
                                         or position < 0):
                raise ValueError(f"position must be a non-negative integer, not {_show(position)}")
        elif kind == "decision":
            d["annotator"] = check_name(d.get("annotator"), "annotator")
            check_decision(d.get("label"), d.get("score"), d.get("comment"), d.get("status"))
            version = None if unversioned else d.get("version", 1)
            if not unversioned and (isinstance(version, bool) or not isinstance(version, int)
                                    or not 1 <= version < 2**31):
                raise ValueError(f"version must be a positive integer, not {_show(version)}")
            d["version"] = version
            _check_stamp(d.get("updated_at"))
            seconds = d.get("seconds")
            if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                        or not 0 <= seconds < 1e7):
                raise ValueError(f"seconds must be a non-negative number or null, not {_show(seconds)}")
            gv = d.get("guidelines_version")
            if gv is not None and (isinstance(gv, bool) or not isinstance(gv, int) or not 0 <= gv < 2**31):
                raise ValueError(f"guidelines_version must be a non-negative integer or null, not {_show(gv)}")
        else:
            d["adjudicator"] = check_name(d.get("adjudicator"), "adjudicator")
            if d.get("label") not in ALL_LABELS:
                raise ValueError(f"label must be one of {', '.join(ALL_LABELS)}, not {_show(d.get('label'))}")
            check_text(d.get("comment"), "comment")
            check_text(d.get("corrected_answer"), "corrected_answer")
            _check_stamp(d.get("updated_at"))
        self.batch.append((lineno, kind, d))
        if len(self.batch) >= BATCH_LINES:
            self.flush()

    def session_line(self, lineno: int, d: dict) -> None:
        name = check_name(d["session"], "session")
        if name in self.sessions:
            return
        existing = self.store.session_by_name(name)
        if existing is not None:
            self.sessions[name] = (existing.id, existing.k)
            return
        kind = check_name(d.get("kind") or "import", "kind")
        owner = check_name(d.get("created_by") or self.created_by, "created_by")
        blind, k, seed = d.get("blind", False), d.get("k", 1), d.get("seed", 0)
        if not isinstance(blind, bool):
            raise ValueError(f"blind must be true or false, not {_show(blind)}")
        for key, value in (("k", k), ("seed", seed)):
            if isinstance(value, bool) or not isinstance(value, int) or not -2**31 <= value < 2**31:
                raise ValueError(f"{key} must be an integer, not {_show(value)}")
        if k < 1:
            raise ValueError("k must be >= 1")
        settings = d.get("settings") or {}
        if not isinstance(settings, dict):
            raise ValueError(f"settings must be an object, not {_show(settings)}")
        settings_text = _settings_json(settings)
        uploads = d.get("uploads") or []
        if not isinstance(uploads, list) or not all(isinstance(u, str) and len(u) <= 64 for u in uploads):
            raise ValueError("uploads must be a list of digests")
        created_at = d.get("created_at") or _now()
        _check_stamp(created_at)
        with self.write() as c:
            try:
                with c.begin_nested():
                    sid = c.execute(sessions_table.insert().values(
                        **new_session_id(c), name=name, kind=kind[:32], created_by=owner, blind=blind, k=k,
                        seed=seed, uploads=json.dumps(uploads), created_at=created_at, settings=settings_text,
                        n_items=0, changes=0)).inserted_primary_key[0]
                    self.audit_once(c)
            except IntegrityError:  # made meanwhile by another process
                sid = None
        if sid is None:
            made = self.store.session_by_name(name)
            self.sessions[name] = (made.id, made.k)
            return
        self.sessions[name] = (sid, k)
        self.created.add(sid)
        self.counts["sessions_created"] += 1

    def session_of(self, lineno: int, d: dict) -> int:
        name = d["session"].strip()
        if name not in self.sessions:
            self.session_line(lineno, {"session": name, "kind": d.get("kind") or (d.get("item") or {}).get("kind")})
        return self.sessions[name][0]

    # -- a batch: items, then decisions (read, then version-checked writes), then adjudications
    def flush(self) -> None:
        batch, self.batch = self.batch, []
        if not batch:
            return
        #: items carried by the batch's lines: (session, digest) -> (payload JSON, position, gold, two-sided,
        #: the Review queue's filter columns)
        wanted: dict[tuple[int, str], tuple[str, int | None, str | None, bool, dict]] = {}
        rows = []
        for lineno, kind, d in batch:
            try:
                sid = self.session_of(lineno, d)
            except ValueError as exc:
                self.issue(lineno, str(exc), where=d["_where"])
                continue
            rows.append((lineno, kind, d, sid))
            if "_text" in d:
                key = (sid, d["item_digest"])
                have = wanted.get(key)
                if have is None or (have[1] is None and kind == "item"):  # an item line's position and gold win
                    wanted[key] = (d["_text"], d.get("position") if kind == "item" else None,
                                   d.get("gold") if kind == "item" else None, is_two_sided(d["item"]),
                                   filter_columns(d["item"]))
        self.resolve_items(wanted, {(sid, d["item_digest"]) for _, _, d, sid in rows} - self.items.keys())
        decisions = []
        for lineno, kind, d, sid in rows:
            item = self.items.get((sid, d["item_digest"]))
            if item is None:
                self.issue(lineno, "no item with this item_digest in the session (its item line is missing)",
                           path="item_digest", where=d["_where"])
                continue
            item_id, two_sided = item
            if kind == "decision":
                key = (item_id, d["annotator"])
                if key in self.seen:
                    self.counts["duplicates"] += 1
                    self.issue(lineno, f"duplicate decision of {d['annotator']!r} on this item (first at line "
                                       f"{self.seen[key]}): skipped", kind="duplicate", where=d["_where"])
                    continue
                self.seen[key] = lineno
                if not label_fits(d.get("label"), _TWO_SIDED if two_sided else _ONE_SIDED):
                    self.issue(lineno, f"label {d['label']!r} does not fit this item (A/B labels are for two-sided "
                                       "items only)", path="label", where=d["_where"])
                    continue
                decisions.append((lineno, d, sid, item_id))
            elif kind == "adjudication":
                self.adjudication(lineno, d, item_id, sid)
        self.write_decisions(decisions)

    def resolve_items(self, wanted: dict[tuple[int, str], tuple], keys: set[tuple[int, str]]) -> None:
        """Find the items of ``keys`` (session, digest) in the database, adding those it lacks that the
        file carries, into :attr:`items` (items are never deleted, so an id found stays right)."""
        named: dict[int, list[str]] = {}    # items the file names by digest only: looked up
        carried: dict[int, list[str]] = {}  # items the file carries: looked up and added where missing
        order = {key: n for n, key in enumerate(wanted)}  # the file's order (items without a position keep it)
        for sid, digest in sorted(keys, key=lambda key: order.get(key, -1)):
            (carried if (sid, digest) in wanted else named).setdefault(sid, []).append(digest)
        for sid, digests in named.items():
            with self.read() as c:
                ids = _item_ids(c, sid, digests, self.pg)
                for item_id, dg, payload in _item_payloads(c, list(ids.values()), self.pg):
                    self.items[(sid, dg)] = (item_id, is_two_sided(json.loads(payload)))
        for sid, digests in carried.items():
            digests.sort(key=lambda dg: (wanted[(sid, dg)][1] is None, wanted[(sid, dg)][1] or 0))  # positions
            with self.write() as c:
                # the session row locked: one writer at a time numbers new items (PostgreSQL; SQLite's
                # writes are serial already)
                n, seed, settings = c.execute(sa.select(sessions_table.c.n_items, sessions_table.c.seed,
                                                        sessions_table.c.settings)
                                              .where(sessions_table.c.id == sid).with_for_update()).one()
                ordered = ordered_by_position(settings)
                # in a session this import created, an item not met yet in the file is new: no lookup first
                # (PostgreSQL: one that someone added meanwhile is left out by the insert, and looked up after)
                fresh = self.pg and sid in self.created
                ids = {} if fresh else _item_ids(c, sid, digests, self.pg)
                new = []
                for dg in digests:
                    if dg not in ids:
                        new.append({"session_id": sid, "position": n + len(new), "digest": dg,
                                    "payload": wanted[(sid, dg)][0], "rank": item_rank(seed, n + len(new), ordered),
                                    "gold": wanted[(sid, dg)][2], **wanted[(sid, dg)][4]})
                if new:
                    added = _insert_items(c, new, self.pg)
                    ids.update(added)
                    if len(added) < len(new):
                        ids.update(_item_ids(c, sid, [r["digest"] for r in new if r["digest"] not in added],
                                             self.pg))
                    c.execute(sessions_table.update().where(sessions_table.c.id == sid)
                              .values(n_items=n + len(new), changes=sessions_table.c.changes + 1))
                    self.counts["items_added"] += len(added)
                    if added:
                        self.audit_once(c)
            for dg, item_id in ids.items():
                self.items[(sid, dg)] = (item_id, wanted[(sid, dg)][3])

    def write_decisions(self, decisions: list[tuple[int, dict, int, int]]) -> None:
        if not decisions:
            return
        # read first, without a lock: the writes below are version-checked.  A session this import
        # created held no decision before it: one there now was saved by a reviewer during the import,
        # and the insert keeps it (the line is a conflict), so its items need no read.
        known = sorted({item_id for _l, _d, sid, item_id in decisions if sid not in self.created})
        stored: dict[tuple[int, str], Any] = {}
        if known:
            with self.read() as c:
                stored = _stored_decisions(c, known, self.pg)
        inserts, updates = [], []
        for lineno, dec, sid, item_id in decisions:
            at = (lineno, dec["_where"])
            seconds = dec.get("seconds")
            values = {"label": dec.get("label"), "score": dec.get("score"), "comment": dec.get("comment") or "",
                      "status": dec["status"], "updated_at": dec.get("updated_at") or _now(),
                      "seconds": None if seconds is None else float(seconds),
                      "guidelines_version": dec.get("guidelines_version")}
            version = dec.get("version", 1)  # None: the file keeps no versions, its time alone decides
            old = stored.get((item_id, dec["annotator"]))
            if old is None:
                inserts.append((at, sid, item_id, dec["annotator"], version or 1, values))
                continue
            same = all(getattr(old, k) == values[k] for k in ("label", "score", "comment", "status"))
            if same and old.updated_at == values["updated_at"]:
                self.counts["unchanged"] += 1
                continue
            newer_time = values["updated_at"] > old.updated_at
            newer_version = version is None or version >= old.version
            if not (newer_time and newer_version):
                self.conflict(at, dec["annotator"], old, version, values["updated_at"])
                continue
            updates.append((at, sid, item_id, dec["annotator"], max(version or 0, old.version + 1), old, values))
        self._apply(inserts, updates)

    def conflict(self, at: tuple[int, str | None], annotator: str, old, version: int | None, stamp: str,
                 meanwhile: bool = False) -> None:
        """Count and report a line not imported because of a stored decision; ``at`` is (line, where)."""
        self.counts["conflicts"] += 1
        if meanwhile:
            text = f"the decision of {annotator!r} on this item changed while importing: the reviewer's save is kept"
        else:
            mine = f"version {version}, {stamp}" if version is not None else stamp
            text = (f"conflict: the stored decision of {annotator!r} (version {old.version}, {old.updated_at}) is "
                    f"newer than or contradicts this line's ({mine}): not imported")
        self.issue(at[0], text, kind="conflict", where=at[1])

    def _apply(self, inserts, updates) -> None:
        """Write a batch in one transaction: new decisions (a reviewer's save of the same key meanwhile
        wins), then replacements where the stored version is still the one read; every line that
        lost to a reviewer is a conflict."""
        deltas: dict[int, int] = {}
        touched: dict[int, int] = {}
        changes: list[tuple[int, int, str, Any, dict]] = []   # (session, item, annotator, old, new): the history
        with self.write() as c:
            rows = [{"item_id": item_id, "annotator": annotator, "version": version, "session_id": sid, **values}
                    for _lineno, sid, item_id, annotator, version, values in inserts]
            added = _insert_decisions(c, rows, self.pg)
            for (at, sid, item_id, annotator, version, values) in inserts:
                if (item_id, annotator) not in added:  # saved meanwhile by a reviewer: theirs is kept
                    self.conflict(at, annotator, None, version, values["updated_at"], meanwhile=True)
                    continue
                changes.append((sid, item_id, annotator, None, {**values, "version": version}))
                self.counts["written"] += 1
                deltas[item_id] = deltas.get(item_id, 0) + int(values["status"] == "submitted")
                touched[sid] = touched.get(sid, 0) + 1
            changed = _update_decisions(c, [{"item_id": item_id, "annotator": annotator, "old_version": old.version,
                                             "version": version, **values}
                                            for _l, _s, item_id, annotator, version, old, values in updates], self.pg)
            for at, sid, item_id, annotator, version, old, values in updates:
                if (item_id, annotator) not in changed:
                    self.conflict(at, annotator, old, version, values["updated_at"], meanwhile=True)
                    continue
                changes.append((sid, item_id, annotator, old, {**values, "version": version}))
                self.counts["written"] += 1
                delta = int(values["status"] == "submitted") - int(old.status == "submitted")
                deltas[item_id] = deltas.get(item_id, 0) + delta
                touched[sid] = touched.get(sid, 0) + 1
            _add_done(c, {item_id: delta for item_id, delta in deltas.items() if delta}, self.pg)
            for sid, n in touched.items():
                c.execute(sessions_table.update().where(sessions_table.c.id == sid)
                          .values(changes=sessions_table.c.changes + n))
            if changes:
                self.audit_once(c)
                blind = dict(c.execute(sa.select(sessions_table.c.id, sessions_table.c.blind)
                                       .where(sessions_table.c.id.in_(list(touched)))).all())
                record_history(c, [history_row(sid, item_id, annotator, self.created_by, "import", new["updated_at"],
                                               old, new, bool(blind.get(sid)))
                                   for sid, item_id, annotator, old, new in changes])

    def adjudication(self, lineno: int, d: dict, item_id: int, sid: int) -> None:
        a = adjudications_table
        stamp = d.get("updated_at") or _now()
        with self.write() as c:
            old = c.execute(sa.select(a.c.updated_at).where(a.c.item_id == item_id)).scalar()
            if old is not None and old >= stamp:
                return
            c.execute(a.delete().where(a.c.item_id == item_id))
            c.execute(a.insert().values(item_id=item_id, adjudicator=d["adjudicator"], label=d["label"],
                                        comment=d.get("comment") or "", updated_at=stamp,
                                        corrected_answer=(d.get("corrected_answer") or None)
                                        if d["label"] == "gt_error" else None))
            c.execute(sessions_table.update().where(sessions_table.c.id == sid)
                      .values(changes=sessions_table.c.changes + 1))
            self.audit_once(c)
        self.counts["adjudications"] += 1

    def finish(self) -> None:
        self.flush()


# ---------------------------------------------------------------- batch statements
# Each helper is one step of a batch.  On PostgreSQL it is one statement whose rows travel as arrays in
# binary (``%(name)b``: psycopg packs a list of 10,000 strings in milliseconds, where the text format
# escapes every element) and are unpacked by ``unnest``: one round trip and one plan per batch,
# whatever its size.  SQLite runs in-process, so there the plain statements (IN lists of 500,
# executemany) cost nothing to wait for.
_IN = 500
_ITEM_COLUMNS = (("session_id", "int"), ("position", "int"), ("digest", "text"), ("payload", "text"),
                 ("rank", "int"), ("gold", "text"), ("system", "text"), ("metric", "float8"))
_DECISION_COLUMNS = (("item_id", "int"), ("annotator", "text"), ("version", "int"), ("session_id", "int"),
                     ("label", "text"), ("score", "int"), ("comment", "text"), ("status", "text"),
                     ("updated_at", "text"), ("seconds", "float8"), ("guidelines_version", "int"))
#: What a stored decision is compared on.
_STORED = ("item_id", "annotator", "label", "score", "comment", "status", "version", "updated_at",
           "guidelines_version")
#: What an import may change in a stored decision.
_REPLACED = ("version", "label", "score", "comment", "status", "updated_at", "seconds", "guidelines_version")


def _chunks(values: list, size: int = _IN) -> Iterator[list]:
    for start in range(0, len(values), size):
        yield values[start:start + size]


def _unnest(columns: Iterable[tuple[str, str]]) -> str:
    """``unnest(CAST(%(a)b AS int[]), ...)``: a batch's rows, one binary array parameter per column."""
    return "unnest(" + ", ".join(f"CAST(%({name})b AS {kind}[])" for name, kind in columns) + ")"


def _arrays(rows: list[dict], columns: Iterable[tuple[str, str]]) -> dict[str, list]:
    return {name: [r[name] for r in rows] for name, _kind in columns}


def _keys(result) -> set[tuple[int, str]]:
    return {(item_id, annotator) for item_id, annotator in result.all()}


def _item_ids(c: sa.Connection, sid: int, digests: list[str], pg: bool) -> dict[str, int]:
    """Ids of the session's items with these digests."""
    if pg:
        return {dg: item_id for item_id, dg in c.exec_driver_sql(
            "SELECT id, digest FROM items WHERE session_id = %(sid)b AND digest = ANY(CAST(%(digests)b AS text[]))",
            {"sid": sid, "digests": digests}).all()}
    i = items_table
    return {dg: item_id for chunk in _chunks(digests)
            for item_id, dg in c.execute(sa.select(i.c.id, i.c.digest).where(i.c.session_id == sid,
                                                                              i.c.digest.in_(chunk)))}


def _item_payloads(c: sa.Connection, ids: list[int], pg: bool) -> list:
    """``(id, digest, payload JSON)`` rows of these items."""
    if not ids:
        return []
    if pg:
        return c.exec_driver_sql("SELECT id, digest, payload FROM items WHERE id = ANY(CAST(%(ids)b AS int[]))",
                                 {"ids": ids}).all()
    i = items_table
    return [r for chunk in _chunks(ids)
            for r in c.execute(sa.select(i.c.id, i.c.digest, i.c.payload).where(i.c.id.in_(chunk)))]


def _insert_items(c: sa.Connection, rows: list[dict], pg: bool) -> dict[str, int]:
    """Add items (of one session); returns the ids of those added, by digest.  An item of the same
    digest added meanwhile by someone else is left as it is (PostgreSQL) and not in the result."""
    if pg:
        names = ", ".join(name for name, _kind in _ITEM_COLUMNS)
        return {dg: item_id for item_id, dg in c.exec_driver_sql(
            f"INSERT INTO items ({names}) SELECT * FROM {_unnest(_ITEM_COLUMNS)} "
            "ON CONFLICT (session_id, digest) DO NOTHING RETURNING id, digest", _arrays(rows, _ITEM_COLUMNS)).all()}
    c.execute(items_table.insert(), rows)
    return _item_ids(c, rows[0]["session_id"], [r["digest"] for r in rows], pg)


def _stored_decisions(c: sa.Connection, item_ids: list[int], pg: bool) -> dict[tuple[int, str], Any]:
    """The stored decisions on these items (the fields of :data:`_STORED`) by (item id, annotator)."""
    if pg:
        rows = c.exec_driver_sql(f"SELECT {', '.join(_STORED)} FROM decisions "
                                 "WHERE item_id = ANY(CAST(%(ids)b AS int[]))", {"ids": item_ids}).all()
    else:
        d = decisions_table
        rows = (r for chunk in _chunks(item_ids)
                for r in c.execute(sa.select(*(d.c[k] for k in _STORED)).where(d.c.item_id.in_(chunk))))
    return {(r.item_id, r.annotator): r for r in rows}


def _insert_decisions(c: sa.Connection, rows: list[dict], pg: bool) -> set[tuple[int, str]]:
    """Add decisions; returns the (item id, annotator) keys added.  A key that a reviewer saved since
    it was read is left as the reviewer saved it (and is not in the result)."""
    if not rows:
        return set()
    if pg:
        names = ", ".join(name for name, _kind in _DECISION_COLUMNS)
        result = c.exec_driver_sql(
            f"INSERT INTO decisions ({names}) SELECT * FROM {_unnest(_DECISION_COLUMNS)} "
            "ON CONFLICT (item_id, annotator) DO NOTHING RETURNING item_id, annotator",
            _arrays(rows, _DECISION_COLUMNS))
        if result.rowcount == len(rows):  # the usual case: every row added, no key to read back
            result.close()
            return {(r["item_id"], r["annotator"]) for r in rows}
        return _keys(result)
    d = decisions_table
    try:  # the whole batch in one statement; row by row only when a reviewer saved one meanwhile
        with c.begin_nested():
            c.execute(d.insert(), rows)
        return {(r["item_id"], r["annotator"]) for r in rows}
    except IntegrityError:
        added = set()
        for row in rows:
            try:
                with c.begin_nested():
                    c.execute(d.insert().values(**row))
                added.add((row["item_id"], row["annotator"]))
            except IntegrityError:
                pass
        return added


def _update_decisions(c: sa.Connection, rows: list[dict], pg: bool) -> set[tuple[int, str]]:
    """Replace decisions whose stored version is still their ``old_version`` (optimistic locking);
    returns the keys replaced (a key a reviewer saved meanwhile is not)."""
    if not rows:
        return set()
    if pg:
        kinds = dict(_DECISION_COLUMNS)
        columns = [("item_id", "int"), ("annotator", "text"), ("old_version", "int"),
                   *((name, kinds[name]) for name in _REPLACED)]
        return _keys(c.exec_driver_sql(
            f"UPDATE decisions AS d SET {', '.join(f'{k} = v.{k}' for k in _REPLACED)} "
            f"FROM {_unnest(columns)} AS v({', '.join(name for name, _kind in columns)}) "
            "WHERE d.item_id = v.item_id AND d.annotator = v.annotator AND d.version = v.old_version "
            "RETURNING d.item_id, d.annotator", _arrays(rows, columns)))
    d = decisions_table
    done = set()
    for r in rows:
        if c.execute(d.update().where(d.c.item_id == r["item_id"], d.c.annotator == r["annotator"],
                                      d.c.version == r["old_version"])
                     .values(**{k: r[k] for k in _REPLACED})).rowcount == 1:
            done.add((r["item_id"], r["annotator"]))
    return done


def _add_done(c: sa.Connection, deltas: dict[int, int], pg: bool) -> None:
    """Add each item's change in submitted decisions to its ``n_done`` (item id -> change, none 0)."""
    if not deltas:
        return
    if pg:
        c.exec_driver_sql("UPDATE items SET n_done = items.n_done + v.delta FROM unnest(CAST(%(ids)b AS int[]), "
                          "CAST(%(deltas)b AS int[])) AS v(id, delta) WHERE items.id = v.id",
                          {"ids": list(deltas), "deltas": list(deltas.values())})
        return
    by_delta: dict[int, list[int]] = {}
    for item_id, delta in deltas.items():
        by_delta.setdefault(delta, []).append(item_id)
    for delta, ids in by_delta.items():
        for chunk in _chunks(ids):
            c.execute(items_table.update().where(items_table.c.id.in_(chunk))
                      .values(n_done=items_table.c.n_done + delta))


#: One record for :func:`import_records`: (line, dict of the JSONL format, where, unversioned).
Record = tuple[int, dict, "str | None", bool]


def import_records(store: ReviewStore, records: Iterable[Record | InputIssue], file: str, *,
                   created_by: str = "import", audit: Mapping[str, Any] | None = None,
                   dry_run: bool = False) -> ImportReport:
    """Check, batch and write records of the JSONL format (see the module docstring), from any reader.

    The one import path: :func:`import_jsonl` and the Label Studio import
    (:func:`evaluators.review.label_studio.import_label_studio`) both end here.

    Parameters
    ----------
    records : iterable
        ``(line, record, where, unversioned)`` tuples (``where``: the JSON path of a record that
        is not a whole line; ``unversioned``: a decision from a file without versions) and
        :class:`~evaluators.io.InputIssue` items for what the reader could not read.
    created_by : str
        Owner of a session created without its session line.
    audit : mapping, optional
        The import's audit row (:func:`evaluators.review.service.audit_row`).  An import is many transactions
        (one per batch, so memory stays flat and reviewers' saves are never held behind a whole file), so the
        row cannot share "the" transaction: it is written in the import's *first* write transaction, the
        one that commits its first change.  Hence no change of an import is ever stored without it; an import
        that writes nothing (every line refused, unchanged or a conflict) leaves none; one that fails after
        some batches keeps those batches and the row (what it wrote stays, as the module docstring says).
    dry_run : bool
        Check and write exactly as an import does, every batch inside one transaction that is rolled back at
        the end: the report says what the import would do (against the database as it is now) and nothing,
        not the audit row either, is stored.  The transaction holds the write lock while it runs (SQLite), so
        a dry run is for files of a size a page accepts.
    """
    imp = _Importer(store, file, check_name(created_by, "created_by"), audit)
    if not dry_run:
        return _run(imp, records)
    with store._writer.connect() as c:
        outer = c.begin()
        imp.dry = c
        try:
            return _run(imp, records)
        finally:
            outer.rollback()


def _run(imp: _Importer, records: Iterable[Record | InputIssue]) -> ImportReport:
    for rec in records:
        if isinstance(rec, InputIssue):
            imp.issues.append(rec)
            continue
        lineno, d, where, unversioned = rec
        try:
            imp.line(lineno, d, where=where, unversioned=unversioned)
        except ValueError as exc:
            imp.issue(lineno, str(exc), where=where)
        except RecursionError:
            imp.issue(lineno, "a value is nested too deeply to be read", where=where)
    imp.finish()
    return ImportReport(issues=sorted(imp.issues, key=lambda i: (i.line or 0)), **imp.counts)


def import_jsonl(store: ReviewStore, data: bytes | IO[bytes], file: str = "<decisions>", *,
                 created_by: str = "import", audit: Mapping[str, Any] | None = None,
                 dry_run: bool = False) -> ImportReport:
    """Import a JSONL export (see the module docstring); returns an :class:`ImportReport`.

    Parameters
    ----------
    data : bytes or binary file
        Read one line at a time; a file is never held whole.
    created_by : str
        Owner of a session created from format-1 lines (format 2 carries its own).
    audit : mapping, optional
        The import's audit row, written with its first write (:func:`import_records`).
    dry_run : bool
        Report what the import would do and store nothing (:func:`import_records`).
    """
    head = data[:3] if isinstance(data, (bytes, bytearray, memoryview)) else data.read(3)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        data.seek(0)
    encoding = "utf-8-sig" if bytes(head) == b"\xef\xbb\xbf" else "utf-8"
    records = (rec if isinstance(rec, InputIssue) else (rec.line, rec.data, None, False)
               for rec in iter_jsonl(data, file, encoding=encoding, keep_raw=False))
    return import_records(store, records, file, created_by=created_by, audit=audit, dry_run=dry_run)


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_stamp(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str) or len(value) > 40 or not value[:4].isdigit():
        raise ValueError(f"updated_at must be an ISO 8601 time, not {_show(value)}")


#: Payload fields the page shows as numbers, and those it shows as text.
NUMBER_FIELDS = ("exact_match", "token_f1", "combined", "score")
TEXT_FIELDS = ("id", "question", "context", "ground_truth", "prediction", "system")


def _check_payload(payload: dict) -> None:
    """Fields the page reads must have the types it expects (an item renders for every reviewer)."""
    for key in NUMBER_FIELDS:
        value = payload.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"item.{key} must be a number or null, not {_show(value)}")
    for key in TEXT_FIELDS:
        value = payload.get(key)
        if value is not None and not isinstance(value, (str, int, float)):
            raise ValueError(f"item.{key} must be text, not {_show(value)}")
    if "sides" in payload:
        sides = payload["sides"]
        if not (isinstance(sides, dict) and set(sides) == {"A", "B"}
                and all(isinstance(v, dict) for v in sides.values())):
            raise ValueError("item.sides must be an object with exactly the sides A and B, each an object")
    if len(str(payload.get("kind", ""))) > MAX_NAME:
        raise ValueError("item.kind is too long")
