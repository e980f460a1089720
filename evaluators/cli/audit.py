"""``python -m evaluators audit``: what the verdict / choice parser read, missed and found ambiguous, per system.

Scores the input like ``qa`` (one file, one run per system when it has a system field, or
several ``--input`` runs), then prints per system the parsed, unparsed and ambiguous counts with
examples.  ``--rules FILE`` (a JSON mapping ``{label: [spelling, ...]}``) re-reads every answer
with those spellings added and prints each system's score before and after, the delta, and the
items that moved.  ``--review-output FILE`` writes the unparsed and ambiguous answers as review
item payloads (JSON list).

Exit codes: 0 success; 2 unusable input, with the reason on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluators.cli.common import EXIT_OK, Positional, add_positionals, fail


def add_parser(subparsers) -> None:
    """Register the ``audit`` subcommand."""
    from evaluators.cli.qa import add_scoring_arguments

    p = subparsers.add_parser(
        "audit", help="extraction audit: parsed / unparsed / ambiguous verdicts or choices per system",
        description="Per system: how many answers the verdict (or multiple-choice) parser read, missed or found "
                    "ambiguous, with examples; with --rules, the score delta and the items a rule change moved.")
    add_positionals(p, Positional("input", "FILE", "--input", many=True, help="runs"))
    p.add_argument("--input", action="append", metavar="FILE", help="a run, repeatable")
    p.add_argument("--predictions", action="append", metavar="FILE",
                   help="with one SQuAD-style --input: a predictions file per run, repeatable")
    p.add_argument("--kind", choices=("verdict", "choice"), default="verdict",
                   help="verdicts (T / F / uncertain, default) or multiple-choice letters")
    p.add_argument("--rules", metavar="FILE", help="a mapping file {label: [spelling, ...]} added to the parser")
    p.add_argument("--examples", type=int, default=3, metavar="N", help="examples shown per system and status")
    p.add_argument("--review-output", metavar="FILE", help="write the unparsed and ambiguous answers as review items")
    add_scoring_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``audit`` subcommand; returns the exit code."""
    from evaluators.cli.compare import load_runs
    from evaluators.io.json_text import dumps_pretty
    from evaluators.qa.audit import audit, load_rules, review_payloads, rule_change
    from evaluators.reports.format import MISSING, percent, signed
    from evaluators.reports.tables import format_table

    args.ci_resamples = 0
    rules = None
    if args.rules:
        try:
            rules = load_rules(args.rules)
        except (OSError, ValueError) as exc:
            return fail(f"{args.rules}: {exc}")
    result, error = load_runs(args)
    if error:
        return fail(error)
    runs = result.runs()
    found = audit(runs, args.kind, examples=max(0, args.examples))
    bar = "=" * 80
    print(bar)
    print(f"Extraction audit ({args.kind}): {len(found.items)} answers, {len(found.systems)} system(s)")
    print(format_table(["system", "n", "parsed", "unparsed", "ambiguous", "accuracy"],
                       [[s.system, s.n, s.parsed, s.unparsed, s.ambiguous, percent(s.accuracy)] for s in found.systems]))
    for s in found.systems:
        for status in ("unparsed", "ambiguous"):
            for item in s.examples.get(status, []):
                print(f"  {s.system} {status} {item.id}: {item.text[:70]!r}"
                      + (f" -> {item.extraction.label} ({item.extraction.rule})" if item.extraction.label else ""))
    if rules is not None:
        change = rule_change(found, rules)
        print(bar)
        print(f"Rule change ({args.rules}): {len(change.moved)} answer(s) read differently")
        print(format_table(["system", "before", "after", "delta", "unparsed before", "unparsed after", "moved"],
                           [[d.system, percent(d.accuracy_before), percent(d.accuracy_after),
                             MISSING if d.delta is None else signed(100 * d.delta, 2), d.unparsed_before, d.unparsed_after,
                             d.moved] for d in change.systems]))
        for m in change.moved[:50]:
            print(f"  {m.system} {m.id}: {m.before or 'unparsed'} -> {m.after or 'unparsed'} ({m.rule_after}); "
                  f"gold {m.gold or MISSING}: {m.text[:60]!r}")
    if args.review_output:
        payloads = review_payloads(found)
        Path(args.review_output).write_text(dumps_pretty(payloads), encoding="utf-8")
        print(f"{len(payloads)} review item(s) written to {args.review_output}")
    return EXIT_OK
