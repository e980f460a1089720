"""The built-in demo's results, computed when the package is built and shipped with it.

A first visitor of a fresh server would otherwise wait for the demo to be scored: jieba's
dictionary for the persona demo's Chinese keywords, NLTK (and the SciPy it imports) for the
LoCoMo-parity stems of the long-memory demo, seconds before anything is drawn.  Instead,
``python -m components.demo_cache --write`` runs every page on its demo (Streamlit's AppTest,
nothing shipped used) and stores the results the pages put in the page cache
(:func:`components.cache.cached`) under :data:`NAMESPACES`, keyed exactly as there, in
:data:`SNAPSHOT`.  :func:`components.cache.cached` takes a result from it instead of computing
it when the key is the same; an upload or changed settings make another key and are computed.

A snapshot is used only while it is current: it records a fingerprint (:func:`fingerprint`)
of every file of the engine (``evaluators/``, its demo data and taxonomies included), of the
dashboard's ``components/`` and the versions of the scoring libraries (:data:`LIBRARIES`); when
any of them changed, the demo is computed as before (same numbers, only slower) until the
snapshot is written again.  So it serves where those libraries have the versions it was written
with (an environment installed like the one that wrote it); elsewhere the demo is scored.
``tests/pages/test_demo_cache.py`` recomputes every shipped result with the installed libraries
and checks that it equals the shipped one, and fails when the project files changed since the
snapshot was written, naming the command above (other library versions only warn).

The file is read from the package folder only (never from user input), at most
:data:`MAX_BYTES`, and only with ``EVALBOARD_DEMO_CACHE`` unset or not ``"0"``.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import threading
from collections.abc import Hashable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where the snapshot lives (package data of :mod:`components`).
SNAPSHOT = Path(__file__).with_name("demo_cache.pickle")
#: Largest snapshot read (the demo's results take about 0.1 MB).
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
#: Libraries whose version can change a demo number (their scoring, tokenizers, stemmers, intervals).
LIBRARIES = ("numpy", "scipy", "pydantic", "rapidfuzz", "jieba", "sacrebleu", "rouge-score", "nltk")
#: Views opened after a page's first run when the snapshot is built, ``{page file: (view switch key, views)}``:
#: a page's first screen is its overview, and the demo's paired comparisons are computed in these views.
PAGE_VIEWS = {"pages/4_Persona_Dialogue.py": ("dialogue_view", ("compare",)),
              "pages/5_Long_Memory.py": ("mem_view", ("systems",))}
#: Page files run to build the snapshot, relative to the project root.
PAGE_FILES = ("app.py", "pages/1_Narrative.py", "pages/2_QA_Factcheck.py", "pages/3_Test_Sets.py",
              "pages/4_Persona_Dialogue.py", "pages/5_Long_Memory.py")

_lock = threading.Lock()
_loaded: dict[Hashable, bytes | dict] | None = None  # namespace -> pickled {key: pickled result}, or that dict


def enabled() -> bool:
    """Whether shipped demo results may be used (``EVALBOARD_DEMO_CACHE`` is not ``"0"``)."""
    return os.environ.get(SWITCH, "1").strip() != "0"


def _files(folder: Path, pattern: str) -> Iterable[Path]:
    for path in sorted(folder.rglob(pattern)):
        parts = path.relative_to(folder).parts
        if path.is_file() and "__pycache__" not in parts and not any(p.startswith(".") for p in parts):
            yield path


def code_fingerprint() -> str:
    """A hash of the project files the demo's numbers depend on: the engine's files and the components' code.

    Returns
    -------
    str
        32 hex digits.  Any edited, added or removed file under ``evaluators/`` (code, demo
        data, taxonomies, word lists) and any edited ``components/*.py`` gives another value.
    """
    h = hashlib.blake2b(digest_size=16)
    for folder, pattern in ((ROOT / "evaluators", "*"), (ROOT / "components", "*.py")):
        for path in _files(folder, pattern):
            h.update(path.relative_to(ROOT).as_posix().encode("utf-8"))
            h.update(b"\x00")
            h.update(hashlib.blake2b(path.read_bytes(), digest_size=16).digest())
    return h.hexdigest()


def library_versions() -> dict[str, str]:
    """Python's and each :data:`LIBRARIES` package's installed version (``"-"`` when not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "-"
    return out


def fingerprint() -> str:
    """What a snapshot must have been written with to be used: :func:`code_fingerprint` and :func:`library_versions`.

    Returns
    -------
    str
        The code fingerprint, ``"|"``, then ``name=version`` pairs joined by ``","``.  Another
        version of a scoring library (a new jieba dictionary, NLTK's stemmer, SciPy's
        intervals) may give other numbers, so a snapshot written with other versions is not used.
    """
    return code_fingerprint() + "|" + ",".join(f"{k}={v}" for k, v in library_versions().items())


def read_snapshot(path: Path | None = None) -> dict:
    """The stored snapshot: ``{"fingerprint": str, "namespaces": {namespace: pickled {key: pickled result}}}``.

    Each namespace, and each result in it, stays pickled until it is asked for, so a page
    loads only the classes of its own results.

    Raises
    ------
    FileNotFoundError
        No snapshot at ``path`` (default :data:`SNAPSHOT`).
    ValueError
        Larger than :data:`MAX_BYTES`, or not a snapshot.
    """
    path = SNAPSHOT if path is None else path
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: larger than {MAX_BYTES} bytes; not read")
    snapshot = pickle.loads(data)  # the package's own file (see the module docstring); str and bytes only
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("namespaces"), dict):
        raise ValueError(f"{path}: not a demo snapshot")
    return snapshot


def entries(snapshot: dict) -> dict[tuple[Hashable, Hashable], object]:
    """Every result of ``snapshot`` (:func:`read_snapshot`) as ``{(namespace, key): result}``, all unpickled."""
    return {(namespace, key): pickle.loads(blob) for namespace, keys in snapshot["namespaces"].items()
            for key, blob in pickle.loads(keys).items()}


_UNREADABLE = (OSError, ValueError, pickle.UnpicklingError, AttributeError, ImportError, EOFError, TypeError)


def _namespace(namespace: Hashable) -> dict[Hashable, object]:
    """``{key: pickled result}`` of ``namespace`` when the snapshot is current, else ``{}`` (read once per process)."""
    global _loaded
    with _lock:
        if _loaded is None:
            try:
                snapshot = read_snapshot()
                _loaded = dict(snapshot["namespaces"]) if snapshot.get("fingerprint") == fingerprint() else {}
            except _UNREADABLE:
                _loaded = {}  # no snapshot, or one the code cannot read any more: compute the demo
        keys = _loaded.get(namespace, {})
        if isinstance(keys, bytes):
            try:
                keys = pickle.loads(keys)
            except _UNREADABLE:
                keys = {}
            _loaded[namespace] = keys
        return keys


def shipped(namespace: Hashable, key: Hashable) -> tuple[bool, object]:
    """``(True, result)`` when the current snapshot holds ``key`` of ``namespace``, else ``(False, None)``.

    Each call returns a new copy of the result (the page cache keeps the one it got).
    """
    if namespace not in NAMESPACES or not enabled():
        return False, None
    keys = _namespace(namespace)
    try:
        blob = keys.get(key)
    except TypeError:  # an unhashable part in a key
        return False, None
    if blob is None:
        return False, None
    try:
        return True, pickle.loads(blob)
    except _UNREADABLE:
        return False, None


def forget() -> None:
    """Drop the snapshot read by this process (it is read again when next needed)."""
    global _loaded
    with _lock:
        _loaded = None


def build(page_files: Iterable[str] = PAGE_FILES, *, timeout: float = 300) -> dict[tuple[Hashable, Hashable], object]:
    """Run every page on its demo (nothing shipped used) and return the results it cached under :data:`NAMESPACES`.

    Each page runs once with Streamlit's AppTest (and opens the views of :data:`PAGE_VIEWS`), with its
    default settings, with no judge
    endpoint configured and with the long-memory judge cache and live-mode folders in a
    temporary folder, so nothing local enters a result.

    Returns
    -------
    dict
        ``{(namespace, key): result}``, every result that pickles.

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
            out = {}
            for (namespace, key), value in results().items():
                if namespace in NAMESPACES:
                    try:
                        pickle.dumps(value)
                    except (pickle.PicklingError, AttributeError, TypeError):
                        continue
                    out[(namespace, key)] = value
            return out
        finally:
            results().clear()
            for k, v in keep.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def write(path: Path | None = None) -> dict:
    """Build the snapshot (:func:`build`) and store it with the current :func:`fingerprint`; return it."""
    found = build()
    by_namespace: dict[Hashable, dict] = {}
    for (namespace, key), value in found.items():
        by_namespace.setdefault(namespace, {})[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    snapshot = {"fingerprint": fingerprint(),
                "namespaces": {ns: pickle.dumps(keys, protocol=pickle.HIGHEST_PROTOCOL)
                               for ns, keys in sorted(by_namespace.items())}}
    data = pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL)
    path = SNAPSHOT if path is None else path
    if len(data) > MAX_BYTES:
        raise ValueError(f"snapshot of {len(data)} bytes is over the {MAX_BYTES}-byte limit")
    path.write_bytes(data)
    forget()
    return snapshot


def main(argv: list[str] | None = None) -> int:
    """``python -m components.demo_cache [--write]``: say whether the shipped snapshot is current; write it."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"run every page on its demo and write {SNAPSHOT.name}")
    args = ap.parse_args(argv)
    if args.write:
        snapshot = write()
        print(f"wrote {SNAPSHOT} ({SNAPSHOT.stat().st_size} bytes, {len(entries(snapshot))} results, "
              f"fingerprint {snapshot['fingerprint']})")
        return 0
    try:
        stored = read_snapshot().get("fingerprint")
    except (OSError, ValueError) as exc:
        print(f"no usable snapshot: {exc}")
        return 1
    current = fingerprint()
    print(f"{SNAPSHOT.name}: {'current' if stored == current else 'STALE'} (stored {stored}, now {current})")
    return 0 if stored == current else 1


if __name__ == "__main__":
    raise SystemExit(main())
