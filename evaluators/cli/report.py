"""``python -m evaluators report``: a self-contained HTML report of QA / fact-check runs.

One run gives the run's report (:func:`evaluators.reports.html.qa_report`); several runs (files,
systems of one file, or ``--predictions`` files) give the side-by-side comparison with the
paired test of the first two (:func:`evaluators.reports.html.comparison_report`).  The file
draws its charts as inline SVG (no script) and opens offline.

Exit codes: 0 success; 2 unusable input, with the reason on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluators.cli.common import EXIT_OK, fail


def add_parser(subparsers) -> None:
    """Register the ``report`` subcommand."""
    from evaluators.cli.common import Positional, add_positionals
    from evaluators.cli.qa import add_scoring_arguments

    p = subparsers.add_parser(
        "report", help="self-contained HTML report of a QA / fact-check run or a comparison of runs",
        description="Write one HTML file (charts inlined, no network needed to open it): the report of one "
                    "QA / fact-check run, or, for several runs, the systems side by side with the paired test "
                    "of the first two (--a/--b choose others).")
    add_positionals(p, Positional("input", "FILE", "--input", many=True, help="one run, or several runs to compare"))
    p.add_argument("--input", action="append", metavar="FILE",
                   help="a run (records with ground truth and prediction), repeatable (the same as FILE)")
    p.add_argument("--predictions", action="append", metavar="FILE",
                   help="with one SQuAD-style --input: a predictions file per run, repeatable")
    p.add_argument("--a", metavar="SYSTEM", help="baseline of the paired test (default: the first run)")
    p.add_argument("--b", metavar="SYSTEM", help="system tested against it (default: the second run)")
    p.add_argument("--seed", type=int, default=0, help="seed of the resamples")
    p.add_argument("--title", help="report title (default: from the file names)")
    p.add_argument("--out", required=True, metavar="FILE.html", help="where to write the report")
    add_scoring_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``report`` subcommand; returns the exit code."""
    from evaluators.cli.compare import load_runs
    from evaluators.reports.format import fixed
    from evaluators.reports.html import comparison_report, qa_report

    result, error = load_runs(args, intervals=True)
    if error:
        return fail(error)
    runs = result.runs()
    resamples = max(0, args.ci_resamples)
    from evaluators.cli.patching import effect_of
    corrections = effect_of(args, result.reports)  # --gt-patch: before / after section
    if len(result.reports) == 1 and len(runs) == 1:
        text = qa_report(result.report, title=args.title, corrections=corrections)
    else:
        names = list(runs)
        a, b = args.a or names[0], args.b or names[1]
        missing = [n for n in (a, b) if n not in runs]
        if missing or a == b:
            return fail(f"--a/--b must name two different runs of: {', '.join(names)}")
        view = result.side_by_side(runs, n_resamples=resamples, seed=args.seed)
        try:
            comparison = result.compare(a, b, runs, n_resamples=resamples, seed=args.seed)
        except ValueError:
            comparison = None
        text = comparison_report(view, comparison, result.signature,
                                 title=args.title or f"Comparison: {', '.join(names)}", corrections=corrections)
    out = Path(args.out)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        return fail(f"cannot write {out}: {exc.strerror or exc}")
    print(f"report written to {out} ({fixed(len(text.encode('utf-8')) / 1e6, 1)} MB, opens offline)")
    return EXIT_OK
