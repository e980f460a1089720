"""Shards with a checked merge: which shard scores which item, the shard file and its manifest, and the checks
a merge makes before it pools the per-item values (issue 32).

A batch command run with ``--shard i/N`` scores the items :func:`assign` gives shard ``i`` and writes a *shard
file*: a manifest (what was scored, how, and which items) and the items' per-item values.  ``evalboard merge``
reads the shard files (:func:`read_shard`), refuses a set that is not one complete run (:func:`check_shards`:
mixed manifests, a missing or repeated shard, an item in two shards, a shard whose items are not its
manifest's) and hands the pooled per-item values, in input order, to the task's report function, so every
aggregate and interval is computed once, by the code of the single-process run.

The assignment (:func:`assign`) is seeded and deterministic: an item's key (its group, e.g. the system, and its
id) is hashed with the seed (BLAKE2b); within each group the distinct keys are ordered by their hash and dealt
to the shards in turn, the deal going on from group to group, so every group is split as evenly as it can be
(its shards differ by at most one key) and so are the shards' totals of keys.  All items with one key (an id
repeated within a group) go to one shard.  The assignment depends on the set of keys, not on their order in
the file.

Shard file (JSON, UTF-8)::

    {"format": "evalboard-shard/1",
     "manifest": {"command": "qa", "shard": i, "shards": N, "seed": S, "evalboard_version": ...,
                  "input": {"name": ..., "gt_digest": ..., "predictions_digest": ..., "patches": [...]},
                  "n_items": <items of the whole input>, "assignment_digest": ...,
                  "config": <typed JSON>, "signature": ..., "provenance": {...}, "decision": {...},
                  "items": [[group, id], ...]},
     "columns": [...], "items": [[value, ...], ...], "extra": {...}}

Everything in the manifest but ``shard``, ``items`` and ``input.name`` (a path, which may differ between two
checkouts) must be equal in every shard of a merge.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators import __version__

#: The shard file's format tag.
FORMAT = "evalboard-shard/1"
#: Default seed of :func:`assign`.
DEFAULT_SEED = 0
#: Manifest fields that differ from shard to shard of one run (never compared).
PER_SHARD = ("shard", "items")
#: Items named one by one in a refusal (the rest are counted).
NAMED = 10


class ShardError(ValueError):
    """A shard option, file or set of shard files that cannot be used; the message names the files."""


def parse_shard(text: str) -> tuple[int, int]:
    """``(i, N)`` of a ``--shard i/N`` value (1-based shard ``i`` of ``N``).

    Parameters
    ----------
    text : str
        ``"i/N"`` with integers ``1 <= i <= N``.

    Returns
    -------
    (int, int)

    Raises
    ------
    ShardError
        Not of that form, or ``i`` outside ``1..N``.

    >>> parse_shard("2/8")
    (2, 8)
    """
    head, sep, tail = str(text).strip().partition("/")
    try:
        i, n = int(head), int(tail)
    except ValueError:
        i = n = 0
    if not sep or n < 1 or not 1 <= i <= n:
        raise ShardError(f"--shard takes i/N with 1 <= i <= N (shard i of N), got {text!r}")
    return i, n


def _hash(seed: int, key: Hashable) -> bytes:
    return hashlib.blake2b(json.dumps([seed, key], ensure_ascii=False).encode("utf-8", "surrogatepass"),
                           digest_size=16).digest()


def assign(keys: Sequence[tuple[str | None, str]], n_shards: int, seed: int = DEFAULT_SEED) -> list[int]:
    """The shard (1-based) of each item: seeded, deterministic, balanced within groups (see the module docstring).

    Parameters
    ----------
    keys : sequence of (group, id), shape (n_items,)
        Each item's group (``None`` without groups) and id, in input order; equal keys get one shard.
    n_shards : int
        Shards, at least 1.
    seed : int
        Seed of the hash.

    Returns
    -------
    list of int, shape (n_items,)
        Values in ``1..n_shards``; every item has exactly one.

    Examples
    --------
    Four ids of one group on two shards: two each, whatever the seed.

    >>> sorted(assign([(None, "a"), (None, "b"), (None, "c"), (None, "d")], 2, seed=7))
    [1, 1, 2, 2]
    """
    if n_shards < 1:
        raise ValueError(f"n_shards must be at least 1, got {n_shards}")
    groups: dict[Any, set] = {}
    for key in keys:
        groups.setdefault(key[0], set()).add(key)
    shard_of: dict[tuple, int] = {}
    turn = 0
    for group in sorted(groups, key=lambda g: (g is not None, "" if g is None else str(g))):
        for key in sorted(groups[group], key=lambda k: (_hash(seed, list(k)), str(k[1]))):
            shard_of[key] = turn % n_shards + 1
            turn += 1
    return [shard_of[key] for key in keys]


def assignment_digest(shards: Iterable[int]) -> str:
    """SHA-256 of an assignment (one shard number a line, in input order): equal in every shard of one run."""
    h = hashlib.sha256()
    for s in shards:
        h.update(b"%d\n" % s)
    return h.hexdigest()


def manifest(command: str, shard: int, n_shards: int, *, seed: int, input: dict[str, Any], n_items: int,  # noqa: A002
             assignment: str, config: Any, signature: str, provenance: dict, decision: dict,
             items: Sequence[tuple[str | None, str]]) -> dict[str, Any]:
    """A shard's manifest (a JSON-ready dict; ``config`` written as typed JSON, :mod:`evaluators.io.typed_json`).

    Parameters
    ----------
    command : str
        The batch command (``qa``).
    shard, n_shards : int
        Shard ``shard`` of ``n_shards``.
    seed : int
        Seed of :func:`assign`.
    input : dict
        ``name``, ``gt_digest`` (SHA-256 of the GT file, as ``--log`` records it), ``predictions_digest``,
        ``patches`` (digests of the GT patches applied, in order).
    n_items : int
        Items of the whole input (every shard).
    assignment : str
        :func:`assignment_digest` of the whole input's assignment.
    config : object
        The task's config (a dataclass).
    signature : str
        The scores' signature (rules, tokenizers, version).
    provenance : dict
        How the text was cut (tokenizer provenance).
    decision : dict
        Settings decided once on the whole input before the items were split (task, group field ...).
    items : sequence of (group, id)
        This shard's items, in input order.
    """
    from evaluators.io.typed_json import encode

    return {"command": command, "shard": shard, "shards": n_shards, "seed": seed, "evalboard_version": __version__,
            "input": dict(input), "n_items": n_items, "assignment_digest": assignment, "config": encode(config),
            "signature": signature, "provenance": provenance, "decision": decision,
            "items": [list(k) for k in items]}


def write_shard(path: str | Path, manifest: dict[str, Any], columns: Sequence[str], rows: Iterable[Sequence],
                extra: dict[str, Any] | None = None) -> None:
    """Write a shard file: the manifest, then one JSON array per item (values in ``columns`` order) a line.

    Raises
    ------
    OSError
        The file cannot be written.
    """
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write('{"format": ' + json.dumps(FORMAT) + ',\n "manifest": ')
        f.write(json.dumps(manifest, ensure_ascii=False, allow_nan=False))
        f.write(',\n "columns": ' + json.dumps(list(columns)) + ',\n "extra": ')
        f.write(json.dumps(extra or {}, ensure_ascii=False, allow_nan=False))
        f.write(',\n "items": [')
        first = True
        for row in rows:
            f.write(("\n  " if first else ",\n  ") + json.dumps(list(row), ensure_ascii=False, allow_nan=False))
            first = False
        f.write("\n ]}\n")


@dataclass(frozen=True)
class ShardFile:
    """A shard file as read: its name, manifest, columns, per-item rows (each the JSON text of its values, UTF-8,
    parsed when used: a shard of a million records is held as text, not as Python values) and extra data."""

    path: str
    manifest: dict[str, Any]
    columns: tuple[str, ...]
    rows: list[bytes] = field(repr=False)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def shard(self) -> int:
        return self.manifest["shard"]

    def config(self) -> Any:
        """The task's config, decoded from its typed JSON."""
        from evaluators.io.typed_json import decode

        return decode(self.manifest["config"])

    def values(self) -> Iterator[list]:
        """Each row's values (a list in :attr:`columns` order), in the file's order."""
        for raw in self.rows:
            yield json.loads(raw)


_REQUIRED = ("command", "shard", "shards", "seed", "evalboard_version", "input", "n_items", "assignment_digest",
             "config", "signature", "decision", "items")
#: The first lines of a shard file as :func:`write_shard` writes it (read line by line; any other layout of the
#: same JSON is read whole).
_LAYOUT = (b'{"format": ', b' "manifest": ', b' "columns": ', b' "extra": ', b' "items": [')


def _read_lines(f) -> dict[str, Any] | None:
    """The shard file of the open binary file ``f`` in :func:`write_shard`'s layout, rows kept as text; ``None``
    when it is laid out otherwise."""
    head = []
    for prefix in _LAYOUT:
        line = f.readline()
        if not line.startswith(prefix):
            return None
        head.append(line[len(prefix):].rstrip(b"\r\n").rstrip(b","))
    if head[-1] != b"":
        return None
    data = {"format": json.loads(head[0]), "manifest": json.loads(head[1]), "columns": json.loads(head[2]),
            "extra": json.loads(head[3])}
    rows = []
    for line in f:
        text = line.strip()
        if text in (b"]}", b"]}\n"):
            break
        if text.startswith(b"]"):
            return None
        rows.append(text[:-1] if text.endswith(b",") else text)
    else:
        return None
    data["items"] = rows
    return data


def read_shard(path: str | Path) -> ShardFile:
    """Read one shard file.

    Raises
    ------
    ShardError
        Unreadable, not JSON, or not a shard file (naming the file and what is wrong).
    """
    name = str(path)
    try:
        with open(path, "rb") as f:
            try:
                data = _read_lines(f)
            except (UnicodeDecodeError, ValueError):
                data = None
            if data is None:
                f.seek(0)
                data = json.loads(f.read().decode("utf-8"))
                if isinstance(data, dict) and isinstance(data.get("items"), list):
                    data["items"] = [json.dumps(r, ensure_ascii=False).encode("utf-8") for r in data["items"]]
    except OSError as exc:
        raise ShardError(f"cannot read {name}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise ShardError(f"{name} is not a shard file (not JSON: {exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise ShardError(f"{name} is not a shard file of this EvalBoard (format {found!r}, expected {FORMAT!r}; "
                         "write shards with --shard i/N --output-file FILE)")
    m = data.get("manifest")
    missing = [k for k in _REQUIRED if not isinstance(m, dict) or k not in m]
    if missing or not isinstance(data.get("columns"), list) or not isinstance(data.get("items"), list):
        raise ShardError(f"{name}: the shard file lacks {', '.join(missing) or 'its columns or items'}")
    if len(data["items"]) != len(m["items"]):
        raise ShardError(f"{name}: {len(data['items'])} item rows but its manifest lists {len(m['items'])} items")
    return ShardFile(name, m, tuple(data["columns"]), data["items"], data.get("extra") or {})


def _check_rows(f: ShardFile) -> None:
    """A shard's rows hold the items its manifest lists, in that order (when its columns have ``id``)."""
    if "id" not in f.columns:
        return
    at_id = f.columns.index("id")
    at_group = f.columns.index("group") if "group" in f.columns else None
    for k, (raw, item) in enumerate(zip(f.rows, f.manifest["items"])):
        try:
            row = json.loads(raw)
            key = [row[at_group] if at_group is not None else None, row[at_id]]
        except (ValueError, TypeError, IndexError) as exc:
            raise ShardError(f"{f.path}: item row {k + 1} is not a row of values ({exc})") from exc
        if key != list(item):
            raise ShardError(f"{f.path}: item row {k + 1} is {key[1]!r} but its manifest lists {item[1]!r} there; "
                             "the shard file was changed after it was written")


def _compared(m: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in m.items() if k not in PER_SHARD}
    out["input"] = {k: v for k, v in m["input"].items() if k != "name"}
    return out


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _names(values: Sequence[str]) -> str:
    shown = ", ".join(values[:NAMED])
    return shown + (f" and {len(values) - NAMED} more" if len(values) > NAMED else "")


#: The order in which differing manifest fields are named (what most likely explains the others first).
_ORDER = ("command", "input", "config", "signature", "provenance", "evalboard_version", "seed", "shards", "decision")


def _weight(flat_key: str) -> int:
    head = flat_key.split(".", 1)[0]
    return _ORDER.index(head) if head in _ORDER else len(_ORDER)


def check_shards(files: Sequence[ShardFile]) -> list[ShardFile]:
    """Check that ``files`` are the shards of one run, each once, all there, no item twice; returns them by shard.

    Parameters
    ----------
    files : sequence of ShardFile
        At least one.

    Returns
    -------
    list of ShardFile
        Ordered by shard number.

    Raises
    ------
    ShardError
        Mixed manifests (the first field that differs, with both values and both files), a missing shard, a
        repeated shard (both files), an item in two shards (its id and both files), or shards that do not add
        up to the run's items.
    """
    if not files:
        raise ShardError("no shard files given")
    first = files[0]
    base = _flat(_compared(first.manifest))
    for f in files[1:]:
        other = _flat(_compared(f.manifest))
        diff = sorted((k for k in dict.fromkeys([*base, *other]) if base.get(k) != other.get(k)), key=_weight)
        if diff:
            k = diff[0]
            more = f" (and {len(diff) - 1} more field(s): {_names(diff[1:])})" if len(diff) > 1 else ""
            raise ShardError(f"mixed manifests: {first.path} and {f.path} differ in {k} ({_short(base.get(k))} vs "
                             f"{_short(other.get(k))}){more}; merge shards of one run only")
    n = first.manifest["shards"]
    by_shard: dict[int, list[str]] = {}
    for f in files:
        by_shard.setdefault(f.shard, []).append(f.path)
    repeated = {s: paths for s, paths in by_shard.items() if len(paths) > 1}
    if repeated:
        s, paths = min(repeated.items())
        raise ShardError(f"shard {s} of {n} given {len(paths)} times: {', '.join(paths)}")
    missing = [str(s) for s in range(1, n + 1) if s not in by_shard]
    if missing:
        raise ShardError(f"missing shard(s) {_names(missing)} of {n}: only {len(files)} of {n} shard files given "
                         f"({', '.join(f.path for f in files)})")
    files = sorted(files, key=lambda f: f.shard)
    for f in files:
        _check_rows(f)
    seen: dict[tuple, str] = {}
    twice: list[str] = []
    for f in files:
        for key in {tuple(k) for k in f.manifest["items"]}:
            where = seen.get(key)
            if where is not None:
                group, rid = key
                twice.append(f"{rid!r}" + (f" ({group})" if group is not None else "") + f" in {where} and {f.path}")
            else:
                seen[key] = f.path
    if twice:
        raise ShardError(f"duplicated id(s) across shards: {_names(twice)}; each item belongs to one shard")
    total = sum(len(f.rows) for f in files)
    if total != first.manifest["n_items"]:
        raise ShardError(f"the shards hold {total} items but the run has {first.manifest['n_items']} "
                         f"({', '.join(f.path for f in files)})")
    return files


def pooled_rows(columns: Sequence[str], expected: Sequence[str], rows: Iterable[Sequence], *, what: str,
                item: str) -> list[Sequence]:
    """Every shard's rows pooled back into input order, checked: the one pooling step of the tasks whose rows lead
    with the item's position (``memory``, ``testsets``, ``dialogue``, ``narrative``).

    Parameters
    ----------
    columns : sequence of str
        The shard files' columns.
    expected : sequence of str
        The task's columns (its ``COLUMNS``; the first is the item's 0-based position in the whole input).
    rows : iterable of sequence
        Every shard's rows, in any order.
    what, item : str
        For the messages: what the rows are (``"narrative pairs"``) and one item (``"pair"``).

    Returns
    -------
    list of sequence
        The rows sorted by position.

    Raises
    ------
    ValueError
        Other columns than ``expected``, or two rows of one position (an item in two shards).
    """
    if tuple(columns) != tuple(expected):
        raise ValueError(f"the shard's columns are not those of {what}: {', '.join(columns)}")
    ordered = sorted(rows, key=lambda r: r[0])
    for a, b in zip(ordered, ordered[1:]):
        if a[0] == b[0]:
            raise ValueError(f"{item} {a[0] + 1} stands in two shards")
    return ordered


__all__ = ["DEFAULT_SEED", "FORMAT", "ShardError", "ShardFile", "assign", "assignment_digest", "check_shards",
           "manifest", "parse_shard", "pooled_rows", "read_shard", "write_shard"]
