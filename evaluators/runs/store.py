"""The run registry: logged runs, their datasets and GT versions, in the review database.

See :mod:`evaluators.runs` for the API in one place and :mod:`evaluators.runs.tables` for the tables.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import sqlalchemy as sa

from evaluators.io.errors import InputIssue
from evaluators.results import DictMixin, to_jsonable
from evaluators.review.limits import check_name, check_text
from evaluators.review.schema import ensure_schema
from evaluators.review.store import OPEN_STORES, open_engines
from evaluators.run_result import RunResult
from evaluators.runs.columns import MAX_BLOB_BYTES, CorruptBlob, EncodedTable, blob_digest, table_columns, table_of
from evaluators.runs.tables import blobs_table, datasets_table, runs_table, versions_table

#: First line of an export file (its format and version).
EXPORT_HEADER = {"evalboard_runs": 1}
#: Longest line read from an export file (bytes): a blob of :data:`MAX_BLOB_BYTES` in base64, and its key.
MAX_EXPORT_LINE = MAX_BLOB_BYTES * 4 // 3 + 4096
#: Shared columns (item ids, systems, slices) a store keeps decoded between loads.
SHARED_COLUMNS_KEPT = 16
#: Longest tag key or value (characters).
MAX_TAG = 256
#: Key prefixes in a run's ``digests`` naming an input file kept in the registry (for re-scoring): ``input:ROLE``
#: -> the file's SHA-256 (its bytes a blob), ``input_name:ROLE`` -> its file name.
INPUT_KEY, INPUT_NAME_KEY = "input:", "input_name:"


def kept_inputs(digests: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The input files a run keeps, from its ``digests``: ``{role: (file name, SHA-256)}`` (empty when none)."""
    return {k[len(INPUT_KEY):]: (str(digests.get(INPUT_NAME_KEY + k[len(INPUT_KEY):], k[len(INPUT_KEY):])), str(v))
            for k, v in digests.items() if k.startswith(INPUT_KEY)}


def _kept_digests(digests_text: str) -> set[str]:
    """The kept inputs' digests of a run row's ``digests`` JSON."""
    return {d for _, d in kept_inputs(json.loads(digests_text)).values()}


class RunExists(ValueError):
    """A run of that name is already logged (with other values, on import)."""


@dataclass(frozen=True)
class RunRecord(DictMixin):
    """One logged run, as the registry lists it (the per-item table stays in the database: :meth:`RunStore.load`).

    Attributes
    ----------
    name : str
        Unique in the registry.
    task, unit : str
        The run result's task (``qa`` ...) and what one item is (``record`` ...).
    dataset, dataset_digest : str
        The ground truth's name and content digest (its identity).
    dataset_version : int
        0 for the raw GT, ``k`` for the GT with the ``k``-th recorded patch chain on it.
    patch_digests : tuple of str
        SHA-256 of each GT patch applied, in order (empty for version 0).
    predictions_digest : str
        SHA-256 of the predictions read (``""`` when the caller gave none).
    config : dict
        The run's settings (JSON values).
    signature : str
    who : str
    created_at : str
        UTC, ISO 8601 with microseconds (the registry's time order).
    tags : dict of str to str
    accepted : bool
        The baseline of its task and dataset (at most one run each: :meth:`RunStore.accept`).
    items_digest : str
        :meth:`~evaluators.run_result.ItemTable.digest` of the per-item table.
    n_items : int
        Rows of the table (items x systems).
    systems, metrics : tuple of str
    summary : tuple of dict
        :meth:`RunResult.summary` rows (``SummaryRow.to_dict()``: system, metric, slice, slice_value, n, n_items,
        mean, ci_low, ci_high; 1,000 bootstrap resamples, seed 0) as logged.
    """

    name: str
    task: str
    unit: str
    dataset: str
    dataset_digest: str
    dataset_version: int
    patch_digests: tuple[str, ...]
    predictions_digest: str
    config: dict
    signature: str
    who: str
    created_at: str
    tags: dict
    accepted: bool
    items_digest: str
    n_items: int
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    summary: tuple[dict, ...] = field(repr=False, default=())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def utc_text(value: str | datetime, what: str = "time") -> str:
    """``value`` (ISO 8601 text or a datetime; without a zone read as UTC) as the registry writes times: UTC, ISO
    8601 with microseconds (text order is time order).

    Raises
    ------
    ValueError
        Text that is not an ISO 8601 time.
    """
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value))
        except ValueError as exc:
            raise ValueError(f"{what} must be an ISO 8601 time (2026-11-27 or 2026-11-27T14:00:00Z), not "
                             f"{value!r:.60}") from exc
    value = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _dumps(value: Any) -> str:
    return json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _tags(tags: Mapping[str, Any] | Iterable[str] | None) -> dict[str, str]:
    """``{key: value}`` from a mapping or ``KEY=VALUE`` strings (a bare ``KEY`` has value ``""``)."""
    if tags is None:
        return {}
    items = tags.items() if isinstance(tags, Mapping) else (str(t).partition("=")[::2] for t in tags)
    out = {}
    for key, value in items:
        key = check_name(str(key), "tag key")
        out[key] = check_text(str(value), f"tag {key!r}", limit=MAX_TAG)
    return dict(sorted(out.items()))


def _issue(d: Mapping[str, Any]) -> InputIssue:
    return InputIssue(**{k: d.get(k) for k in ("file", "message", "line", "column", "path")},
                      severity=d.get("severity") or "error", kind=d.get("kind") or "schema")


class RunStore:
    """The run registry in the EvalBoard database (review sessions live beside it).

    Parameters
    ----------
    url : str or Path, optional
        An SQLAlchemy URL or an SQLite file; default :func:`evaluators.review.store.default_url`
        (``EVALBOARD_DATABASE_URL``, else ``$EVALBOARD_DATA_DIR/review.sqlite``).

    Raises
    ------
    evaluators.review.schema.SchemaTooNew
        The database was written by a newer EvalBoard.
    """

    def __init__(self, url: str | Path | None = None):
        from cachetools import LRUCache

        self.url, self.engine, self._writer = open_engines(url)
        self._decoded = LRUCache(maxsize=SHARED_COLUMNS_KEPT)  # checked, decoded shared columns (by blob digest)
        ensure_schema(self.engine)
        OPEN_STORES.add(self)

    def dispose(self) -> None:
        """Close the connection pools."""
        self.engine.dispose()
        if self._writer is not self.engine:
            self._writer.dispose()

    # ------------------------------------------------------------ writing
    def log_run(self, result: RunResult, *, name: str, who: str, tags: Mapping[str, Any] | Iterable[str] | None = None,
                gt_name: str, gt_digest: str, patch_digests: Sequence[str] = (),
                created_at: str | None = None, patches: Mapping[str, bytes] | None = None,
                inputs: Mapping[str, bytes] | None = None, encoded: EncodedTable | None = None) -> RunRecord:
        """Keep a run: its record, its dataset version and its per-item table (new column blobs only).

        Parameters
        ----------
        result : RunResult
            ``result.digests["predictions"]`` (when present) is the run's predictions digest.
        name : str
            Unique in the registry.
        who : str
            Who ran it.
        tags : mapping or iterable of ``KEY=VALUE``, optional
        gt_name, gt_digest : str
            The ground truth's name and content digest (the dataset's identity: runs with the same
            ``gt_digest`` are runs of one dataset whatever its name).
        patch_digests : sequence of str
            SHA-256 of each GT patch applied, in order: the dataset version (v0 without any).
        created_at : str, optional
            ISO 8601 (default now; kept in UTC: :func:`utc_text`): the registry's time order.
        patches : mapping of str to bytes, optional
            Patch digest -> the patch file's bytes, kept (once) so that runs logged on an older GT version can
            be re-scored on this one (:mod:`evaluators.runs.rescore`).
        inputs : mapping of str to bytes, optional
            SHA-256 -> bytes of the input files the run was scored from, kept once (content-addressed blobs) so
            that the task can score them again on a later GT version; each named in ``result.digests`` under
            ``input:ROLE`` (:func:`kept_inputs`).
        encoded : EncodedTable, optional
            The per-item table already encoded (:func:`evaluators.runs.columns.encode_arrays`: the same blobs,
            digest and summary as ``result.items`` of the same values); ``result.items`` is then not read.

        Returns
        -------
        RunRecord

        Raises
        ------
        RunExists
            A run of that name exists.
        ValueError
            A bad name, tag or digest, or values that are not JSON.
        """
        name = check_name(name, "run name")
        who = check_name(who, "who")
        gt_name = check_name(gt_name, "dataset name")
        tag_map = _tags(tags)
        for digest in (gt_digest, *patch_digests):
            if not isinstance(digest, str) or not 0 < len(digest) <= 64:
                raise ValueError(f"a digest must be 1 to 64 characters, not {digest!r:.80}")
        patches = dict(patches or {})
        for digest, data in patches.items():
            if digest not in patch_digests or blob_digest(data) != digest:
                raise ValueError(f"patch {digest[:12]}: its bytes are not those of a patch of this run")
        inputs = dict(inputs or {})
        named = {d for _, d in kept_inputs(result.digests).values()}
        for digest, data in inputs.items():
            if digest not in named or blob_digest(data) != digest:
                raise ValueError(f"input {digest[:12]}: its bytes are not those of an input of this run")
        created_at = utc_text(created_at, "created_at") if created_at else _now()
        if encoded is None:
            columns = table_columns(result.items)
            summary = [row.to_dict() for row in result.summary()]
            items_digest, n_items = result.items.digest(), len(result.items)
            systems, metrics = result.systems, result.metrics
        else:
            columns, summary = list(encoded.columns), list(encoded.summary)
            items_digest, n_items, systems, metrics = encoded.digest, encoded.n_items, encoded.systems, encoded.metrics
        manifest = [[kind, col, blob_digest(data)] for kind, col, data in columns]
        row = {"name": name, "task": check_name(result.task, "task")[:64], "unit": str(result.unit)[:32],
               "predictions_digest": str(result.digests.get("predictions", ""))[:64], "config": _dumps(result.config),
               "signature": str(result.signature), "who": who, "created_at": created_at, "tags": _dumps(tag_map),
               "accepted": False, "items_digest": items_digest, "n_items": n_items,
               "systems": _dumps(list(systems)), "metrics": _dumps(list(metrics)),
               "columns": _dumps(manifest), "summary": _dumps(summary), "digests": _dumps(dict(result.digests)),
               "issues": _dumps([i.to_dict() for i in result.issues])}
        with self._writer.begin() as c:
            _lock(c)
            if c.execute(sa.select(runs_table.c.id).where(runs_table.c.name == name)).first() is not None:
                raise RunExists(f"a run named {name!r} is already logged: choose another --run-name")
            row["dataset_version_id"] = _version_id(c, gt_name, gt_digest, tuple(patch_digests), created_at)
            _put_blobs(c, {d: data for (_, _, data), (_, _, d) in zip(columns, manifest)} | patches | inputs)
            c.execute(runs_table.insert().values(**row))
        return self.get(name)

    def accept(self, name: str) -> RunRecord:
        """Mark ``name`` as the accepted baseline of its task and dataset (the one accepted before is unmarked).

        Raises
        ------
        KeyError
            No run of that name.
        """
        with self._writer.begin() as c:
            row = c.execute(sa.select(runs_table.c.task, runs_table.c.dataset_version_id)
                            .where(runs_table.c.name == name)).first()
            if row is None:
                raise KeyError(_no_run(name))
            same_dataset = sa.select(versions_table.c.id).where(versions_table.c.dataset_id == sa.select(
                versions_table.c.dataset_id).where(versions_table.c.id == row[1]).scalar_subquery())
            c.execute(runs_table.update().where(runs_table.c.task == row[0],
                                                runs_table.c.dataset_version_id.in_(same_dataset))
                      .values(accepted=False))
            c.execute(runs_table.update().where(runs_table.c.name == name).values(accepted=True))
        return self.get(name)

    def delete(self, name: str) -> None:
        """Forget a run; column blobs no other run uses go with it (datasets and their versions stay).

        Raises
        ------
        KeyError
            No run of that name.
        """
        with self._writer.begin() as c:
            row = c.execute(sa.select(runs_table.c.columns, runs_table.c.digests)
                            .where(runs_table.c.name == name)).first()
            if row is None:
                raise KeyError(_no_run(name))
            c.execute(runs_table.delete().where(runs_table.c.name == name))
            digests = {d for _, _, d in json.loads(row[0])} | _kept_digests(row[1])
            used = {d for (d,) in c.execute(sa.select(versions_table.c.patch_digest)) if d is not None}
            for text, kept in c.execute(sa.select(runs_table.c.columns, runs_table.c.digests)):
                used.update(d for _, _, d in json.loads(text))
                used |= _kept_digests(kept)
            gone = sorted(digests - used)
            if gone:
                c.execute(blobs_table.delete().where(blobs_table.c.digest.in_(gone)))

    # ------------------------------------------------------------ reading
    def _select(self):
        return (sa.select(runs_table, datasets_table.c.name.label("dataset"),
                          datasets_table.c.digest.label("dataset_digest"), versions_table.c.version)
                .join(versions_table, versions_table.c.id == runs_table.c.dataset_version_id)
                .join(datasets_table, datasets_table.c.id == versions_table.c.dataset_id))

    def _record(self, c, row, chains: dict | None = None) -> RunRecord:
        chains = {} if chains is None else chains  # version id -> patch chain, shared by the rows of one listing
        if row.dataset_version_id not in chains:
            chains[row.dataset_version_id] = _patch_chain(c, row.dataset_version_id)
        return RunRecord(row.name, row.task, row.unit, row.dataset, row.dataset_digest, row.version,
                         chains[row.dataset_version_id], row.predictions_digest, json.loads(row.config),
                         row.signature, row.who, row.created_at, json.loads(row.tags), bool(row.accepted),
                         row.items_digest, row.n_items, tuple(json.loads(row.systems)),
                         tuple(json.loads(row.metrics)), tuple(json.loads(row.summary)))

    def get(self, name: str) -> RunRecord:
        """The record of run ``name``.

        Raises
        ------
        KeyError
            No run of that name.
        """
        with self.engine.connect() as c:
            row = c.execute(self._select().where(runs_table.c.name == name)).first()
            if row is None:
                raise KeyError(_no_run(name))
            return self._record(c, row)

    def runs(self, task: str | None = None, dataset: str | None = None, system: str | None = None,
             tag: str | None = None, since: str | datetime | None = None,
             accepted: bool | None = None) -> tuple[RunRecord, ...]:
        """The logged runs in time order (``created_at``, then name), filtered.

        Parameters
        ----------
        task : str, optional
        dataset : str, optional
            A dataset's name or its digest (or a prefix of the digest of at least 8 characters).
        system : str, optional
            Runs with this system among theirs.
        tag : str, optional
            ``KEY`` (runs with that tag) or ``KEY=VALUE``.
        since : str or datetime, optional
            Runs created at or after this time (ISO 8601; without a zone it is read as UTC).
        accepted : bool, optional
            Only the accepted runs (``True``) or the others.

        Returns
        -------
        tuple of RunRecord

        Raises
        ------
        ValueError
            ``since`` is not an ISO 8601 time.
        """
        query = self._select()
        if task is not None:
            query = query.where(runs_table.c.task == task)
        if dataset is not None:
            match = [datasets_table.c.name == dataset, datasets_table.c.digest == dataset]
            if len(dataset) >= 8:
                match.append(datasets_table.c.digest.startswith(dataset, autoescape=True))
            query = query.where(sa.or_(*match))
        if since is not None:
            query = query.where(runs_table.c.created_at >= utc_text(since, "since"))
        if accepted is not None:
            query = query.where(runs_table.c.accepted == bool(accepted))
        key, has_value, value = (tag or "").partition("=")
        out = []
        chains: dict = {}
        with self.engine.connect() as c:
            for row in c.execute(query.order_by(runs_table.c.created_at, runs_table.c.name)).all():
                record = self._record(c, row, chains)
                if system is not None and system not in record.systems:
                    continue
                if tag is not None and (key not in record.tags or (has_value and record.tags[key] != value)):
                    continue
                out.append(record)
        return tuple(out)

    def load(self, name: str, columns: Sequence[str] | None = None) -> RunResult:
        """The run result as logged: task, per-item table (every value bit for bit), unit, issues, config,
        signature and input digests (``corrections`` and ``native`` are not kept).

        Parameters
        ----------
        name : str
        columns : sequence of str, optional
            Only these metric, slice and field columns (with the item ids and systems): what a trend or a
            comparison reads, without the rest.  Each column's bytes are checked against their address; the
            whole table's digest is checked only by a full load (``columns=None``).

        Raises
        ------
        KeyError
            No run of that name, or a column it does not have.
        CorruptBlob
            Stored bytes that do not match their digest, or values that do not match the run's digest.
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(runs_table).where(runs_table.c.name == name)).first()
            if row is None:
                raise KeyError(_no_run(name))
            manifest = json.loads(row.columns)
            if columns is not None:
                have = {col for kind, col, _ in manifest if kind not in ("item_id", "system")}
                unknown = [col for col in columns if col not in have]
                if unknown:
                    raise KeyError(f"run {name!r} has no column {unknown[0]!r}; its columns: {', '.join(sorted(have))}")
                manifest = [m for m in manifest if m[0] in ("item_id", "system") or m[1] in set(columns)]
            blobs = _get_blobs(c, {d for _, _, d in manifest if d not in self._decoded})
        table = table_of(manifest, blobs, items_digest=row.items_digest if columns is None else None,
                         cache=self._decoded)
        return RunResult(row.task, table, unit=row.unit, issues=tuple(_issue(d) for d in json.loads(row.issues)),
                         config=json.loads(row.config), signature=row.signature, digests=json.loads(row.digests))

    def datasets(self) -> tuple[dict, ...]:
        """Every dataset: ``{"name", "digest", "versions": [{"version", "patch_digests"}, ...]}``, by name."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(datasets_table).order_by(datasets_table.c.name, datasets_table.c.digest)).all()
            out = []
            for d in rows:
                versions = c.execute(sa.select(versions_table.c.id, versions_table.c.version)
                                     .where(versions_table.c.dataset_id == d.id)
                                     .order_by(versions_table.c.version)).all()
                out.append({"name": d.name, "digest": d.digest,
                            "versions": [{"version": v, "patch_digests": list(_patch_chain(c, i))}
                                         for i, v in versions]})
        return tuple(out)

    def blob_bytes(self, name: str) -> dict[str, int]:
        """Column name -> bytes of its stored blob, for run ``name`` (what the run costs, shared columns included).

        Raises
        ------
        KeyError
            No run of that name.
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(runs_table.c.columns).where(runs_table.c.name == name)).first()
            if row is None:
                raise KeyError(_no_run(name))
            manifest = json.loads(row[0])
            sizes = dict(c.execute(sa.select(blobs_table.c.digest, blobs_table.c.size)
                                   .where(blobs_table.c.digest.in_({d for _, _, d in manifest}))).all())
        return {col: int(sizes.get(d, 0)) for _, col, d in manifest}

    def current_version(self, dataset: str) -> tuple[int, tuple[str, ...]]:
        """``(version, patch digests)`` of the newest version of ``dataset`` (its name or digest): the current GT.

        Raises
        ------
        KeyError
            No such dataset.
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(versions_table.c.id, versions_table.c.version)
                            .join(datasets_table, datasets_table.c.id == versions_table.c.dataset_id)
                            .where(sa.or_(datasets_table.c.digest == dataset, datasets_table.c.name == dataset))
                            .order_by(versions_table.c.version.desc()).limit(1)).first()
            if row is None:
                raise KeyError(f"no dataset {dataset!r} in the registry")
            return row[1], _patch_chain(c, row[0])

    def patch_bytes(self, digest: str) -> bytes:
        """The bytes of a GT patch kept with a run (:meth:`log_run`'s ``patches``).

        Raises
        ------
        KeyError
            The patch's bytes were not kept.
        CorruptBlob
            Bytes that do not match the digest.
        """
        return self._kept(digest, f"GT patch {digest[:12]}", "log a run with it")

    def input_bytes(self, digest: str) -> bytes:
        """The bytes of an input file kept with a run (:meth:`log_run`'s ``inputs``); raises as :meth:`patch_bytes`."""
        return self._kept(digest, f"input file {digest[:12]}", "it was logged without it")

    def _kept(self, digest: str, what: str, hint: str) -> bytes:
        with self.engine.connect() as c:
            data = _get_blobs(c, {digest}).get(digest)
        if data is None:
            raise KeyError(f"the bytes of {what} are not in the registry ({hint})")
        if blob_digest(data) != digest:
            raise CorruptBlob(f"{what}: the stored bytes do not match their digest")
        return data

    # ------------------------------------------------------------ export and import
    def export(self, fp: IO[bytes]) -> int:
        """Write every run, its dataset version and its blobs to ``fp`` as JSON lines; returns the runs written.

        The file is portable and lossless: importing it into an empty database and exporting again gives the
        same bytes (runs in time order, datasets by digest, blobs by digest; versions by number; every
        line canonical JSON with sorted keys).
        """
        lines = [EXPORT_HEADER]
        with self.engine.connect() as c:
            for d in c.execute(sa.select(datasets_table).order_by(datasets_table.c.digest)):
                lines.append({"dataset": {"digest": d.digest, "name": d.name, "created_at": d.created_at}})
                for v in c.execute(sa.select(versions_table).where(versions_table.c.dataset_id == d.id)
                                   .order_by(versions_table.c.version)):
                    lines.append({"version": {"dataset": d.digest, "version": v.version,
                                              "patch_digests": list(_patch_chain(c, v.id)),
                                              "created_at": v.created_at}})
            runs = c.execute(self._select().order_by(runs_table.c.created_at, runs_table.c.name)).all()
            used = {dg for r in runs for _, _, dg in json.loads(r.columns)}
            used |= {d for (d,) in c.execute(sa.select(versions_table.c.patch_digest)) if d is not None}
            used |= {d for r in runs for d in _kept_digests(r.digests)}
            for digest in sorted(used):
                data = _get_blobs(c, {digest}).get(digest)
                if data is not None:  # a patch logged without its bytes has none
                    lines.append({"blob": {"digest": digest, "data": base64.b64encode(data).decode("ascii")}})
            for r in runs:
                lines.append({"run": {**{k: getattr(r, k) for k in _RUN_TEXT}, "accepted": bool(r.accepted),
                                      "n_items": r.n_items, "dataset": r.dataset_digest, "version": r.version}})
        for line in lines:
            fp.write(json.dumps(line, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8"))
            fp.write(b"\n")
        return len(runs)

    def import_(self, fp: IO[bytes]) -> int:
        """Read an :meth:`export` file; returns the runs added.

        Idempotent: a run already here with the same values is skipped.  Every run's table is rebuilt from
        the file's blobs and checked against its digest before anything is written.

        Raises
        ------
        CorruptBlob
            A blob whose bytes do not match its digest, or a run whose values do not match its digest
            (nothing is written).
        RunExists
            A run of the same name with other values is already here (nothing is written).
        ValueError
            Not an export file, or a line over :data:`MAX_EXPORT_LINE` bytes.
        """
        datasets, versions, blobs, runs = {}, [], {}, []
        for n, raw in enumerate(iter(lambda: fp.readline(MAX_EXPORT_LINE + 1), b""), start=1):
            if len(raw) > MAX_EXPORT_LINE:
                raise ValueError(f"line {n}: over {MAX_EXPORT_LINE:,} bytes")
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise ValueError(f"line {n}: not JSON ({exc})") from exc
            if n == 1:
                if line != EXPORT_HEADER:
                    raise ValueError(f"not an EvalBoard runs export (first line {raw[:80]!r})")
                continue
            kind, value = next(iter(line.items()))
            if kind == "dataset":
                datasets[value["digest"]] = value
            elif kind == "version":
                versions.append(value)
            elif kind == "blob":
                data = base64.b64decode(value["data"], validate=True)
                if blob_digest(data) != value["digest"]:
                    raise CorruptBlob(f"line {n}: blob {value['digest'][:12]}: the bytes do not match their digest")
                blobs[value["digest"]] = data
            elif kind == "run":
                runs.append(value)
            else:
                raise ValueError(f"line {n}: unknown entry {kind!r}")
        chains = {(v["dataset"], v["version"]): tuple(v["patch_digests"]) for v in versions}
        for r in runs:  # every table checked before anything is written
            table_of(json.loads(r["columns"]), blobs, items_digest=r["items_digest"])
        added = 0
        with self._writer.begin() as c:
            _lock(c)
            for v in sorted(versions, key=lambda v: (v["dataset"], v["version"])):
                d = datasets[v["dataset"]]
                _version_id(c, d["name"], d["digest"], tuple(v["patch_digests"]), v["created_at"],
                            dataset_created_at=d["created_at"])
                _put_blobs(c, {p: blobs[p] for p in v["patch_digests"] if p in blobs})
            for r in runs:
                old = c.execute(sa.select(runs_table.c.items_digest, runs_table.c.created_at)
                                .where(runs_table.c.name == r["name"])).first()
                if old is not None:
                    if tuple(old) != (r["items_digest"], r["created_at"]):
                        raise RunExists(f"run {r['name']!r} is already here with other values")
                    continue
                d = datasets[r["dataset"]]
                vid = _version_id(c, d["name"], d["digest"], chains[(r["dataset"], r["version"])], r["created_at"])
                _put_blobs(c, {dg: blobs[dg] for _, _, dg in json.loads(r["columns"])}
                           | {dg: blobs[dg] for dg in _kept_digests(r["digests"]) if dg in blobs})
                c.execute(runs_table.insert().values(**{k: r[k] for k in _RUN_TEXT}, accepted=bool(r["accepted"]),
                                                     n_items=int(r["n_items"]), dataset_version_id=vid))
                added += 1
        return added


def split_systems(result: RunResult) -> dict[str, RunResult]:
    """One run result per system of ``result`` (its rows, in order; the same task, config, signature, digests
    and issues), in order of first appearance: a multi-system run logged as one run per system.

    Parameters
    ----------
    result : RunResult

    Returns
    -------
    dict of str to RunResult
    """
    import dataclasses

    from evaluators.run_result import ItemTable

    table = result.items
    out = {}
    for system in result.systems:
        rows = [i for i, s in enumerate(table.system) if s == system]

        def pick(column):
            return tuple(column[i] for i in rows)

        part = ItemTable(pick(table.item_id), pick(table.system), {k: pick(v) for k, v in table.values.items()},
                         {k: pick(v) for k, v in table.slices.items()}, {k: pick(v) for k, v in table.fields.items()})
        out[system] = dataclasses.replace(result, items=part, corrections=None, native=None)
    return out


def ground_truth_digest(result: RunResult, field_name: str = "ground_truth") -> str:
    """SHA-256 (hex) of a run's ground truth by content: the canonical JSON of the sorted ``[item id, GT]``
    pairs of its first system (its ``field_name`` column).  Runs of one GT score the same items against the
    same answers, so they share this digest (the dataset's identity) whatever file the records came in.

    Raises
    ------
    KeyError
        The run has no ``field_name`` column.
    """
    import hashlib

    table = result.items
    if field_name not in table.fields:
        raise KeyError(f"the run has no {field_name!r} column; its fields: {', '.join(table.fields)}")
    first = result.systems[0] if result.systems else None
    gt = table.fields[field_name]
    pairs = sorted([i, gt[n]] for n, (i, s) in enumerate(zip(table.item_id, table.system)) if s == first)
    text = json.dumps(to_jsonable(pairs), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The runs columns copied as they are by export and import.
_RUN_TEXT = ("name", "task", "unit", "predictions_digest", "config", "signature", "who", "created_at", "tags",
             "items_digest", "systems", "metrics", "columns", "summary", "digests", "issues")


#: PostgreSQL advisory lock key of registry writes (any fixed 64-bit number, not the review migrations').
_PG_LOCK = 7_316_402_028


def _lock(c) -> None:
    """Serialise registry writes on PostgreSQL (a new dataset version is numbered from the highest one: two
    writers at once would take the same number); SQLite's writer already holds its lock from ``BEGIN``."""
    if c.dialect.name == "postgresql":
        c.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})


def _no_run(name: str) -> str:
    return f"no run named {name!r} in the registry (runs list shows them)"


def _version_id(c, gt_name: str, gt_digest: str, patches: tuple[str, ...], created_at: str, *,
                dataset_created_at: str | None = None) -> int:
    """The id of the dataset version ``gt_digest`` + ``patches`` (created, with its dataset, when new)."""
    row = c.execute(sa.select(datasets_table.c.id).where(datasets_table.c.digest == gt_digest)).first()
    if row is None:
        dataset_id = c.execute(datasets_table.insert().values(
            digest=gt_digest, name=gt_name, created_at=dataset_created_at or created_at)).inserted_primary_key[0]
    else:
        dataset_id = row[0]
    parent = None
    for patch in (None, *patches):
        cond = [versions_table.c.dataset_id == dataset_id,
                versions_table.c.parent_id.is_(None) if parent is None else versions_table.c.parent_id == parent,
                versions_table.c.patch_digest.is_(None) if patch is None else versions_table.c.patch_digest == patch]
        row = c.execute(sa.select(versions_table.c.id).where(*cond)).first()
        if row is None:
            number = c.execute(sa.select(sa.func.coalesce(sa.func.max(versions_table.c.version) + 1, 0))
                               .where(versions_table.c.dataset_id == dataset_id)).scalar()
            parent = c.execute(versions_table.insert().values(
                dataset_id=dataset_id, version=number, parent_id=parent, patch_digest=patch,
                created_at=created_at)).inserted_primary_key[0]
        else:
            parent = row[0]
    return parent


def _patch_chain(c, version_id: int) -> tuple[str, ...]:
    """The patch digests from version 0 to ``version_id``, in order."""
    chain = []
    while version_id is not None:
        row = c.execute(sa.select(versions_table.c.parent_id, versions_table.c.patch_digest)
                        .where(versions_table.c.id == version_id)).first()
        if row is None:
            break
        if row[1] is not None:
            chain.append(row[1])
        version_id = row[0]
    return tuple(reversed(chain))


def _put_blobs(c, blobs: Mapping[str, bytes]) -> None:
    """Insert the blobs not already stored."""
    if not blobs:
        return
    have = {d for (d,) in c.execute(sa.select(blobs_table.c.digest).where(blobs_table.c.digest.in_(list(blobs))))}
    new = [{"digest": d, "size": len(b), "data": b} for d, b in blobs.items() if d not in have]
    if new:
        c.execute(blobs_table.insert(), new)


def _get_blobs(c, digests: Iterable[str]) -> dict[str, bytes]:
    """Digest -> stored bytes (a blob over :data:`MAX_BLOB_BYTES` is refused before it is read)."""
    digests = list(digests)
    sizes = dict(c.execute(sa.select(blobs_table.c.digest, blobs_table.c.size)
                           .where(blobs_table.c.digest.in_(digests))).all())
    big = [d for d, s in sizes.items() if s > MAX_BLOB_BYTES]
    if big:
        raise CorruptBlob(f"blob {big[0][:12]} is over {MAX_BLOB_BYTES:,} bytes")
    rows = c.execute(sa.select(blobs_table.c.digest, blobs_table.c.data).where(blobs_table.c.digest.in_(digests)))
    return {d: bytes(data) for d, data in rows}


__all__ = ["EXPORT_HEADER", "MAX_EXPORT_LINE", "CorruptBlob", "RunExists", "RunRecord", "RunStore",
           "INPUT_KEY", "INPUT_NAME_KEY", "ground_truth_digest", "kept_inputs", "split_systems", "utc_text"]
