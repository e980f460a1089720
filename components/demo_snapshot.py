"""The built-in demo's results shipped with the package: read and looked up while the dashboard runs.

The snapshot :data:`SNAPSHOT` is written by ``python -m components.demo_cache --write``
(:mod:`components.demo_cache`, which runs every page on its demo and says why the file exists and what
guards its numbers).  :func:`components.cache.cached` asks :func:`shipped` for a result before computing
it; a result is used when its key is the same and it decodes into the current classes (decoding builds
only classes of ``evaluators``, checked by name before anything is imported; no code in the file is run).

The file is read from the package folder only (never from user input), at most
:data:`MAX_BYTES`, and only with ``EVALBOARD_DEMO_CACHE`` unset or not ``"0"``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Hashable
from pathlib import Path

from evaluators.io.typed_json import CodecError, decode

#: Where the snapshot lives (package data of :mod:`components`).
SNAPSHOT = Path(__file__).with_name("demo_cache.json")
#: The snapshot's ``"format"``: another value is not read.
FORMAT = "evalboard demo results 1"
#: Largest snapshot read (the demo's results take about 0.25 MB).
MAX_BYTES = 8 * 1024 ** 2
#: Environment switch: ``EVALBOARD_DEMO_CACHE=0`` computes the demo as any other input.
SWITCH = "EVALBOARD_DEMO_CACHE"
#: Page-cache namespaces shipped: the results of scoring the demo (not the QA run, which holds
#: an open reader and takes milliseconds, nor anything naming a local folder).
NAMESPACES = frozenset({
    "narrative", "testsets",
    "dialogue-cases", "dialogue-preds", "dialogue-eval", "dialogue-pair",
    "mem-judge-match", "mem-scores", "mem-parity", "mem-other", "mem-sbs", "mem-pair",
})

_lock = threading.Lock()
_loaded: dict[str, list | dict] | None = None  # namespace -> its JSON entries, or {key: JSON tree of the result}


def enabled() -> bool:
    """Whether shipped demo results may be used (``EVALBOARD_DEMO_CACHE`` is not ``"0"``)."""
    return os.environ.get(SWITCH, "1").strip() != "0"


def read_snapshot(path: Path | None = None) -> dict:
    """The stored snapshot as JSON, not decoded: ``{"format": FORMAT, "namespaces": {namespace: [entry]}}``.

    Each entry is ``{"key": tree, "result": tree}``, both trees of :mod:`evaluators.io.typed_json`;
    they are decoded when asked for (:func:`entries`, :func:`shipped`), so a page loads only the
    classes of its own results.

    Raises
    ------
    FileNotFoundError
        No snapshot at ``path`` (default :data:`SNAPSHOT`).
    ValueError
        Larger than :data:`MAX_BYTES`, not JSON, or not a snapshot of this :data:`FORMAT`.
    """
    path = SNAPSHOT if path is None else path
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: larger than {MAX_BYTES} bytes; not read")
    try:
        snapshot = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from exc
    namespaces = snapshot.get("namespaces") if isinstance(snapshot, dict) else None
    if (not isinstance(snapshot, dict) or snapshot.get("format") != FORMAT or not isinstance(namespaces, dict)
            or not all(isinstance(e, list) and all(isinstance(x, dict) and set(x) == {"key", "result"} for x in e)
                       for e in namespaces.values())):
        raise ValueError(f"{path}: not a demo snapshot of format {FORMAT!r}")
    return snapshot


def entries(snapshot: dict) -> dict[tuple[str, Hashable], object]:
    """Every result of ``snapshot`` (:func:`read_snapshot`) decoded, as ``{(namespace, key): result}``.

    Raises
    ------
    evaluators.io.typed_json.CodecError
        An entry does not decode into the current classes (its message says which namespace).
    """
    out = {}
    for namespace, items in snapshot["namespaces"].items():
        for item in items:
            try:
                out[(namespace, decode(item["key"]))] = decode(item["result"])
            except CodecError as exc:
                raise CodecError(f"{namespace}: {exc}") from exc
    return out


def _namespace(namespace: Hashable) -> dict[Hashable, object]:
    """``{key: JSON tree of the result}`` of ``namespace`` (read once per process; ``{}`` without a snapshot).

    An entry whose key does not decode (a class changed since) is left out: its result is computed.
    """
    global _loaded
    with _lock:
        if _loaded is None:
            try:
                _loaded = dict(read_snapshot()["namespaces"])
            except (OSError, ValueError):
                _loaded = {}  # no snapshot, or not one this code reads: compute the demo
        keys = _loaded.get(namespace, {})  # type: ignore[arg-type]
        if isinstance(keys, list):
            decoded = {}
            for item in keys:
                try:
                    decoded[decode(item["key"])] = item["result"]
                except (CodecError, TypeError):  # another shape now, or an unhashable key
                    continue
            keys = _loaded[namespace] = decoded  # type: ignore[index]
        return keys


def shipped(namespace: Hashable, key: Hashable) -> tuple[bool, object]:
    """``(True, result)`` when the snapshot holds ``key`` of ``namespace`` and it decodes, else ``(False, None)``.

    Each call decodes a new copy of the result (the page cache keeps the one it got).
    """
    if namespace not in NAMESPACES or not enabled():
        return False, None
    keys = _namespace(namespace)
    try:
        tree = keys.get(key)
    except TypeError:  # an unhashable part in a key
        return False, None
    if tree is None:
        return False, None
    try:
        return True, decode(tree)
    except (CodecError, TypeError):  # a class of the result has other fields now (or is gone): compute it
        return False, None


def forget() -> None:
    """Drop the snapshot read by this process (it is read again when next needed)."""
    global _loaded
    with _lock:
        _loaded = None
