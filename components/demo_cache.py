"""The built-in demo's results, computed ahead and shipped with the package as data.

A first visitor of a fresh server would otherwise wait for the demo to be scored: jieba's
dictionary for the persona demo's Chinese keywords, NLTK (and the SciPy it imports) for the
LoCoMo-parity stems of the long-memory demo, seconds before anything is drawn.  Instead,
``python -m components.demo_cache --write`` runs every page on its demo (Streamlit's AppTest,
nothing shipped used) and stores the results the pages put in the page cache
(:func:`components.cache.cached`) under :data:`NAMESPACES`, keyed exactly as there, in
:data:`SNAPSHOT`: JSON, each key and result written by the typed codec
:mod:`evaluators.io.typed_json` (dataclasses, named tuples, pydantic models and enums by class
name and fields; tuples, sets, non-string keys and NaN tagged).  :func:`components.cache.cached`
takes a result from it instead of computing it when the key is the same; an upload or changed
settings make another key and are computed.

When a shipped result is used: when it decodes into the current classes.  Decoding builds only
classes of ``evaluators`` (checked by name before anything is imported; no code in the file is
run) and requires each dataclass, named tuple and model to have exactly the fields it was written
with, so a class whose fields changed, moved or was removed since makes that result (only that
one) be computed as before, never a crash.  Nothing else is checked at run time: no library
versions, no fingerprint of the code, so an ordinary commit or a dependency release does not make
the file stale.  What guards the numbers is ``tests/pages/test_demo_cache.py``: it recomputes
every shipped result with the current code and installed libraries and fails, naming the command
above, when any decoded result differs from the recomputed one (every field, floats exactly) or
when the pages cache other keys than those shipped.  So write the file again when that test says
so: after a change of the demo's results, not after every change of the engine.

The file is read from the package folder only (never from user input), at most
:data:`MAX_BYTES`, and only with ``EVALBOARD_DEMO_CACHE`` unset or not ``"0"``.  The reading and the
look-up live in :mod:`components.demo_snapshot` (what :mod:`components.cache` imports); this module
writes and checks the file, and names the reader's functions too.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path

from components.demo_snapshot import (  # noqa: F401  (the snapshot's reader, named here too: one command, one module)
    FORMAT, MAX_BYTES, NAMESPACES, SNAPSHOT, SWITCH, enabled, entries, forget, read_snapshot, shipped,
)
from evaluators.io.typed_json import encode

ROOT = Path(__file__).resolve().parents[1]
#: The command that writes :data:`SNAPSHOT`.
WRITE_COMMAND = "python -m components.demo_cache --write"
#: Views opened after a page's first run when the snapshot is built, ``{page file: (view switch key, views)}``:
#: a page's first screen is its overview, and the demo's paired comparisons are computed in these views.
PAGE_VIEWS = {"pages/4_Persona_Dialogue.py": ("dialogue_view", ("compare",)),
              "pages/5_Long_Memory.py": ("mem_view", ("systems",))}
#: Page files run to build the snapshot, relative to the project root.
PAGE_FILES = ("app.py", "pages/1_Narrative.py", "pages/2_QA_Factcheck.py", "pages/3_Test_Sets.py",
              "pages/4_Persona_Dialogue.py", "pages/5_Long_Memory.py")



def canonical(value: object) -> object:
    """``value`` as nested tuples of plain values, each with its type, to compare results exactly.

    Every dataclass and named-tuple field (those left out of ``==`` too), a pydantic model's fields and
    extra keys, mappings and sets in a fixed order, lists as lists and any other sequence as the tuple
    of its items (a lazy sequence such as :class:`evaluators.narrative.alignment.EventLabels` is written
    as the tuple it equals), enum members by class and name, floats by ``repr`` (NaN equals NaN,
    ``-0.0`` differs from ``0.0``), ``True`` apart from ``1``.
    """
    import dataclasses
    from enum import Enum

    t = type(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (t.__qualname__, tuple((f.name, canonical(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if isinstance(value, Enum):
        return ("enum", t.__qualname__, value.name)
    if isinstance(value, tuple) and hasattr(t, "_fields"):
        return (t.__qualname__, tuple((name, canonical(v)) for name, v in zip(t._fields, value)))
    if hasattr(t, "model_fields") and hasattr(value, "__pydantic_extra__"):  # a pydantic model
        return (t.__qualname__, canonical(vars(value)), canonical(value.__pydantic_extra__))
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted(((canonical(k), canonical(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, (set, frozenset)):
        return (t.__name__, tuple(sorted((canonical(v) for v in value), key=repr)))
    if isinstance(value, (str, bytes)):
        return (t.__name__, value)
    if isinstance(value, list):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, Sequence):
        return ("tuple", tuple(canonical(v) for v in value))
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    if isinstance(value, (bool, int)) or value is None:
        return (t.__name__, value)
    if hasattr(value, "__dict__") and not callable(value):
        return (t.__qualname__, canonical(vars(value)))
    return (t.__qualname__, repr(value))


def differences(shipped_entries: Mapping, fresh: Mapping) -> list[str]:
    """What differs between shipped results and fresh ones (``{(namespace, key): result}`` each), one line per entry.

    An entry differs when it is only on one side or when its :func:`canonical` forms differ (every field, the
    types of containers and numbers, floats to the last digit).
    """
    out = [f"{ns}: shipped, but the pages do not cache this key now: {key!r:.200}"
           for ns, key in shipped_entries.keys() - fresh.keys()]
    out += [f"{ns}: cached by the pages, not shipped: {key!r:.200}"
            for ns, key in fresh.keys() - shipped_entries.keys()]
    for slot in shipped_entries.keys() & fresh.keys():
        if canonical(shipped_entries[slot]) != canonical(fresh[slot]):
            out.append(f"{slot[0]}: the shipped result differs from the engine's now: {slot[1]!r:.200}")
    return sorted(out)


def build(page_files: Iterable[str] = PAGE_FILES, *, timeout: float = 300) -> dict[tuple[Hashable, Hashable], object]:
    """Run every page on its demo (nothing shipped used) and return the results it cached under :data:`NAMESPACES`.

    Each page runs once with Streamlit's AppTest (and opens the views of :data:`PAGE_VIEWS`), with its
    default settings, with no judge
    endpoint configured and with the long-memory judge cache and live-mode folders in a
    temporary folder, so nothing local enters a result.

    Returns
    -------
    dict
        ``{(namespace, key): result}``.

    Raises
    ------
    RuntimeError
        A page raised an exception.
    """
    import tempfile

    from streamlit.testing.v1 import AppTest

    from components.cache import results

    keep = {k: os.environ.get(k) for k in (SWITCH, "EVALBOARD_JUDGE_CACHE_DIR", "EVALBOARD_DATA_DIR",
                                           "EVALBOARD_JUDGE_BASE_URL", "EVALBOARD_JUDGE_MODEL", "OPENAI_BASE_URL",
                                           "OPENAI_API_KEY", "EVALBOARD_JUDGE_API_KEY")}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for k in keep:
                os.environ.pop(k, None)
            os.environ.update({SWITCH: "0", "EVALBOARD_JUDGE_CACHE_DIR": str(Path(tmp) / "judge_cache"),
                               "EVALBOARD_DATA_DIR": str(Path(tmp) / "data")})
            results().clear()
            for page in page_files:
                at = AppTest.from_file(str(ROOT / page), default_timeout=timeout)
                at.run()
                if at.exception:
                    raise RuntimeError(f"{page}: {at.exception}")
                switch, views = PAGE_VIEWS.get(page, ("", ()))
                for view in views:
                    at.segmented_control(key=switch).set_value(view).run()
                    if at.exception:
                        raise RuntimeError(f"{page}, view {view}: {at.exception}")
            return {(namespace, key): value for (namespace, key), value in results().items()
                    if namespace in NAMESPACES}
        finally:
            results().clear()
            for k, v in keep.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def dump(found: Mapping[tuple[Hashable, Hashable], object]) -> str:
    """The snapshot's text for ``{(namespace, key): result}``: JSON, one entry per result, in a stable order.

    Raises
    ------
    TypeError
        A namespace that is not a string, or a key or result the typed codec cannot write (the message
        names the namespace: teach :mod:`evaluators.io.typed_json` the type, or stop shipping that namespace).
    """
    by_namespace: dict[str, list] = {}
    for (namespace, key), value in found.items():
        if not isinstance(namespace, str):
            raise TypeError(f"namespace {namespace!r} is not a string")
        try:
            item = {"key": encode(key), "result": encode(value)}
        except TypeError as exc:
            raise TypeError(f"{namespace}: {exc}") from exc
        by_namespace.setdefault(namespace, []).append(item)
    order = lambda item: json.dumps(item["key"], ensure_ascii=False, sort_keys=True)  # noqa: E731
    snapshot = {"format": FORMAT,
                "about": f"The built-in demo's results, written by `{WRITE_COMMAND}` (see components/demo_cache.py).",
                "namespaces": {ns: sorted(items, key=order) for ns, items in sorted(by_namespace.items())}}
    return json.dumps(snapshot, ensure_ascii=False, allow_nan=False, indent=1) + "\n"


def write(path: Path | None = None) -> dict:
    """Build the snapshot (:func:`build`), store it at ``path`` (default :data:`SNAPSHOT`) and return it.

    Raises
    ------
    TypeError
        A result the typed codec cannot write (:func:`dump`).
    ValueError
        The snapshot would be larger than :data:`MAX_BYTES`.
    """
    data = dump(build()).encode("utf-8")
    path = SNAPSHOT if path is None else path
    if len(data) > MAX_BYTES:
        raise ValueError(f"snapshot of {len(data)} bytes is over the {MAX_BYTES}-byte limit")
    path.write_bytes(data)
    forget()
    return read_snapshot(path)


def main(argv: list[str] | None = None) -> int:
    """``python -m components.demo_cache [--write | --check]``: whether the shipped results decode; write; compare."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help=f"run every page on its demo and write {SNAPSHOT.name}")
    group.add_argument("--check", action="store_true",
                       help="also run every page on its demo and compare its results with the shipped ones")
    args = ap.parse_args(argv)
    if args.write:
        snapshot = write()
        print(f"wrote {SNAPSHOT} ({SNAPSHOT.stat().st_size} bytes, "
              f"{sum(len(v) for v in snapshot['namespaces'].values())} results)")
        return 0
    try:
        shipped_entries = entries(read_snapshot())
    except (OSError, ValueError) as exc:  # CodecError is a ValueError
        print(f"{SNAPSHOT.name}: not usable ({exc}); run `{WRITE_COMMAND}`")
        return 1
    print(f"{SNAPSHOT.name}: {len(shipped_entries)} results, all decode into the current classes")
    if not args.check:
        return 0
    found = differences(shipped_entries, build())
    for line in found:
        print(line)
    print(f"{len(found)} differences" + (f"; run `{WRITE_COMMAND}`" if found else ""))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
