"""A run's per-item table as column blobs: Parquet (pyarrow), zstd, float64 values dictionary-encoded.

Each column of an :class:`~evaluators.run_result.ItemTable` is written as its own one-column Parquet file
and addressed by the SHA-256 of those bytes, so the columns that runs of one dataset share (item ids,
questions, ground truth, slices) are kept once.  Metric values stay float64 (a stored value equals the
logged one bit for bit; float32 would not) and are dictionary-encoded: a metric with few distinct values
(exact match 0/1, a 1-5 judge score) costs about a bit per item; a column of mostly distinct values
(item ids, a continuous similarity) is written plain (:data:`DICTIONARY_RATIO`).  Reviewer fields are JSON values,
kept as their JSON text (compact separators), so a tuple comes back as a list (the table's digest, which reads both as
JSON arrays, is unchanged); they follow the same rule (their JSON texts counted).

Reference: Apache Parquet format, dictionary encoding and ZSTD compression
(https://parquet.apache.org/docs/file-format/).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
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


@contextmanager
def bulk_memory() -> Iterator[None]:
    """Arrow's jemalloc pool as its default memory pool while a large run's columns are built (then the pool
    before it again); the default pool where this pyarrow has no jemalloc.

    Building a 1M-item run allocates and frees columns of 100 MB again and again; the default mimalloc pool hands
    freed pages back to the system and faults them in again (measured at 1M records: 1.9 s of system time in
    :func:`evaluators.tasks.builtin.qa_run_columns`, 0.6 s with jemalloc).  Buffers remember their pool: arrays
    made before, inside or after are used alike.  The setting is the process's, so threads started inside use it.
    """
    import pyarrow as pa

    try:
        pool = pa.jemalloc_memory_pool()
    except (NotImplementedError, pa.ArrowException):  # a pyarrow built without jemalloc
        yield
        return
    before = pa.default_memory_pool()
    pa.set_memory_pool(pool)
    try:
        yield
    finally:
        pa.set_memory_pool(before)


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
    return _parquet(array, len(set(array.to_pylist() if kind == "field" else values)))


def _parquet(array, distinct: int) -> bytes:
    """One column's Parquet bytes (dictionary-encoded when at most one value in :data:`DICTIONARY_RATIO` of the
    ``len(array)`` is distinct; ``distinct`` may be any count above that limit when the column has more)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    few = distinct * DICTIONARY_RATIO <= max(1, len(array))
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


@dataclass(frozen=True)
class EncodedTable:
    """A one-system per-item table already laid out as column blobs (:func:`encode_arrays`): what
    :meth:`evaluators.runs.store.RunStore.log_run` stores in place of ``table_columns(result.items)``, equal byte
    for byte and digest for digest to the :class:`ItemTable` of the same values.

    Attributes
    ----------
    columns : tuple of (kind, name, bytes)
        As :func:`table_columns`.
    digest : str
        :meth:`ItemTable.digest` of the same table.
    n_items : int
    systems, metrics : tuple of str
    summary : tuple of dict
        :meth:`RunResult.summary` of the same table, each row's ``to_dict()``.
    """

    columns: tuple[tuple[str, str, bytes], ...]
    digest: str
    n_items: int
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    summary: tuple[dict, ...]


#: Characters that JSON writes escaped in a string (``json.dumps(ensure_ascii=False)`` and orjson alike), and the
#: control characters among them (escaped as ``\\n``, ``\\u0001`` ...).
_ESCAPED, _CONTROL = r'[\x00-\x1f"\\]', r"[\x00-\x1f]"


def _json_strings(array):
    """Each value's JSON text (``null`` for a missing one) as a string array: every value quoted in bulk, and only
    the values with a character JSON escapes taken apart: their quotes and backslashes escaped in bulk, the few with
    a control character written by :func:`json.dumps` (equal to orjson's text for every string)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    quoted = pc.binary_join_element_wise('"', array, '"', "")
    escaped = pc.fill_null(pc.match_substring_regex(array, _ESCAPED), False)
    if pc.any(escaped).as_py():
        rows = pa.array(np.flatnonzero(escaped.to_numpy(zero_copy_only=False)))
        original = array.take(rows)  # in row order, as they are put back
        texts = pc.replace_substring(pc.replace_substring(original, "\\", "\\\\"), '"', '\\"')
        control = pc.match_substring_regex(texts, _CONTROL)
        if pc.any(control).as_py():
            at = pa.array(np.flatnonzero(control.to_numpy(zero_copy_only=False)))
            written = [_json(v)[1:-1] for v in original.take(at).to_pylist()]
            texts = pc.replace_with_mask(texts, control, pa.array(written, pa.string()))
        texts = pc.binary_join_element_wise('"', texts, '"', "")
        if quoted.nbytes + texts.nbytes < (1 << 31) - 1:  # a take from both (replace_with_mask costs 10x as much)
            index = np.arange(len(array), dtype=np.int64)
            index[rows.to_numpy()] = len(array) + np.arange(len(rows), dtype=np.int64)
            quoted = pa.concat_arrays([quoted, texts]).take(pa.array(index))
        else:  # beyond 32-bit offsets
            quoted = pc.replace_with_mask(quoted, escaped, texts)
    return pc.fill_null(quoted, "null")


@dataclass(frozen=True)
class Coded:
    """A column as codes into a table of its distinct values (:func:`coded`): texts that repeat (questions, answers,
    slices) are escaped, hashed and counted once, whichever rows a part of the run takes.

    Attributes
    ----------
    codes : numpy.ndarray of int64, shape (n,)
        Each row's index into ``values``; -1 for a missing value (``None``).
    values : pyarrow.StringArray
        The distinct values (a slice: the values; a field: their JSON texts, ``null`` among them).
    """

    codes: Any
    values: Any

    def take(self, rows) -> "Coded":
        """The rows ``rows`` (an index array) of the column, on the same table."""
        return Coded(self.codes[rows], self.values)


def coded(array, *, as_json: bool = False) -> Coded | None:
    """A string array (or, with ``as_json``, a string or list-of-strings array, as JSON texts) as :class:`Coded`:
    the values hashed once, only the distinct ones escaped; ``None`` for a list with a missing element."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def encode(strings):
        encoded = strings.dictionary_encode()
        return pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary

    if as_json and pa.types.is_list(array.type):
        if array.null_count or array.values.null_count:
            return None
        offsets = array.offsets.to_numpy()
        codes, values = encode(array.values.slice(offsets[0], offsets[-1] - offsets[0]))
        texts = _json_strings(values)
        if len(offsets) > 1 and np.all(np.diff(offsets) == 1):  # one string a list (the usual): a code a list
            return Coded(codes, pc.binary_join_element_wise("[", texts, "]", ""))
        inner = pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), texts.take(pa.array(codes)))
        codes, values = encode(pc.binary_join_element_wise("[", pc.binary_join(inner, ","), "]", ""))
        return Coded(codes, values)
    if not pa.types.is_string(array.type):
        return None
    codes, values = encode(array)
    if as_json:  # a missing value's text: null
        values = pa.concat_arrays([_json_strings(values), pa.array(["null"], pa.string())])
        codes = np.where(codes < 0, len(values) - 1, codes)
    return Coded(codes, values)


def json_texts(array):
    """A string array's (or a list-of-strings array's) JSON texts, one a row (``null`` for a missing string), as a
    string array; ``None`` for a list with a missing element, or another type."""
    import pyarrow as pa

    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        return _json_lists(array)
    return _json_strings(array) if pa.types.is_string(array.type) else None


def coded_table(codes, table, *, as_json: bool = False) -> Coded:
    """Codes into a list of distinct values (``None`` among them: a missing value) as :class:`Coded`, of the values
    or (``as_json``) of their JSON texts.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n,)
    table : list of str or None
        Distinct values, by code.
    """
    import numpy as np
    import pyarrow as pa

    values = pa.array(table, pa.string())
    codes = np.asarray(codes, dtype=np.int64)
    if as_json:
        return Coded(codes, _json_strings(values))
    missing = np.array([v is None for v in table] + [False], dtype=bool)  # code -1 stays missing
    return Coded(np.where(missing[codes], -1, codes), values)


def _json_coded(column: Coded):
    """A coded slice's JSON texts (``null`` for a missing value) and its values (nulls for missing ones)."""
    import numpy as np
    import pyarrow as pa

    codes = column.codes
    texts = pa.concat_arrays([_json_strings(column.values), pa.array(["null"], pa.string())])
    index = np.where(codes < 0, len(column.values), codes)
    return texts.take(pa.array(index)), column.values.take(pa.array(codes, mask=codes < 0))


def _json_lists(array):
    """Each list of strings' JSON text (``["a","b"]``) as a string array; ``None`` when a list or an element is
    missing."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if array.null_count or array.values.null_count:
        return None
    inner = pa.ListArray.from_arrays(array.offsets, _json_strings(array.values))
    return pc.binary_join_element_wise("[", pc.binary_join(inner, ","), "]", "")


def _json_floats(values):
    """Each float's JSON text (``repr``, ``null`` for NaN) as a string array: one text per distinct value."""
    import numpy as np
    import pyarrow as pa

    nan = np.isnan(values)
    finite = values[~nan]
    uniq, codes = np.unique(finite, return_inverse=True)
    distinct = len(uniq) + int(nan.any())  # -0.0 and 0.0 one value, as in a Python set
    if np.any(np.signbit(finite) & (finite == 0)):  # ... but not to repr
        uniq, codes = finite, np.arange(len(finite))
    index = np.full(len(values), len(uniq), dtype=np.int64)
    index[~nan] = codes
    texts = pa.array([repr(float(u)) for u in uniq] + ["null"], pa.string())
    return texts.take(pa.array(index)), distinct


def _joined(texts) -> memoryview:
    """The texts joined by commas, as bytes (no copy back into Python objects)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if texts.nbytes + len(texts) < (1 << 31) - 1:  # the joined text fits 32-bit offsets: no cast
        one = pa.ListArray.from_arrays(pa.array([0, len(texts)], pa.int32()), texts)
        return memoryview(pc.binary_join(one, ",")[0].as_buffer())
    one = pa.LargeListArray.from_arrays(pa.array([0, len(texts)], pa.int64()), texts.cast(pa.large_string()))
    return memoryview(pc.binary_join(one, pa.scalar(",", pa.large_string()))[0].as_buffer())


def _code_count(codes) -> int:
    """Distinct codes (-1, a missing value, counted as one value, as ``None`` in a Python set)."""
    import numpy as np

    return int(np.count_nonzero(np.bincount(codes + 1))) if len(codes) else 0


def _distinct(array) -> int:
    import pyarrow.compute as pc

    return pc.count_distinct(array, mode="all").as_py()


def _distinct_texts(texts) -> int:
    """The distinct values of a string array without nulls, exactly when at most one value in
    :data:`DICTIONARY_RATIO` is distinct, else a count above that limit (all :func:`_parquet` needs): the values
    before the first ``limit + 1`` are counted first, so a column of distinct texts (questions, predictions) is
    hashed a quarter, not whole."""
    limit = max(1, len(texts)) // DICTIONARY_RATIO  # few: distinct * DICTIONARY_RATIO <= max(1, n), i.e. <= limit
    head = len(texts.slice(0, limit + 1).unique())
    return head if head > limit or len(texts) <= limit + 1 else len(texts.unique())


def encode_arrays(item_id, system: str, slices: Mapping[str, Any], values: Mapping[str, Any],
                  fields: Mapping[str, Any], *, unit: str = "item", ground_truth: str | None = None
                  ) -> tuple[EncodedTable, str | None] | None:
    """One system's per-item columns, held as arrays, as the blobs, digest and summary of the :class:`ItemTable`
    with the same values (:func:`table_columns`, :meth:`ItemTable.digest`, :meth:`RunResult.summary`): no Python
    object per value.

    Parameters
    ----------
    item_id : pyarrow.StringArray, shape (n,)
        Unique, none missing.
    system : str
        Every row's system.
    slices : mapping of str to pyarrow.StringArray or Coded, each shape (n,)
        Missing values as nulls (codes -1).
    values : mapping of str to numpy.ndarray of float64, each shape (n,)
        NaN where the metric is undefined (``None`` in the table).
    fields : mapping of str to pyarrow array or Coded, each shape (n,)
        Strings (nulls: ``None``) or lists of strings (a tuple of strings in the table), or their JSON texts coded
        (:func:`coded` ``(..., as_json=True)``).  One object given for two fields is encoded once (the same bytes).
    unit : str
        The run's unit (named in the summary's intervals).
    ground_truth : str, optional
        A field of lists: :func:`evaluators.runs.store.ground_truth_digest` of it is returned too.

    Returns
    -------
    (EncodedTable, str or None) or None
        ``None`` when the columns need the per-value path (an id twice or missing, a value that is not finite, a
        field of another type): :func:`table_columns` of an :class:`ItemTable` then gives the same bytes.
    """
    import hashlib

    import numpy as np
    import pyarrow as pa

    from evaluators.metrics.statistics import bootstrap_ci
    from evaluators.run_result import ALL, SummaryRow

    n = len(item_id)
    if not n or item_id.null_count:
        return None
    order = pa.compute.sort_indices(item_id)  # UTF-8 byte order is code point order (Python's order of str)
    ordered_ids = item_id.take(order)
    if n > 1 and pa.compute.any(pa.compute.equal(ordered_ids.slice(1), ordered_ids.slice(0, n - 1))).as_py():
        return None  # an id twice
    for v in values.values():
        if len(v) != n or np.isinf(v).any():
            return None
    names = ["item_id", "system", *slices, *values, *fields]
    if len(set(names)) != len(names) or any(len(c.codes if isinstance(c, Coded) else c) != n
                                            for c in (*slices.values(), *fields.values())):
        return None
    one = pa.array(np.zeros(n, dtype=np.int64))
    systems = pa.array([system], pa.string()).take(one)
    columns = [("item_id", "item_id", _parquet(item_id, n)), ("system", "system", _parquet(systems, 1))]
    texts = [_json_strings(item_id), _json_strings(pa.array([system], pa.string())).take(one)]
    for name, column in slices.items():
        if isinstance(column, Coded):
            text, array = _json_coded(column)
            columns.append(("slice", name, _parquet(array, _code_count(column.codes))))
        else:
            columns.append(("slice", name, _parquet(column, _distinct(column))))
            text = _json_strings(column)
        texts.append(text)
    for name, column in values.items():
        column = np.ascontiguousarray(column, dtype=float)
        text, distinct = _json_floats(column)
        columns.append(("value", name, _parquet(pa.array(column, pa.float64(), from_pandas=True), distinct)))
        texts.append(text)
    gt_digest = None
    same: dict[int, tuple] = {}  # a column given twice (the same object: a raw prediction that is the prediction)
    for name, column in fields.items():
        if id(column) in same:
            text, data = same[id(column)]
            columns.append(("field", name, data))
            texts.append(text)
            continue
        if isinstance(column, Coded):  # of JSON texts (coded(..., as_json=True)): none missing
            if (column.codes < 0).any():
                return None
            text = column.values.take(pa.array(column.codes))
        elif pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            text = _json_lists(column)
            if text is None:
                return None
        elif pa.types.is_string(column.type):
            text = _json_strings(column)
        else:
            return None
        columns.append(("field", name, _parquet(text, _distinct_texts(text))))
        texts.append(text)
        same[id(column)] = text, columns[-1][2]
        if name == ground_truth:
            pairs = pa.compute.binary_join_element_wise("[", texts[0], ",", text, "]", "")
            ordered = pairs.take(order)
            h = hashlib.sha256(b"[")
            h.update(_joined(ordered))
            h.update(b"]")
            gt_digest = h.hexdigest()
    # ItemTable.digest: the canonical JSON {"columns": [...], "data": [[...], ...]}, written a column at a time
    h = hashlib.sha256(('{"columns":' + _json(names) + ',"data":[').encode("utf-8"))
    joined: dict[int, memoryview] = {}
    for k, text in enumerate(texts):
        h.update(b",[" if k else b"[")
        if id(text) not in joined:
            joined[id(text)] = _joined(text)
        h.update(joined[id(text)])
        h.update(b"]")
    h.update(b"]}")
    # RunResult.summary: the overall row, then each slice value (sorted), by metric
    groups = [("", ALL, np.arange(n))]
    for name, column in slices.items():
        column = column if isinstance(column, Coded) else coded(column)
        codes, dictionary = column.codes, column.values.to_pylist()
        for v in sorted(x for x in dictionary if x is not None):
            rows = np.flatnonzero(codes == dictionary.index(v))
            if len(rows):  # a value of the table that this part does not have: no row
                groups.append((name, v, rows))
    summary = []
    for name, value, rows in groups:
        for metric, column in values.items():
            x = np.asarray(column, dtype=float)[rows]
            x = x[~np.isnan(x)]
            mean = sum(x.tolist()) / len(x) if len(x) else None
            low = high = None
            if len(x) >= 2:
                ci = bootstrap_ci(x, n_resamples=1000, confidence_level=0.95, seed=0, unit=unit)
                low, high = ci.ci_low, ci.ci_high
            summary.append(SummaryRow(system, metric, name, value, len(x), len(rows), mean, low, high).to_dict())
    return EncodedTable(tuple(columns), h.hexdigest(), n, (system,) if n else (), tuple(values),
                        tuple(summary)), gt_digest


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


__all__ = ["DICTIONARY_RATIO", "KINDS", "SHARED_KINDS", "MAX_BLOB_BYTES", "Coded", "CorruptBlob", "EncodedTable",
           "blob_digest", "bulk_memory", "coded", "coded_table", "decode_column", "encode_arrays", "encode_column",
           "json_texts", "table_columns", "table_of"]
