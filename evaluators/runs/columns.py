"""A run's per-item table as column blobs: Parquet (pyarrow), zstd, float64 values dictionary-encoded.

Each column of an :class:`~evaluators.run_result.ItemTable` is written as its own one-column Parquet file
and addressed by the SHA-256 of those bytes, so the columns that runs of one dataset share (item ids,
questions, ground truth, slices) are kept once.  Metric values stay float64 (a stored value equals the
logged one bit for bit; float32 would not) and are dictionary-encoded: a metric with few distinct values
(exact match 0/1, a 1-5 judge score) costs about a bit per item; a column of mostly distinct values
(item ids, a continuous similarity) is written plain (:data:`DICTIONARY_RATIO`).  Reviewer fields are JSON
values, kept as their JSON text (compact separators), so a tuple comes back as a list (the table's digest, which reads
both as JSON arrays, is unchanged).

Reference: Apache Parquet format, dictionary encoding and ZSTD compression
(https://parquet.apache.org/docs/file-format/).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.run_result import ItemTable

#: Column kinds of a manifest, in the table's order.
KINDS = ("item_id", "system", "slice", "value", "field")
#: A column is dictionary-encoded when it has at most one distinct value per this many rows.
DICTIONARY_RATIO = 4
#: Largest blob read back (bytes): one column of a run of tens of millions of items.
MAX_BLOB_BYTES = 1 << 30


class CorruptBlob(ValueError):
    """Stored bytes that do not match their digest, or a table that does not match the run's digest."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _json_texts(values: Sequence[Any]) -> list[str]:
    """Each value's compact JSON text (orjson where it takes the value: the same values read back, faster)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is in requirements.txt
        return [_json(v) for v in values]
    out = []
    for v in values:
        try:
            out.append(orjson.dumps(v).decode("utf-8"))
        except TypeError:  # a type orjson does not take (an int over 64 bits ...)
            out.append(_json(v))
    return out


def encode_column(kind: str, values: Sequence[Any]) -> bytes:
    """One column as Parquet bytes (a single column ``v``; zstd; dictionary encoding; no statistics).

    Parameters
    ----------
    kind : {"item_id", "system", "slice", "value", "field"}
        ``value``: float or None (float64); ``field``: any JSON value (stored as its JSON text); else text or None.
    values : sequence, shape (n,)

    Returns
    -------
    bytes
        The same bytes for the same values and pyarrow version (dictionary-encoded when at most one value in
        :data:`DICTIONARY_RATIO` is distinct).

    Raises
    ------
    ValueError
        An unknown kind, or a field value that is not JSON (NaN, an unknown type).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if kind == "value":
        array = pa.array(values, type=pa.float64())
    elif kind == "field":
        try:
            array = pa.array(_json_texts(values), type=pa.string())
        except (TypeError, ValueError) as exc:
            raise ValueError(f"a field value is not JSON: {exc}") from exc
    elif kind in KINDS:
        array = pa.array(values, type=pa.string())
    else:
        raise ValueError(f"unknown column kind {kind!r}; one of {', '.join(KINDS)}")
    # a dictionary pays for itself when values repeat (exact match, judge scores, slices, a dataset's
    # questions); every value distinct (ids, a continuous similarity) is cheaper written plain
    few = len(set(array.to_pylist() if kind == "field" else values)) * DICTIONARY_RATIO <= max(1, len(values))
    sink = io.BytesIO()
    pq.write_table(pa.table({"v": array}), sink, compression="zstd", use_dictionary=few, write_statistics=False,
                   store_schema=False)
    return sink.getvalue()


def decode_column(kind: str, data: bytes) -> list[Any]:
    """The values of :func:`encode_column`'s bytes (fields parsed back from their JSON text).

    Raises
    ------
    CorruptBlob
        Bytes that are not such a Parquet file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        values = pq.read_table(io.BytesIO(data)).column("v").to_pylist()
    except (pa.ArrowException, KeyError, OSError) as exc:
        raise CorruptBlob(f"a stored column cannot be read: {exc}") from exc
    return [json.loads(v) for v in values] if kind == "field" else values


def blob_digest(data: bytes) -> str:
    """SHA-256 (hex) of a blob's bytes: its address."""
    return hashlib.sha256(data).hexdigest()


def table_columns(table: ItemTable) -> list[tuple[str, str, bytes]]:
    """The table's columns as ``(kind, name, bytes)`` in its column order (:attr:`ItemTable.columns`)."""
    out = [("item_id", "item_id", encode_column("item_id", table.item_id)),
           ("system", "system", encode_column("system", table.system))]
    out += [("slice", k, encode_column("slice", v)) for k, v in table.slices.items()]
    out += [("value", k, encode_column("value", v)) for k, v in table.values.items()]
    out += [("field", k, encode_column("field", v)) for k, v in table.fields.items()]
    return out


#: Column kinds that runs of one dataset share (kept decoded by :func:`table_of`'s ``cache``).
SHARED_KINDS = ("item_id", "system", "slice")


def table_of(columns: Sequence[tuple[str, str, str]], blobs: Mapping[str, bytes], *,
             items_digest: str | None = None, cache: Any = None) -> ItemTable:
    """Rebuild an :class:`ItemTable` from a manifest and its blobs, checking every digest.

    Parameters
    ----------
    columns : sequence of (kind, name, blob digest)
        The run's manifest (:func:`table_columns` order).
    blobs : mapping of str to bytes
        Blob digest -> stored bytes.
    items_digest : str, optional
        The table's expected :meth:`ItemTable.digest`.
    cache : mutable mapping, optional
        Blob digest -> decoded values of columns already checked (:data:`SHARED_KINDS` only are put there): a
        listing of many runs of one dataset decodes their shared item ids once.

    Returns
    -------
    ItemTable

    Raises
    ------
    CorruptBlob
        A missing blob, bytes whose SHA-256 is not their address, or a rebuilt table whose digest is not
        ``items_digest``.
    """
    got: dict[str, dict[str, list]] = {k: {} for k in KINDS}
    for kind, name, digest in columns:
        if cache is not None and digest in cache:
            got[kind][name] = cache[digest]
            continue
        data = blobs.get(digest)
        if data is None:
            raise CorruptBlob(f"column {name!r}: blob {digest[:12]} is missing")
        if blob_digest(data) != digest:
            raise CorruptBlob(f"column {name!r}: the stored bytes do not match their digest {digest[:12]}")
        got[kind][name] = decode_column(kind, data)
        if cache is not None and kind in SHARED_KINDS:
            cache[digest] = got[kind][name]
    ids = got["item_id"].get("item_id", [])
    table = ItemTable(tuple(ids), tuple(got["system"].get("system", [])), got["value"], got["slice"], got["field"])
    if items_digest is not None and table.digest() != items_digest:
        raise CorruptBlob(f"the stored values do not match the run's digest {items_digest[:12]}")
    return table


__all__ = ["DICTIONARY_RATIO", "KINDS", "SHARED_KINDS", "MAX_BLOB_BYTES", "CorruptBlob", "blob_digest", "decode_column",
           "encode_column", "table_columns", "table_of"]
