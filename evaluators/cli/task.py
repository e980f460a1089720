"""``python -m evaluators NAME ...`` for every task plugged in through the Task protocol (:mod:`evaluators.tasks`).

Each registered task that has no command module of its own gets a subcommand built from what it says
about itself: one input per role (``NAME GT PRED`` or ``--gt GT --predictions PRED``), one option per
simple field of its config dataclass (``--field-name VALUE``; a bool field is a switch), ``--gt-patch``
(repeatable), ``--format text|json|csv|md`` and ``--output-file``.  It runs :func:`evaluators.tasks.run_task`
and writes through :func:`evaluators.reports.run_result.write`, the writers the task's page downloads call.

Exit codes: 0 success; 2 unusable input (unreadable file, a GT patch for another file), the reason on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from evaluators.cli.common import EXIT_OK, Positional, add_positionals, fail
from evaluators.reports.format import problem_lines

_SIMPLE = {int: int, float: float, str: str, "int": int, "float": float, "str": str}


def add_task_parsers(subparsers, only: str | None = None, taken: frozenset[str] = frozenset()) -> None:
    """Register a subcommand for each plugged-in task (``only``: that one alone) not named in ``taken``."""
    from evaluators.tasks import tasks

    for name, task in tasks().items():
        if name in taken or (only is not None and name != only):
            continue
        p = subparsers.add_parser(name, help=task.title, description=f"{task.title}: score one run of the task "
                                  f"(plugged in through the Task protocol).")
        add_positionals(p, *(Positional(r.name, r.metavar, f"--{r.name}", help=r.help) for r in task.roles))
        for r in task.roles:
            p.add_argument(f"--{r.name}", metavar="FILE", help=r.help + f"; the same as {r.metavar}")
        for f in dataclasses.fields(task.config_type):
            flag = "--" + f.name.replace("_", "-")
            if f.type in (bool, "bool"):
                p.add_argument(flag, dest=f"opt_{f.name}", action=argparse.BooleanOptionalAction, default=None,
                               help=f"config {f.name} (default {f.default})")
            elif f.type in _SIMPLE:
                p.add_argument(flag, dest=f"opt_{f.name}", type=_SIMPLE[f.type], default=None, metavar="VALUE",
                               help=f"config {f.name} (default {f.default!r})")
        from evaluators.cli.patching import add_gt_patch_argument

        add_gt_patch_argument(p)
        p.add_argument("--format", choices=("text", "json", "csv", "md"), default="text",
                       help="what to write: text (default), json, csv (one row per item) or md")
        p.add_argument("--output-file", dest="output_file", metavar="FILE",
                       help="write the report there instead of printing it")
        from evaluators.cli.runlog import add_log_arguments

        add_log_arguments(p)
        p.set_defaults(func=run, task_name=name)


def run(args: argparse.Namespace) -> int:
    """Run a plugged-in task's subcommand; returns the exit code."""
    from evaluators.cli.patching import patches_of
    from evaluators.io import InputError
    from evaluators.io.gt_patch import GTPatchMismatch
    from evaluators.io.sources import InputFile, read_file_bytes
    from evaluators.reports.run_result import write
    from evaluators.tasks import config_from, get, run_task

    task = get(args.task_name)
    files = {}
    for role in task.roles:
        path = getattr(args, role.name)
        try:
            files[role.name] = InputFile(Path(path).name, read_file_bytes(path))
        except OSError as exc:
            return fail(f"cannot read {role.metavar} {path}: {exc.strerror or exc}")
    options = {f.name: getattr(args, f"opt_{f.name}") for f in dataclasses.fields(task.config_type)
               if getattr(args, f"opt_{f.name}", None) is not None}
    patches, error = patches_of(args)
    if error:
        return fail(error)
    try:
        config = config_from(task, options)
        result = run_task(task, files, config, gt_patch=patches)
    except (InputError, GTPatchMismatch) as exc:
        return fail(str(exc))
    except ValueError as exc:
        return fail(f"{args.task_name}: {exc}")
    for line in problem_lines(result.issues, "warning"):
        print(line, file=sys.stderr)
    if args.log:  # into the run registry: the dataset is the GT file by its digest (before any patch); the config's
        # simple fields and the input files kept, for re-scoring on a later GT (evaluators.runs.rescore)
        from evaluators.cli.runlog import log_files
        from evaluators.tasks import gt_role

        gt = gt_role(task).name
        other = next((r.name for r in task.roles if r.name != gt), gt)  # the predictions' role
        settings = {f.name: getattr(config, f.name) for f in dataclasses.fields(task.config_type)
                    if f.type in _SIMPLE or f.type in (bool, "bool")}
        logged = dataclasses.replace(result, config={**settings, **result.config})
        error = log_files(args, logged, gt=getattr(args, gt), predictions=[getattr(args, other)] if other != gt else [],
                          inputs={role: (f.name, f.data) for role, f in files.items()})
        if error:
            return fail(error)
    text = write(result, args.format, task.title)
    if args.output_file:
        Path(args.output_file).write_text(text, encoding="utf-8", newline="")
        print(f"wrote {args.output_file}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK
