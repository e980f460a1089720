"""``--log`` of the batch commands (``qa`` and the tasks plugged in through :mod:`evaluators.tasks`): keep the
run in the run registry (:mod:`evaluators.runs`).  Not a command itself: the commands call these helpers.

One run is logged per system of the scored input (a file with a system/model field gives one per system):
named ``--run-name NAME`` for a single system, ``NAME/<system>`` for several; without ``--run-name`` the
name is the input file's name and the UTC time (``FILE@2026-11-27T14:03:06Z``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

#: Bytes hashed at a time (the predictions digest of a large file is read in pieces).
_CHUNK = 1 << 20


def add_log_arguments(p) -> None:
    """Register ``--log``, ``--run-name``, ``--tag``, ``--who`` and ``--db``."""
    p.add_argument("--log", action="store_true",
                   help="keep this run in the run registry (one run per system; 'runs list' shows them)")
    p.add_argument("--run-name", metavar="NAME",
                   help="with --log: the run's name (NAME/<system> with several systems; default: the file's name "
                        "and the UTC time)")
    p.add_argument("--tag", action="append", metavar="KEY=VALUE", default=[],
                   help="with --log: a tag of the run (repeatable)")
    p.add_argument("--who", metavar="NAME", help="with --log: who ran it (default: $USER)")
    p.add_argument("--db", metavar="URL_OR_FILE",
                   help="with --log: the database (default: EVALBOARD_DATABASE_URL, else "
                        "$EVALBOARD_DATA_DIR/review.sqlite)")


def file_digest(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB pieces."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def log_qa(args: argparse.Namespace, path: Path, report, config) -> str | None:
    """Log a scored (and patched, with ``--gt-patch``) QA report, one run per system; returns an error or ``None``.

    The dataset is the GT before any ``--gt-patch`` by content (:func:`evaluators.runs.store.ground_truth_digest`),
    named ``--dataset`` or the input's file name; its version is the ``--gt-patch`` files' digests in order (their
    bytes kept for re-scoring); the predictions digest is that of ``--predictions`` or of the records file.

    Parameters
    ----------
    args : argparse.Namespace
        With :func:`add_log_arguments`' options, ``dataset``, ``predictions`` and ``gt_patch``.
    path : Path
        The input file scored.
    report : QAReport
        Its report (after the GT patches).
    config : QAConfig
        The settings it was scored with.

    Returns
    -------
    str or None
        Why the run could not be logged (a name taken, an unreadable file), else ``None``.
    """
    import dataclasses

    from evaluators.qa.run import QAInputResult, QARun
    from evaluators.run_result import ItemTable
    from evaluators.runs import split_systems
    from evaluators.runs.rescore import QA_TASK_KEY
    from evaluators.runs.store import ground_truth_digest
    from evaluators.tasks.builtin import qa_run_result

    run = QARun(config, (QAInputResult(str(path), report),))
    result = qa_run_result(run)
    try:
        digests = {"gt": file_digest(path), "predictions": file_digest(args.predictions or path)}
    except OSError as exc:
        return f"cannot log the run: {exc.strerror or exc}"
    # what re-scoring on a later GT version needs (evaluators.runs.rescore): the predictions as stored and the task
    raw = [r.prediction_raw for records in run.runs().values() for r in records]
    t = result.items
    table = ItemTable(t.item_id, t.system, t.values, t.slices, {**t.fields, "prediction_raw": raw})
    result = dataclasses.replace(result, items=table, digests=digests,
                                 config={**result.config, QA_TASK_KEY: report.task})
    raw_gt = split_systems(result)  # the dataset is the GT before this run's patches (--gt-patch: the report before)
    before = getattr(args, "gt_patch_before", None)
    if getattr(args, "gt_patch", None) and before:
        raw_gt = split_systems(qa_run_result(QARun(config, (QAInputResult(str(path), before[0][0]),))))
    return log_result(args, result, gt_name=args.dataset or path.name, source=path.name,
                      gt_digests={s: ground_truth_digest(r) for s, r in raw_gt.items()})


def log_result(args: argparse.Namespace, result, *, gt_name: str, source: str, gt_digests) -> str | None:
    """Log a run result, one run per system; returns an error or ``None``.

    Parameters
    ----------
    args : argparse.Namespace
        With :func:`add_log_arguments`' options and ``gt_patch`` (the patch files, kept with the run).
    result : RunResult
        After the GT patches; ``result.digests["predictions"]`` is the predictions digest.
    gt_name : str
        The dataset's name.
    source : str
        The input's name, for the default run name (``SOURCE@<UTC time>``).
    gt_digests : mapping of str to str or str
        The dataset's identity (the GT before any patch) by system, or one for every system.

    Returns
    -------
    str or None
        Why the run could not be logged (a name taken, an unreadable patch file), else ``None``.
    """
    from evaluators.io.sources import read_file_bytes
    from evaluators.runs import RunExists, RunStore, split_systems

    try:
        patches = {}
        for f in getattr(args, "gt_patch", None) or []:
            data = read_file_bytes(f)
            patches[hashlib.sha256(data).hexdigest()] = data
        store = RunStore(args.db)
    except OSError as exc:
        return f"cannot log the run: {exc.strerror or exc}"
    parts = split_systems(result)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    base = args.run_name or f"{source}@{stamp}"
    who = args.who or os.environ.get("USER") or "cli"
    try:
        for system, part in parts.items():
            name = base if len(parts) == 1 else f"{base}/{system}"
            digest = gt_digests if isinstance(gt_digests, str) else gt_digests[system]
            try:
                record = store.log_run(part, name=name, who=who, tags=args.tag, gt_name=gt_name, gt_digest=digest,
                                       patch_digests=list(patches), patches=patches)
            except (RunExists, ValueError) as exc:
                return str(exc)
            print(f"logged run {record.name} ({record.n_items} {record.unit}s, dataset {record.dataset} "
                  f"v{record.dataset_version})", file=sys.stderr)
    finally:
        store.dispose()
    return None


__all__ = ["add_log_arguments", "file_digest", "log_qa", "log_result"]
