"""Command line: ``python -m evaluators <task> ...``.

One module per command in this package (``evaluators.cli.<command>``), the only place that
parses arguments. Each exposes ``add_parser(subparsers)``; the parser's ``func`` default
returns the exit code (0 success, 2 unusable input with the reason on stderr). A command whose
parser sets ``pass_through=True`` (``serve``) gets the arguments it does not know in ``args.extra``
(options for the program it starts); any other command refuses them, as argparse does. Command
modules keep heavy imports (jieba, scipy ...) inside their functions so ``--help`` stays fast.
Task packages (``evaluators.<task>``) never import this package or ``evaluators.reports``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from evaluators import __version__
from evaluators.cli.common import (  # noqa: F401  (Positional and add_positionals: named here too)
    EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Positional, add_positionals, fail, merge_positionals,
)

#: Subcommand name -> module defining ``add_parser``.
COMMANDS: dict[str, str] = {
    "narrative": "evaluators.cli.narrative",
    "qa": "evaluators.cli.qa",
    "compare": "evaluators.cli.compare",
    "report": "evaluators.cli.report",
    "review": "evaluators.cli.review",
    "testsets": "evaluators.cli.testsets",
    "dialogue": "evaluators.cli.dialogue",
    "memory": "evaluators.cli.memory",
    "serve": "evaluators.cli.serve",
    "sensitivity": "evaluators.cli.sensitivity",
    "audit": "evaluators.cli.audit",
    "judge": "evaluators.cli.judge",
    "runs": "evaluators.cli.runs",
    "merge": "evaluators.cli.merge",
}


def build_parser(only: str | None = None, prog: str = "python -m evaluators") -> argparse.ArgumentParser:
    """The parser of every command, or of command ``only`` (its module alone is imported)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="EvalBoard: score LLM outputs against ground truth (Chinese and English).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n" + "\n".join(f"  {prog} {shape}" for shape in (
            "qa FILE [FILE ...]", "narrative GT PRED", "memory RESULTS", "testsets ITEMS ANSWERS",
            "dialogue CASES PRED [PRED ...]", "compare RUN_A RUN_B", "report RUN [RUN ...] --out REPORT.html"))
               + "\n\nThe scoring commands print a readable table; --format json (or csv, md) prints the report for "
               "scripts.\n"
               f"{prog} TASK --help lists a task's options.",
    )
    parser.add_argument("--version", action="version", version=f"evalboard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="TASK")
    sub.required = True
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module).add_parser(sub)
    if only is None or only not in COMMANDS:  # tasks plugged in through the Task protocol (evaluators.tasks)
        from evaluators.cli.task import add_task_parsers

        add_task_parsers(sub, only, frozenset(COMMANDS))
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The command ``argv`` runs when its parser alone is to be built (a built-in or a plugged-in task)."""
    if not argv or argv[0] in COMMANDS:
        return argv[0] if argv else None
    if argv[0].startswith("-"):
        return None
    from evaluators.tasks import tasks

    return argv[0] if argv[0] in tasks() else None


def main(argv: list[str] | None = None, prog: str = "python -m evaluators") -> int:
    """Run the CLI; returns the process exit code.

    0 success, 2 unusable input (the task's reason on stderr), 1 an unexpected error: one line
    naming the command and its input files (``EVALBOARD_DEBUG=1`` re-raises it with the traceback).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    # A command's run imports that command's module only (the memory command's imports alone cost
    # 0.25 s); the top-level help and an unknown command list every command.
    parser = build_parser(_command_of(argv), prog)
    # argparse stops filling positional arguments at the first option ("narrative GT --quiet PRED"): the values
    # it leaves over are the inputs typed after an option, put in order behind the others by merge_positionals;
    # a command with ``pass_through`` (serve) hands every value it does not know on (streamlit options)
    args, extra = parser.parse_known_args(argv)
    if getattr(args, "pass_through", False):
        args.extra = extra
    else:
        if extra and (any(x.startswith("-") for x in extra) or not getattr(args, "_positionals", None)):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args._typed_after_options = extra
        error = merge_positionals(args, prog)
        if error:
            return fail(error)
    scheduler = None
    if getattr(args, "scheduler", None):  # --scheduler: the batch engines send their chunks to Dask
        from evaluators.parallel import SchedulerError, open_scheduler

        try:
            scheduler = open_scheduler(args.scheduler)
        except SchedulerError as exc:
            return fail(exc)
        args.workers = scheduler.workers
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:  # pragma: no cover - interactive
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - a bug, not bad input: one line, not a traceback
        from evaluators.parallel import SchedulerError

        if isinstance(exc, SchedulerError):  # --scheduler: the cluster lost every worker while chunks were scored
            return fail(exc)
        if os.environ.get("EVALBOARD_DEBUG"):
            raise
        inputs = [str(x) for k, v in sorted(vars(args).items())
                  if v and k in ("input", "gt", "pred", "items", "cases", "results", "questions", "predictions")
                  for x in (v if isinstance(v, list) else [v])]
        print(f"error: unexpected {type(exc).__name__} while running {args.command} on {', '.join(inputs) or '-'}: "
              f"{exc} (a bug: please report it; EVALBOARD_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if scheduler is not None:
            scheduler.close()


def main_exit() -> None:
    """Console-script entry point (``evalboard ...``): :func:`main`, then exit with its code."""
    sys.exit(main(prog="evalboard"))
