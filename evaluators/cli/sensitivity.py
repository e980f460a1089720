"""``python -m evaluators sensitivity``: does a ranking of systems survive another tokenization? (issue 31)

Scores the runs like ``compare`` (record files of the same questions, or one file with a
system field), then recomputes token F1, exact match and ROUGE-L of every system under
characters, jieba (shipped dictionary), jieba with a big dictionary (``--big-dict`` or jieba's
``dict.txt.big``), jieba with HMM on and jieba with ``--user-dict``.  Prints each system's
score and 95% interval under each, every pair of systems whose order changes under an
alternative (with the paired bootstrap interval of the difference), and with ``--script`` the
records whose official score conversion changed.  ``--output-file`` writes the JSON report,
which holds every tokenizer's provenance (dictionary SHA-256 included).

Exit codes: 0 success; 2 unusable input, with the reason on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluators.cli.common import EXIT_OK, Positional, add_positionals, fail


def add_parser(subparsers) -> None:
    """Register the ``sensitivity`` subcommand."""
    from evaluators.cli.qa import add_scoring_arguments

    p = subparsers.add_parser(
        "sensitivity",
        help="rank sensitivity: every system's overlap scores under characters, jieba, a big dictionary, HMM on",
        description="Recompute token F1, EM and ROUGE-L of every system under several reasonable tokenizations "
                    "and flag every pair of systems whose order changes, with the paired interval of the difference.",
    )
    add_positionals(p, Positional("input", "FILE", "--input", many=True, help="runs (records with ground truth and prediction)"))
    p.add_argument("--input", action="append", metavar="FILE",
                   help="a run (records with ground truth and prediction), repeatable; a file with a system/model "
                        "field gives one run per system")
    p.add_argument("--predictions", action="append", metavar="FILE",
                   help="with one SQuAD-style --input: a predictions file per run, repeatable")
    add_scoring_arguments(p)
    p.add_argument("--memory", action="store_true",
                   help="the inputs are long-memory results files (EvalResult JSONL/JSON/CSV or mem0 results.json; "
                        "--questions for mem0's LoCoMo ids), one system each, paired with the first by question_id; "
                        "the memory overlap metrics (F1 (char) = ROUGE-1, ROUGE-2, ROUGE-L, BLEU-1/2/4) are "
                        "recomputed. Without it the runs are read as qa and compare read them")
    p.add_argument("--questions", metavar="FILE", help="with --memory: the LoCoMo / LongMemEval question file")
    p.add_argument("--big-dict", metavar="FILE", help="a big jieba dictionary (default: jieba's dict.txt.big or "
                                                      "$EVALBOARD_JIEBA_BIG_DICT where present)")
    p.add_argument("--metric", choices=("token_f1", "exact_match", "rougeL", "rouge2", "bleu1", "bleu2", "bleu4"),
                   default="token_f1", help="the metric of the printed table (the JSON holds all the task's metrics: "
                                            "qa token_f1, exact_match, rougeL; --memory token_f1, rouge2, rougeL, "
                                            "bleu1, bleu2, bleu4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resamples")
    p.add_argument("--baseline-report", metavar="FILE",
                   help="a sensitivity or qa report JSON written earlier: warn when a tokenizer differs from it")
    p.add_argument("--output-file", metavar="FILE", help="write the sensitivity report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``sensitivity`` subcommand; returns the exit code."""
    from evaluators.cli.compare import load_runs
    from evaluators.qa.sensitivity import rank_sensitivity, script_effect

    resamples = max(0, args.ci_resamples)
    script = args.script
    args.script = None  # the runs are read without conversion; the analysis converts (and lists what moved)
    for name in (args.big_dict, args.user_dict):
        if name and not Path(name).is_file():
            return fail(f"cannot read {name}: no such file")
    if args.memory:
        return _memory(args, script, min(resamples, 2000))
    result, error = load_runs(args)
    if error:
        return fail(error)
    runs = result.runs()
    try:
        report = rank_sensitivity(runs, big_dictionary=args.big_dict, user_dict=args.user_dict, script=script,
                                  n_resamples=min(resamples, 2000), seed=args.seed)
    except ValueError as exc:
        return fail(exc)
    changes = script_effect(runs, script, getattr(args, "lang", "auto")) if script else []
    return _print(args, report, script, changes)


def _memory(args: argparse.Namespace, script: str | None, resamples: int) -> int:
    """``--memory``: each input a memory results file (one system), paired with the first by question id."""
    from evaluators.io import InputError
    from evaluators.io.sources import read_file_bytes
    from evaluators.memory.compare import read_other_system
    from evaluators.memory.inputs import resolve_inputs, system_name
    from evaluators.memory.sensitivity import memory_sensitivity
    from evaluators.reports.format import problem_lines

    files = list(args.input or [])
    if not files:
        return fail("give the memory results files (one per system)")
    try:
        questions = (args.questions, read_file_bytes(args.questions)) if args.questions else None
        first = (files[0], read_file_bytes(files[0]))
        inputs = resolve_inputs(results=first, questions=questions)
        results_by_system = {system_name(inputs.results, files[0]): inputs.results}
        issues = list(inputs.issues)
        for i, name in enumerate(files[1:], start=2):
            paired, pairing, more = read_other_system(Path(name).name, read_file_bytes(name), inputs.results,
                                                      dataset=inputs.locomo_dataset)
            issues += more
            system = system_name(paired, name)
            if system in results_by_system:
                system = f"{system} ({i})"
            results_by_system[system] = paired
            print(f"note: {system}: {pairing.describe()}", file=sys.stderr)
    except (OSError, InputError, ValueError) as exc:
        return fail(exc)
    for line in problem_lines(issues):
        print(line, file=sys.stderr)
    if not inputs.results:
        return fail(f"no usable question in {files[0]}")
    report = memory_sensitivity(results_by_system, user_dict=args.user_dict, big_dictionary=args.big_dict,
                                script=script, n_resamples=resamples, seed=args.seed)
    if args.metric not in report.metrics:
        args.metric = report.metrics[0]
    return _print(args, report, script, [])


def _print(args: argparse.Namespace, report, script: str | None, changes: list) -> int:
    """Print the tables (and write the JSON report) of a sensitivity analysis; returns 0."""
    import dataclasses

    from evaluators.cli.qa import baseline_warnings
    from evaluators.io.json_text import dumps_pretty
    from evaluators.reports.format import fixed, percent, percent_interval, signed
    from evaluators.reports.tables import format_table

    for line in baseline_warnings(args.baseline_report, report.provenance):
        print(f"warning: {line}", file=sys.stderr)

    ci = percent_interval

    bar = "=" * 80
    print(bar)
    print(f"Rank sensitivity ({args.metric}): {len(report.systems)} systems under {len(report.tokenizations)} "
          f"tokenizations (reference: {report.tokenizations[0].key})")
    headers = ["system"] + [f"{t.key}" for t in report.tokenizations]
    rows = []
    for row in report.table(args.metric):
        rows.append([row["system"]] + [f"{percent(m)} #{rank} [{ci(lo, hi)}]" for m, lo, hi, rank in
                                       (row[t.key] for t in report.tokenizations)])
    print(format_table(headers, rows))
    for note in report.notes:
        print(f"  note: {note}")
    flips = [f for f in report.flips if f.metric == args.metric]
    print(bar)
    if flips:
        print(f"Order changes ({len(flips)}): B - A under the reference and under the alternative, paired 95% CI")
        print(format_table(["A", "B", "tokenization", "delta ref", "CI ref", "delta alt", "CI alt", "n"],
                           [[f.a, f.b, f.tokenization, signed(100 * f.delta_reference, 2), _pts(f.ci_reference),
                             signed(100 * f.delta, 2), _pts(f.ci), f.n_paired] for f in flips]))
    else:
        print("No pair of systems changes order under any alternative tokenization.")
    if script and not args.memory:
        print(bar)
        print(f"Script conversion {script}: {len(changes)} record(s) whose official EM/F1 changed")
        if changes:
            print(format_table(["system", "id", "EM", "F1", "what changed"],
                               [[c.system, c.id, f"{c.exact_match_before:g} -> {c.exact_match_after:g}",
                                 f"{fixed(c.token_f1_before, 2)} -> {fixed(c.token_f1_after, 2)}", c.explanation[:60]]
                                for c in changes[:50]]))
    print(bar)
    print("tokenizers:")
    for t in report.tokenizations:
        print(f"  {t.key}: {t.provenance.signature()}")
    print(f"signature: {report.signature}")
    if args.output_file:
        data = report.to_dict()
        data["script_changes"] = [dataclasses.asdict(c) | {"explanation": c.explanation} for c in changes]
        data["script"] = script or "none"
        data["task"] = "memory" if args.memory else "qa"
        Path(args.output_file).write_text(dumps_pretty(data, default=str), encoding="utf-8")
        print(f"sensitivity report written to {args.output_file}")
    return EXIT_OK


def _pts(ci) -> str:
    from evaluators.reports.format import MISSING, signed

    lo, hi = ci
    return MISSING if lo is None else f"{signed(100 * lo, 2)} to {signed(100 * hi, 2)}"
