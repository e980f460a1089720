"""Review sessions in and out as JSONL: everything a session holds, imported in batches without
ever replacing newer work.

An export (format 2) is, in this order::

    {"type": "session", "format": 2, "session": name, "kind", "created_by", "created_at", "blind", "k", "seed",
     "settings": {"guidelines", "guidelines_version", "adjudicators", ...}, "uploads": [...]}
    {"type": "item", "session": name, "item_digest": sha256, "position": 0, "item": {...payload...}, "gold": null}
    ...                                  (every item, decided or not, by position)
    {"type": "decision", "session": name, "item_digest": ..., "annotator": ..., "label": ..., "score": ...,
     "comment": ..., "status": ..., "version": 1, "updated_at": ..., "seconds": null,
     "guidelines_version": 2}           (the last only when recorded)
    ...                                  (by item position, then annotator)
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
each), so memory stays flat and a large file imports at thousands of lines a second.
Importing the same file twice changes nothing; export -> import into an empty database ->
export gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
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
    _now,
    _settings_json,
    check_decision,
    history_row,
    label_fits,
    record_history,
    seeded_rank,
)

FORMAT = 2
#: Lines per import batch (one transaction).
BATCH_LINES = 2_000
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
    def __init__(self, store: ReviewStore, file: str, created_by: str):
        self.store, self.file, self.created_by = store, file, created_by
        self.sessions: dict[str, tuple[int, int]] = {}      # name -> (id, k)
        self.created: set[int] = set()
        self.seen: dict[tuple[int, str, str], int] = {}     # (session, digest, annotator) -> first line
        self.issues: list[InputIssue] = []
        self.counts = {"written": 0, "unchanged": 0, "conflicts": 0, "duplicates": 0, "sessions_created": 0,
                       "items_added": 0, "adjudications": 0}
        self.batch: list[tuple[int, str, dict]] = []
        #: what label checks need of an item carried by the file (its sides), by (session, digest)
        self.payloads: dict[tuple[int, str], dict] = {}

    def issue(self, line: int, message: str, kind: str = "schema", path: str | None = None) -> None:
        self.issues.append(InputIssue(self.file, message, line=line, path=path, kind=kind))

    # -- one line: checked, then queued
    def line(self, lineno: int, d: dict) -> None:
        kind = d.get("type", "decision" if "item" in d else None)
        if kind not in ("session", "item", "decision", "adjudication"):
            self.issue(lineno, f"'type' must be session, item, decision or adjudication, not {_show(kind)}",
                       path="type")
            return
        name = d.get("session")
        if not isinstance(name, str) or not name.strip():
            self.issue(lineno, f"'session' must be a session name, not {_show(name)}", path="session")
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
            version = d.get("version", 1)
            if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version < 2**31:
                raise ValueError(f"version must be a positive integer, not {_show(version)}")
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
        with self.store._write() as c:
            try:
                with c.begin_nested():
                    sid = c.execute(sessions_table.insert().values(
                        name=name, kind=kind[:32], created_by=owner, blind=blind, k=k, seed=seed,
                        uploads=json.dumps(uploads), created_at=created_at, settings=settings_text, n_items=0,
                        changes=0)).inserted_primary_key[0]
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
        wanted: dict[int, dict[str, tuple[str | None, int | None, str | None, dict]]] = {}
        rows = []
        for lineno, kind, d in batch:
            try:
                sid = self.session_of(lineno, d)
            except ValueError as exc:
                self.issue(lineno, str(exc))
                continue
            rows.append((lineno, kind, d, sid))
            if "_text" in d:
                self.payloads.setdefault((sid, d["item_digest"]), {"sides": d["item"].get("sides")})
                have = wanted.setdefault(sid, {}).get(d["item_digest"])
                if have is None or (have[0] is None and kind == "item"):
                    wanted[sid][d["item_digest"]] = (d["_text"], d.get("position") if kind == "item" else None,
                                                     d.get("gold") if kind == "item" else None,
                                                     filter_columns(d["item"]))
        ids = self.resolve_items(wanted, {(sid, d["item_digest"]) for _, _, d, sid in rows})
        decisions = []
        for lineno, kind, d, sid in rows:
            item = ids.get((sid, d["item_digest"]))
            if item is None:
                self.issue(lineno, "no item with this item_digest in the session (its item line is missing)",
                           path="item_digest")
                continue
            if kind == "decision":
                key = (sid, d["item_digest"], d["annotator"])
                if key in self.seen:
                    self.counts["duplicates"] += 1
                    self.issue(lineno, f"duplicate decision of {d['annotator']!r} on this item (first at line "
                                       f"{self.seen[key]}): skipped", kind="duplicate")
                    continue
                self.seen[key] = lineno
                if d.get("label") is not None and not label_fits(d["label"], item[1]):
                    self.issue(lineno, f"label {d['label']!r} does not fit this item (A/B labels are for two-sided "
                                       "items only)", path="label")
                    continue
                decisions.append((lineno, d, sid, item[0]))
            elif kind == "adjudication":
                self.adjudication(lineno, d, item[0], sid)
        self.write_decisions(decisions)

    def resolve_items(self, wanted, keys) -> dict[tuple[int, str], tuple[int, dict]]:
        """Item ids (and payloads) for (session, digest), adding the items the database lacks."""
        out: dict[tuple[int, str], tuple[int, dict]] = {}
        by_session: dict[int, set[str]] = {}
        for sid, digest in keys:
            by_session.setdefault(sid, set()).add(digest)
        for sid, digests in by_session.items():
            found = self._lookup(sid, digests)
            missing = [(dg, wanted.get(sid, {}).get(dg)) for dg in digests if dg not in found]
            missing = [(dg, w) for dg, w in missing if w is not None]
            if missing:
                missing.sort(key=lambda m: (m[1][1] is None, m[1][1] or 0))
                with self.store._write() as c:
                    n, seed = c.execute(sa.select(sessions_table.c.n_items, sessions_table.c.seed)
                                        .where(sessions_table.c.id == sid)).one()
                    taken = {dg for (dg,) in c.execute(sa.select(items_table.c.digest).where(
                        items_table.c.session_id == sid, items_table.c.digest.in_([m[0] for m in missing])))}
                    new = []
                    for dg, (text, _pos, gold, columns) in missing:
                        if dg not in taken:
                            new.append({"session_id": sid, "position": n + len(new), "digest": dg, "payload": text,
                                        "rank": seeded_rank(seed, n + len(new)), "gold": gold, **columns})
                    if new:
                        c.execute(items_table.insert(), new)
                        c.execute(sessions_table.update().where(sessions_table.c.id == sid)
                                  .values(n_items=n + len(new), changes=sessions_table.c.changes + 1))
                        self.counts["items_added"] += len(new)
                found.update(self._lookup(sid, [m[0] for m in missing]))
            for dg, value in found.items():
                out[(sid, dg)] = value
        return out

    def _lookup(self, sid: int, digests: Iterable[str]) -> dict[str, tuple[int, dict]]:
        """Item ids by digest; the payload only where this file did not carry it (to check labels)."""
        digests = list(digests)
        found: dict[str, tuple[int, dict]] = {}
        unknown = []
        with self.store.engine.connect() as c:
            for start in range(0, len(digests), 500):
                for r in c.execute(sa.select(items_table.c.id, items_table.c.digest).where(
                        items_table.c.session_id == sid, items_table.c.digest.in_(digests[start:start + 500]))):
                    payload = self.payloads.get((sid, r.digest))
                    found[r.digest] = (r.id, payload)
                    if payload is None:
                        unknown.append(r.id)
            for start in range(0, len(unknown), 500):
                for r in c.execute(sa.select(items_table.c.id, items_table.c.digest, items_table.c.payload)
                                   .where(items_table.c.id.in_(unknown[start:start + 500]))):
                    found[r.digest] = (r.id, json.loads(r.payload))
        return found

    def write_decisions(self, decisions: list[tuple[int, dict, int, int]]) -> None:
        if not decisions:
            return
        d = decisions_table
        stored: dict[tuple[int, str], Any] = {}
        item_ids = sorted({x[3] for x in decisions})
        with self.store.engine.connect() as c:  # read first, without a lock: the writes below are version-checked
            for start in range(0, len(item_ids), 500):
                for r in c.execute(sa.select(d.c.item_id, d.c.annotator, d.c.label, d.c.score, d.c.comment,
                                             d.c.status, d.c.version, d.c.updated_at, d.c.guidelines_version)
                                   .where(d.c.item_id.in_(item_ids[start:start + 500]))):
                    stored[(r.item_id, r.annotator)] = r
        inserts, updates = [], []
        for lineno, dec, sid, item_id in decisions:
            values = {"label": dec.get("label"), "score": dec.get("score"), "comment": dec.get("comment") or "",
                      "status": dec["status"], "updated_at": dec.get("updated_at") or _now(),
                      "seconds": dec.get("seconds"), "guidelines_version": dec.get("guidelines_version")}
            version = dec.get("version", 1)
            old = stored.get((item_id, dec["annotator"]))
            if old is None:
                inserts.append((lineno, sid, item_id, dec["annotator"], version, values))
                continue
            same = all(getattr(old, k) == values[k] for k in ("label", "score", "comment", "status"))
            if same and old.updated_at == values["updated_at"]:
                self.counts["unchanged"] += 1
                continue
            newer_time, newer_version = values["updated_at"] > old.updated_at, version >= old.version
            if not (newer_time and newer_version):
                self.conflict(lineno, dec["annotator"], old, version, values["updated_at"])
                continue
            updates.append((lineno, sid, item_id, dec["annotator"], max(version, old.version + 1), old, values))
        self._apply(inserts, updates)

    def conflict(self, lineno: int, annotator: str, old, version: int, stamp: str, meanwhile: bool = False) -> None:
        self.counts["conflicts"] += 1
        if meanwhile:
            text = f"the decision of {annotator!r} on this item changed while importing: the reviewer's save is kept"
        else:
            text = (f"conflict: the stored decision of {annotator!r} (version {old.version}, {old.updated_at}) is "
                    f"newer than or contradicts this line's (version {version}, {stamp}): not imported")
        self.issue(lineno, text, kind="conflict")

    def _apply(self, inserts, updates) -> None:
        d = decisions_table
        deltas: dict[int, int] = {}
        touched: dict[int, int] = {}
        changes: list[tuple[int, int, str, Any, dict]] = []   # (session, item, annotator, old, new): the history
        with self.store._write() as c:
            rows = [{"item_id": item_id, "annotator": annotator, "version": version, "session_id": sid, **values}
                    for _lineno, sid, item_id, annotator, version, values in inserts]
            try:  # the whole batch in one statement; row by row only when a reviewer saved one meanwhile
                with c.begin_nested():
                    if rows:
                        c.execute(d.insert(), rows)
                added = inserts
            except IntegrityError:
                added = []
                for entry, row in zip(inserts, rows):
                    try:
                        with c.begin_nested():
                            c.execute(d.insert().values(**row))
                        added.append(entry)
                    except IntegrityError:  # saved meanwhile by a reviewer: theirs is kept
                        self.conflict(entry[0], entry[3], None, entry[4], row["updated_at"], meanwhile=True)
            for _lineno, sid, item_id, annotator, version, values in added:
                changes.append((sid, item_id, annotator, None, {**values, "version": version}))
                self.counts["written"] += 1
                deltas[item_id] = deltas.get(item_id, 0) + int(values["status"] == "submitted")
                touched[sid] = touched.get(sid, 0) + 1
            for lineno, sid, item_id, annotator, version, old, values in updates:
                done = c.execute(d.update().where(d.c.item_id == item_id, d.c.annotator == annotator,
                                                  d.c.version == old.version)
                                 .values(version=version, **values)).rowcount
                if done != 1:
                    self.conflict(lineno, annotator, old, version, values["updated_at"], meanwhile=True)
                    continue
                changes.append((sid, item_id, annotator, old, {**values, "version": version}))
                self.counts["written"] += 1
                delta = int(values["status"] == "submitted") - int(old.status == "submitted")
                deltas[item_id] = deltas.get(item_id, 0) + delta
                touched[sid] = touched.get(sid, 0) + 1
            by_delta: dict[int, list[int]] = {}
            for item_id, delta in deltas.items():
                if delta:
                    by_delta.setdefault(delta, []).append(item_id)
            for delta, ids in by_delta.items():
                for start in range(0, len(ids), 500):
                    c.execute(items_table.update().where(items_table.c.id.in_(ids[start:start + 500]))
                              .values(n_done=items_table.c.n_done + delta))
            for sid, n in touched.items():
                c.execute(sessions_table.update().where(sessions_table.c.id == sid)
                          .values(changes=sessions_table.c.changes + n))
            if changes:
                blind = dict(c.execute(sa.select(sessions_table.c.id, sessions_table.c.blind)
                                       .where(sessions_table.c.id.in_(list(touched)))).all())
                record_history(c, [history_row(sid, item_id, annotator, self.created_by, "import", new["updated_at"],
                                               old, new, bool(blind.get(sid)))
                                   for sid, item_id, annotator, old, new in changes])

    def adjudication(self, lineno: int, d: dict, item_id: int, sid: int) -> None:
        a = adjudications_table
        stamp = d.get("updated_at") or _now()
        with self.store._write() as c:
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
        self.counts["adjudications"] += 1

    def finish(self) -> None:
        self.flush()


def import_jsonl(store: ReviewStore, data: bytes | IO[bytes], file: str = "<decisions>", *,
                 created_by: str = "import") -> ImportReport:
    """Import a JSONL export (see the module docstring); returns an :class:`ImportReport`.

    Parameters
    ----------
    data : bytes or binary file
        Read one line at a time; a file is never held whole.
    created_by : str
        Owner of a session created from format-1 lines (format 2 carries its own).
    """
    imp = _Importer(store, file, check_name(created_by, "created_by"))
    head = data[:3] if isinstance(data, (bytes, bytearray, memoryview)) else data.read(3)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        data.seek(0)
    encoding = "utf-8-sig" if bytes(head) == b"\xef\xbb\xbf" else "utf-8"
    for rec in iter_jsonl(data, file, encoding=encoding, keep_raw=False):
        if isinstance(rec, InputIssue):
            imp.issues.append(rec)
            continue
        try:
            imp.line(rec.line, rec.data)
        except ValueError as exc:
            imp.issue(rec.line, str(exc))
        except RecursionError:
            imp.issue(rec.line, "a value is nested too deeply to be read")
    imp.finish()
    return ImportReport(issues=sorted(imp.issues, key=lambda i: (i.line or 0)), **imp.counts)


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
