"""``--log`` of the batch commands (``qa``, ``narrative``, ``memory``, ``dialogue``, ``testsets`` and the tasks
plugged in through :mod:`evaluators.tasks`): keep the run in the run registry (:mod:`evaluators.runs`).  Not a
command itself: the commands call these helpers (:func:`log_qa` for ``qa``, :func:`log_files` for the others).

The dataset of a run is its GT file (name and SHA-256; a folder: the digest of its files' names and digests);
its version the ``--gt-patch`` files applied, their bytes kept.  :func:`log_files` also keeps the input files'
bytes, content-addressed (each file once however many runs read it), when they total at most
:data:`KEEP_INPUTS_MAX_BYTES`, so that :func:`evaluators.runs.rescore.on_current_gt` can score them again on a
later GT version; larger inputs are logged without them (said on stderr).

One run is logged per system of the scored input (a file with a system/model field gives one per system):
named ``--run-name NAME`` for a single system, ``NAME/<system>`` for several; without ``--run-name`` the
name is the input file's name and the UTC time (``FILE@2026-11-27T14:03:06Z``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePath

#: Bytes hashed at a time (the predictions digest of a large file is read in pieces).
_CHUNK = 1 << 20
#: Most bytes of input files a run keeps in the registry for re-scoring (together; above: none kept).
KEEP_INPUTS_MAX_BYTES = 64 << 20


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


def files_digest(files) -> str:
    """The dataset identity of GT files held in memory (a page's uploads), equal to :func:`path_digest` of the same
    files on disk: one file, the SHA-256 of its bytes; several, of their sorted ``name<TAB>digest`` lines (a flat
    folder of them).

    Parameters
    ----------
    files : sequence of (str, bytes)
        File name and bytes, at least one.
    """
    files = list(files)
    if len(files) == 1:
        return hashlib.sha256(files[0][1]).hexdigest()
    lines = sorted(f"{name}\t{hashlib.sha256(data).hexdigest()}\n" for name, data in files)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def path_digest(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes; of a folder, of its files' relative paths and digests (sorted, one
    ``path<TAB>digest`` line each), so a folder of the same files has the same digest wherever it is."""
    path = Path(path)
    if not path.is_dir():
        return file_digest(path)
    lines = sorted(f"{f.relative_to(path).as_posix()}\t{file_digest(f)}\n" for f in path.rglob("*") if f.is_file())
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class EncodedRun:
    """A run already split by system with its tables encoded (:func:`evaluators.tasks.builtin.qa_run_columns`):
    what :func:`log_runs` logs in place of a :class:`~evaluators.run_result.RunResult`.

    Attributes
    ----------
    parts : mapping of str to (RunResult, EncodedTable)
        System -> its run result (without items) and its table.
    """

    parts: Mapping[str, tuple]


def _split(result) -> dict:
    """System -> ``(RunResult, EncodedTable or None)`` of a run result or an :class:`EncodedRun`."""
    from evaluators.runs import split_systems

    if isinstance(result, EncodedRun):
        return dict(result.parts)
    return {system: (part, None) for system, part in split_systems(result).items()}


def qa_result_to_log(report, config, source: str, *, gt_file_digest: str, predictions_digest: str,
                     report_before=None, capture=None):
    """A scored QA report as the run result the registry keeps, and its dataset's identity by system.

    Parameters
    ----------
    report : QAReport
        After the GT patches, if any.
    config : QAConfig
        The settings it was scored with.
    source : str
        The input's name.
    gt_file_digest, predictions_digest : str
        SHA-256 of the GT file (the records file, or the SQuAD-style dataset) and of the predictions.
    report_before : QAReport, optional
        The report before the GT patches (its GT is the dataset's identity).
    capture : RowCapture, optional
        The texts kept while ``report`` was scored (:class:`evaluators.qa.capture.RowCapture`; no GT patch): the
        run is then encoded from columns (:func:`evaluators.tasks.builtin.qa_run_columns`, the same bytes and
        digests) instead of its records being read again.

    Returns
    -------
    (RunResult or EncodedRun, dict of str to str)
        The result (with the fields re-scoring needs: ``prediction_raw`` and ``config["task_detected"]``,
        :mod:`evaluators.runs.rescore`) and, per system, :func:`evaluators.runs.store.ground_truth_digest` of
        the GT before the patches.
    """
    import dataclasses

    from evaluators.qa.run import QAInputResult, QARun

    digests = {"gt": gt_file_digest, "predictions": predictions_digest}
    if capture is not None and report_before is None and capture.complete:
        from evaluators.tasks.builtin import qa_run_columns

        parts = qa_run_columns(QARun(config, (QAInputResult(source, report),)), capture.table())
        if parts is not None:
            encoded = {s: (dataclasses.replace(r, digests=digests), table) for s, (r, table, _) in parts.items()}
            return EncodedRun(encoded), {s: gt for s, (_, _, gt) in parts.items()}
    from evaluators.run_result import ItemTable
    from evaluators.runs import split_systems
    from evaluators.runs.rescore import QA_TASK_KEY
    from evaluators.runs.store import ground_truth_digest
    from evaluators.tasks.builtin import qa_run_result

    # the records read once (a large report keeps them on disk and decodes them at every pass)
    report = dataclasses.replace(report, records=tuple(report.records))
    run = QARun(config, (QAInputResult(source, report),))
    result = qa_run_result(run)
    raw = [r.prediction_raw for records in run.runs().values() for r in records]
    t = result.items
    table = ItemTable(t.item_id, t.system, t.values, t.slices, {**t.fields, "prediction_raw": raw})
    result = dataclasses.replace(result, items=table, digests=digests,
                                 config={**result.config, QA_TASK_KEY: report.task})
    raw_gt = split_systems(result)
    if report_before is not None:
        raw_gt = split_systems(qa_run_result(QARun(config, (QAInputResult(source, report_before),))))
    return result, {s: ground_truth_digest(r) for s, r in raw_gt.items()}


def qa_bytes_to_log(report, config, source: str, gt: bytes, predictions: bytes | None = None):
    """:func:`qa_result_to_log` of a report scored from bytes held in memory (a page's upload or demo): the GT
    file's and the predictions' SHA-256 as ``qa FILE [--predictions P] --log`` records them (no separate
    predictions: the records file is both)."""
    gt_digest = hashlib.sha256(gt).hexdigest()
    pred_digest = hashlib.sha256(predictions).hexdigest() if predictions is not None else gt_digest
    return qa_result_to_log(report, config, source, gt_file_digest=gt_digest, predictions_digest=pred_digest)


def _label(system: str) -> str:
    """A system's part of a run name: a system named by its file's path (``compare``, ``qa`` on a file without
    a system field) by the file's name."""
    return PurePath(system).name if "/" in system or "\\" in system else system


def log_runs(result, *, gt_name: str, source: str, gt_digests, run_name: str | None = None, who: str | None = None,
             tags=(), patches=None, db: str | None = None, inputs=None, several: bool = False) -> tuple:
    """Log a run result, one run per system (none when a name is taken); what ``--log`` and a page's *Save this
    run* call.

    Parameters
    ----------
    result : RunResult or EncodedRun
        After the GT patches; ``result.digests["predictions"]`` is the predictions digest.
    gt_name : str
        The dataset's name.
    source : str
        The input's name, for the default run name (``SOURCE@<UTC time>``).
    gt_digests : mapping of str to str, or str
        The dataset's identity (the GT before any patch) by system, or one for every system.
    run_name : str, optional
        The run's name (``NAME/<system>`` with several systems).
    who : str, optional
        Default ``$USER``.
    tags : mapping or iterable of ``KEY=VALUE``
    patches : mapping of str to bytes, optional
        The GT patch files applied, by SHA-256, in order.
    db : str, optional
        The database (default :func:`evaluators.review.store.default_url`).
    inputs : mapping of str to bytes, optional
        The input files kept for re-scoring, by SHA-256 (named in ``result.digests``:
        :func:`evaluators.runs.store.kept_inputs`).
    several : bool
        ``result`` is one of several logged together (``compare``): its runs are ``NAME/<system>`` even when it
        has one system.

    Returns
    -------
    tuple of RunRecord

    Raises
    ------
    evaluators.runs.RunExists
        A name is taken (nothing is logged).
    ValueError
        A bad name, tag or value.
    """
    from evaluators.runs import RunExists, RunStore

    patches = dict(patches or {})
    parts = _split(result)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    base = run_name or f"{source}@{stamp}"
    names = {system: base if len(parts) == 1 and not several else f"{base}/{_label(system)}" for system in parts}
    store = RunStore(db)
    try:
        for name in names.values():
            try:
                store.get(name)
            except KeyError:
                continue
            raise RunExists(f"a run named {name!r} is already logged: choose another --run-name")
        return tuple(store.log_run(part, name=names[system], who=who or os.environ.get("USER") or "cli", tags=tags,
                                   gt_name=gt_name, gt_digest=gt_digests if isinstance(gt_digests, str)
                                   else gt_digests[system], patch_digests=list(patches), patches=patches,
                                   inputs=inputs, encoded=encoded)
                     for system, (part, encoded) in parts.items())
    finally:
        store.dispose()


def log_qa(args: argparse.Namespace, path: Path, report, config, capture=None) -> str | None:
    """``--log`` of ``qa``: a scored (and patched, with ``--gt-patch``) report, one run per system; returns an
    error or ``None``.

    The dataset is the GT before any ``--gt-patch`` by content (:func:`evaluators.runs.store.ground_truth_digest`),
    named ``--dataset`` or the input's file name; its version is the ``--gt-patch`` files' digests in order (their
    bytes kept for re-scoring); the predictions digest is that of ``--predictions`` or of the records file.

    Parameters
    ----------
    args : argparse.Namespace
        With :func:`add_log_arguments`' options, ``dataset``, ``predictions``, ``gt_patch`` and (after
        :func:`evaluators.cli.patching.patch_runs`) ``gt_patch_before``.
    path : Path
        The input file scored.
    report : QAReport
        Its report (after the GT patches).
    config : QAConfig
        The settings it was scored with.
    capture : RowCapture, optional
        The texts kept while it was scored (:func:`qa_result_to_log`).

    Returns
    -------
    str or None
        Why the run could not be logged (a name taken, an unreadable file), else ``None``.
    """
    entry = qa_log_entry(args, path, report, config, capture=capture)
    return entry if isinstance(entry, str) else log_result(args, entry[0], **entry[1])


def qa_log_entry(args: argparse.Namespace, path: Path, report, config, *, predictions: str | None = None,
                 index: int = 0, capture=None):
    """What :func:`log_qa` logs for one QA input: ``(RunResult, keyword arguments of log_result)``, or an error.

    Parameters
    ----------
    args, path, report, config
        As :func:`log_qa` (``dataset`` and ``predictions`` read when ``args`` has them).
    predictions : str, optional
        The predictions file (default ``args.predictions``).
    index : int
        The report's place among the reports patched together (``compare``: one per input), for the report
        before the patches.
    capture : RowCapture, optional
        As :func:`qa_result_to_log`.
    """
    try:
        pred_file = predictions or getattr(args, "predictions", None)
        gt_file = file_digest(path)
        pred_digest = file_digest(pred_file) if pred_file else gt_file  # a records file: read once
    except OSError as exc:
        return f"cannot log the run: {exc.strerror or exc}"
    before = getattr(args, "gt_patch_before", None) if getattr(args, "gt_patch", None) else None
    result, gt_digests = qa_result_to_log(report, config, str(path), gt_file_digest=gt_file,
                                          predictions_digest=pred_digest,
                                          report_before=before[0][index] if before else None, capture=capture)
    return result, {"gt_name": getattr(args, "dataset", None) or path.name, "source": path.name,
                    "gt_digests": gt_digests}


def log_several(args: argparse.Namespace, entries, log=None) -> str | None:
    """``--log`` of several inputs scored together (``compare``, ``narrative --other-pred``): each entry's runs,
    named ``NAME/<system>`` (``--run-name``, else ``FILE@<UTC time>``); nothing is logged when one name is taken.

    Parameters
    ----------
    args : argparse.Namespace
        With :func:`add_log_arguments`' options and ``gt_patch``.
    entries : sequence of (RunResult, dict)
        A result and the keyword arguments ``log`` takes for it (:func:`qa_log_entry`).
    log : callable, optional
        :func:`log_result` (default) or :func:`log_files`.

    Returns
    -------
    str or None
        Why the runs could not be logged, else ``None``.
    """
    from evaluators.runs import RunStore

    if args.run_name:
        names = [f"{args.run_name}/{_label(system)}" for result, _ in entries for system in _split(result)]
        if len(set(names)) < len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            return f"two inputs have a system of the same name: {', '.join(twice)}"
        store = RunStore(args.db)
        try:
            for name in names:
                try:
                    store.get(name)
                except KeyError:
                    continue
                return f"a run named {name!r} is already logged: choose another --run-name"
        finally:
            store.dispose()
    for result, options in entries:
        error = (log or log_result)(args, result, **options, several=True)
        if error:
            return error
    return None


def log_result(args: argparse.Namespace, result, *, gt_name: str, source: str, gt_digests,
               inputs=None, several: bool = False) -> str | None:
    """``--log``: :func:`log_runs` with the command's options, each logged run named on stderr; returns an error
    or ``None``.

    Parameters
    ----------
    args : argparse.Namespace
        With :func:`add_log_arguments`' options and ``gt_patch`` (the patch files, kept with the run).
    result : RunResult
    gt_name, source : str
    gt_digests : mapping of str to str, or str
    inputs : mapping of str to bytes, optional
    several : bool
        As :func:`log_runs`.

    Returns
    -------
    str or None
        Why the run could not be logged (a name taken, an unreadable patch file), else ``None``.
    """
    from evaluators.io.sources import read_file_bytes
    from evaluators.runs import RunExists

    try:
        patches = {}
        for f in getattr(args, "gt_patch", None) or []:
            data = read_file_bytes(f)
            patches[hashlib.sha256(data).hexdigest()] = data
        records = log_runs(result, gt_name=gt_name, source=source, gt_digests=gt_digests, run_name=args.run_name,
                           who=args.who, tags=args.tag, patches=patches, db=args.db, inputs=inputs,
                           several=several)
    except OSError as exc:
        return f"cannot log the run: {exc.strerror or exc}"
    except (RunExists, ValueError) as exc:
        return str(exc)
    for record in records:
        unit = record.unit if record.n_items == 1 else record.unit[:-1] + "ies" if record.unit.endswith("y") \
            else record.unit + "s"
        print(f"logged run {record.name} ({record.n_items} {unit}, dataset {record.dataset} "
              f"v{record.dataset_version})", file=sys.stderr)
    return None


def log_files(args: argparse.Namespace, result, *, gt: str | Path, predictions, inputs=None,
              several: bool = False) -> str | None:
    """``--log`` of a command whose ground truth is a file of its own (``narrative``, ``memory``, ``dialogue``,
    ``testsets``): one run per system, the dataset the GT file; returns an error or ``None``.

    Parameters
    ----------
    args : argparse.Namespace
        With :func:`add_log_arguments`' options and ``gt_patch``.
    result : RunResult
        The command's run (after the GT patches), from the task's adapter in :mod:`evaluators.tasks.builtin`.
    gt : str or Path
        The GT file (or folder): the dataset's name and identity (:func:`path_digest`), before any patch.
    predictions : sequence of str or Path
        The prediction files read (their digest, or the digest of their digests in order, is the predictions
        digest; none: the GT file's, for a file holding both).
    inputs : mapping of str to (str, bytes), optional
        Role -> (file name, bytes) of the input files the task reads (:meth:`evaluators.tasks.Task.read`), kept
        for re-scoring when they total at most :data:`KEEP_INPUTS_MAX_BYTES`.
    several : bool
        One of several results logged together (:func:`log_runs`).

    Returns
    -------
    str or None
        Why the run could not be logged (a name taken, an unreadable file), else ``None``.
    """
    import dataclasses

    from evaluators.runs.store import INPUT_KEY, INPUT_NAME_KEY

    try:
        gt_digest = path_digest(gt)
        pred = [path_digest(p) for p in predictions] or [gt_digest]
    except OSError as exc:
        return f"cannot log the run: {exc.strerror or exc}"
    pred_digest = pred[0] if len(pred) == 1 else hashlib.sha256("\n".join(pred).encode("ascii")).hexdigest()
    digests = {**result.digests, "gt": gt_digest, "predictions": pred_digest}
    kept = {}
    inputs = dict(inputs or {})
    size = sum(len(data) for _, data in inputs.values())
    if size > KEEP_INPUTS_MAX_BYTES:
        from evaluators.reports.format import fixed

        print(f"note: the input files ({fixed(size, 0, grouped=True)} bytes) are over "
              f"{fixed(KEEP_INPUTS_MAX_BYTES, 0, grouped=True)} bytes and are not kept: "
              "this run cannot be re-scored on a later GT version", file=sys.stderr)
    else:
        for role, (name, data) in inputs.items():
            digest = hashlib.sha256(data).hexdigest()
            digests[INPUT_KEY + role], digests[INPUT_NAME_KEY + role] = digest, name
            kept[digest] = data
    return log_result(args, dataclasses.replace(result, digests=digests), gt_name=Path(gt).name,
                      source=Path(predictions[0] if predictions else gt).name, gt_digests=gt_digest, inputs=kept,
                      several=several)


__all__ = ["KEEP_INPUTS_MAX_BYTES", "EncodedRun", "add_log_arguments", "file_digest", "log_files", "log_qa",
           "log_result",
           "log_runs", "log_several", "path_digest", "qa_log_entry", "qa_result_to_log"]
