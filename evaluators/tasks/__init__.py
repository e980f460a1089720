"""The Task protocol: what a task says about itself, once, so the CLI, writers, review and corrections serve it.

A task is one object (:class:`Task`) that says

- its inputs (:attr:`Task.roles`: the files a run reads, which one is the ground truth) and how they
  are read into typed inputs with located problems (:meth:`Task.read`),
- its config (:attr:`Task.config_type`, a frozen dataclass; its simple fields become CLI options),
- ``run(inputs, config) -> RunResult`` (:class:`evaluators.run_result.RunResult`),
- how a GT correction changes a record: the record ids' gold answers (:meth:`Task.gold_answers`) and
  the inputs with other gold answers (:meth:`Task.with_gold`), from which :func:`run_task` scores the
  run before and after a GT patch.  A task whose corrections have rules of their own (the built-in
  tasks: a QA patch re-scores the changed records of a scored report, a narrative patch edits places in
  a document) says so instead with ``run_with_patch(inputs, config, gt_patch) -> RunResult``, whose
  result carries its ``corrections``.

From that alone the task gets, with no engine module touched: a CLI command (``python -m evaluators
NAME ...``, :mod:`evaluators.cli.task`), the JSON, CSV, Markdown and terminal writers
(:mod:`evaluators.reports.run_result`), GT patches applied with scores before and after
(:func:`run_task`), review items (:func:`review_items`) whose decisions export to a GT patch, and a
page from the shared components (:func:`components.task_page.task_page`).  This follows the spirit of
Inspect AI's ``Task(dataset, solver, scorer)`` and scikit-learn's estimator contract: a small, uniform
surface every task fills in.

The five built-in tasks (:mod:`evaluators.tasks.builtin`: ``narrative``, ``qa``, ``testsets``, ``dialogue``,
``memory``) are Task objects too, over their own run functions; their CLI commands and pages are their own.
Tasks are registered with :func:`register`; tasks outside this package are plugged in by naming their
modules in the environment variable ``EVALBOARD_TASKS`` (comma-separated; each module registers its
task when imported) or through the ``evalboard.tasks`` entry-point group (each entry point loads a
:class:`Task`).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from evaluators.io.errors import InputIssue
from evaluators.io.gt_patch import GTPatchSet, apply_gt_patch, check_matched
from evaluators.io.sources import InputFile
from evaluators.run_result import RunResult
from evaluators.tasks.protocol import InputRole, Task

__all__ = ["InputRole", "Task", "config_from", "get", "gt_role", "load_plugins", "register", "review_items", "run_task",
           "tasks"]

#: Environment variable naming modules that register further tasks (comma-separated).
TASKS_ENV = "EVALBOARD_TASKS"
#: Entry-point group of plugged-in tasks.
ENTRY_POINT_GROUP = "evalboard.tasks"


def _corrects(task: Any) -> bool:
    """Whether ``task`` says how a GT patch changes its inputs (either way of the module docstring)."""
    return hasattr(task, "run_with_patch") or (hasattr(task, "gold_answers") and hasattr(task, "with_gold"))


_TASKS: dict[str, Task] = {}
_loaded_plugins = False


def register(task: Task) -> Task:
    """Add ``task`` to the registry (returned, so a module can write ``TASK = register(MyTask())``).

    Raises
    ------
    TypeError
        ``task`` does not provide the :class:`Task` protocol.
    ValueError
        Another task of that name is registered, or its config type is not a dataclass with defaults.
    """
    if not isinstance(task, Task):
        missing = [a for a in ("name", "title", "unit", "roles", "config_type", "read", "run") if not hasattr(task, a)]
        raise TypeError(f"{type(task).__name__} is not a Task: it lacks {', '.join(missing)}")
    if not _corrects(task):
        raise TypeError(f"{type(task).__name__} is not a Task: it lacks gold_answers and with_gold (or run_with_patch)")
    other = _TASKS.get(task.name)
    if other is not None and other is not task:
        raise ValueError(f"a task named {task.name!r} is registered already ({type(other).__name__})")
    if not dataclasses.is_dataclass(task.config_type):
        raise ValueError(f"task {task.name!r}: config_type must be a dataclass")
    try:
        task.config_type()
    except TypeError as exc:
        raise ValueError(f"task {task.name!r}: every config field needs a default ({exc})") from None
    if sum(r.is_gt for r in task.roles) != 1:
        raise ValueError(f"task {task.name!r}: exactly one input role must be the ground truth (is_gt=True)")
    _TASKS[task.name] = task
    return task


def load_plugins() -> None:
    """Import the modules named in :data:`TASKS_ENV` and load the :data:`ENTRY_POINT_GROUP` entry points
    (once per process).

    Raises
    ------
    ImportError
        A module named in :data:`TASKS_ENV` cannot be imported (its name in the message).
    """
    global _loaded_plugins
    if _loaded_plugins:
        return
    _loaded_plugins = True
    from evaluators.tasks.builtin import BUILTIN

    for cls in BUILTIN:
        if cls.name not in _TASKS:
            register(cls())
    for module in filter(None, (m.strip() for m in os.environ.get(TASKS_ENV, "").split(","))):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(f"{TASKS_ENV}: cannot import task module {module!r}: {exc}") from exc
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        task = ep.load()
        register(task() if isinstance(task, type) else task)


def tasks() -> dict[str, Task]:
    """Every registered task by name (plug-ins loaded first)."""
    load_plugins()
    return dict(_TASKS)


def get(name: str) -> Task:
    """The registered task ``name``.

    Raises
    ------
    KeyError
        No task of that name (the message lists the registered ones).
    """
    found = tasks().get(name)
    if found is None:
        raise KeyError(f"no task named {name!r}; registered: {', '.join(sorted(_TASKS)) or 'none'}")
    return found


def gt_role(task: Task) -> InputRole:
    """The task's ground-truth input role."""
    return next(r for r in task.roles if r.is_gt)


def config_from(task: Task, options: Mapping[str, Any] | None = None) -> Any:
    """The task's config with ``options`` (field name -> value) over its defaults.

    Raises
    ------
    ValueError
        An option that is not a field of the config.
    """
    fields = {f.name for f in dataclasses.fields(task.config_type)}
    unknown = sorted(set(options or {}) - fields)
    if unknown:
        raise ValueError(f"task {task.name!r} has no option {', '.join(unknown)}; its options: {', '.join(sorted(fields))}")
    return task.config_type(**dict(options or {}))


def run_task(task: Task, files: Mapping[str, InputFile], config: Any = None, *,
             gt_patch: GTPatchSet | None = None, n_resamples: int = 10_000, seed: int = 0) -> RunResult:
    """Read and score one run of ``task``; with GT patches, score it before and after them.

    The one corrections skeleton of a task plugged in through the protocol: the patch entries are applied
    to :meth:`Task.gold_answers` of the inputs (:func:`evaluators.io.gt_patch.apply_gt_patch`, bound to the
    SHA-256 of the GT file's bytes or keyed by record and answers), the inputs get the corrected answers
    (:meth:`Task.with_gold`), both are run, and the result's ``corrections`` holds what each entry did and
    the scores before and after with intervals and paired tests: the corrections skeleton of every task,
    :func:`evaluators.metrics.before_after.run_before_after`.

    Parameters
    ----------
    task : Task
    files : mapping of str to InputFile
        One file per input role (:attr:`Task.roles`).
    config : the task's config, optional
        Defaults when omitted.
    gt_patch : GTPatchSet, optional
        Corrections to apply; its unreadable lines join the result's issues.
    n_resamples, seed : int
        Bootstrap resamples and seed of the before/after comparison.

    Returns
    -------
    RunResult
        After the corrections when there are any; ``digests`` holds each input's SHA-256 (and the
        patch files' names under ``gt_patch``).

    Raises
    ------
    KeyError
        A role without a file.
    GTPatchMismatch
        Patch entries made for another GT file (nothing applied).
    """
    from evaluators.io.gt_patch import file_sha256

    missing = [r.name for r in task.roles if r.required and r.name not in files]
    if missing:
        raise KeyError(f"task {task.name!r} needs the input(s) {', '.join(missing)}")
    config = config if config is not None else task.config_type()
    digests = {r.name: file_sha256(files[r.name].data) for r in task.roles if r.name in files}
    inputs = task.read(files)
    if gt_patch and gt_patch.entries and hasattr(task, "run_with_patch"):
        return dataclasses.replace(task.run_with_patch(inputs, config, gt_patch),
                                   digests={**digests, "gt_patch": ", ".join(gt_patch.files)})
    before = task.run(inputs, config)
    before = dataclasses.replace(before, digests=digests)
    if not gt_patch or not gt_patch.entries:
        issues = tuple(gt_patch.issues) if gt_patch else ()
        return dataclasses.replace(before, issues=tuple(before.issues) + issues) if issues else before
    from evaluators.metrics.before_after import CorrectionsAdapter, PatchedInputs, per_run, run_before_after

    gt = gt_role(task)

    def patch(x: Any, patches: GTPatchSet) -> PatchedInputs:
        gold = task.gold_answers(x)
        application = apply_gt_patch(gold, patches.entries, digests[gt.name], refuse_unmatched=False)
        check_matched(list(patches.entries), [application])
        patched = task.with_gold(x, {rid: application.patched(rid, gold.get(rid, ())) for rid in application.answers})
        return PatchedInputs(patched, ((files[gt.name].name, application),),
                             tuple(patches.issues) + tuple(application.issues))

    adapter = CorrectionsAdapter(patch=patch, run=lambda x: task.run(x, config),
                                 values=per_run(lambda r: r.by_system()), metrics=lambda b, a: b.metrics,
                                 unit=task.unit, n_resamples=n_resamples, seed=seed)
    _, after, corrections, patch_issues = run_before_after(inputs, gt_patch, adapter, before=before)
    issues: tuple[InputIssue, ...] = tuple(after.issues) + patch_issues
    return dataclasses.replace(after, issues=issues, corrections=corrections,
                               digests={**digests, "gt_patch": ", ".join(gt_patch.files)})


def review_items(result: RunResult, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Review items of a run result: one per row with a ground truth, in row order.

    Each payload holds ``kind`` (the task), ``id``, ``system``, the row's fields (``question``,
    ``ground_truth`` as a list of answers, ``prediction``), its slices and its metric values; the
    decisions on them export to a keyed GT patch (:func:`evaluators.review.gt_patch.build_gt_patch`).

    Parameters
    ----------
    result : RunResult
    limit : int, optional
        At most this many items.
    """
    out = []
    fields = result.items.fields
    for row in result.items.rows():
        gt = row.get("ground_truth")
        if gt in (None, "", [], ()):
            continue
        payload: dict[str, Any] = {"kind": result.task, "id": row["item_id"], "system": row["system"],
                                   "patchable": True}
        for name in fields:
            value = row[name]
            payload[name] = list(value) if isinstance(value, tuple) else value
        for name in result.items.slices:
            payload[name] = row[name]
        payload["scores"] = {m: row[m] for m in result.metrics}
        out.append(payload)
        if limit is not None and len(out) >= limit:
            break
    return out

