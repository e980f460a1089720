"""``python -m evaluators compare``: QA / fact-check runs side by side and a paired test of two.

Runs are record files of the same questions (each file one run, or one run per system when a
file has a system / model field, e.g. a HotpotQA ``{system: [rows]}`` comparison file), or
several ``--predictions`` files for one SQuAD-style dataset.  Prints each system's EM and F1
with 95% bootstrap intervals, how often the systems agree, the paired comparison of two
systems (``--a``/``--b``, default the first two) and the records that changed between them.

Exit codes: 0 success; 2 unusable input (unreadable file, fewer than two runs, unknown system,
no record id common to the two systems), with the reason on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluators.cli.common import EXIT_OK, Positional, add_positionals, fail
from evaluators.cli.qa import add_scoring_arguments, config_of
from evaluators.io.sources import read_file_bytes
from evaluators.reports.format import fixed, problem_lines, signed, significant

OUTCOMES = ("changed", "won", "lost", "tied", "all")


def add_parser(subparsers) -> None:
    """Register the ``compare`` subcommand."""
    p = subparsers.add_parser(
        "compare",
        help="QA / fact-check runs side by side, with a paired significance test of two systems",
        description="Score several runs of the same questions with the qa settings and compare them: "
                    "EM and F1 per system with 95%% bootstrap intervals, agreement counts, the paired "
                    "bootstrap / approximate randomization / McNemar tests of system B against A, and the "
                    "records B won or lost.",
    )
    add_positionals(p, Positional("input", "FILE", "--input", many=True,
                                  help="runs of the same questions (records with ground truth and prediction), or "
                                       "one file with a system/model field"))
    p.add_argument("--input", action="append", metavar="FILE",
                   help="a run (records with ground truth and prediction), repeatable (the same as FILE); a file "
                        "with a system/model field gives one run per system")
    p.add_argument("--predictions", action="append", metavar="FILE",
                   help="with one SQuAD-style --input: a predictions file per run, repeatable")
    p.add_argument("--a", metavar="SYSTEM", help="baseline system (default: the first run)")
    p.add_argument("--b", metavar="SYSTEM", help="system compared with it (default: the second run)")
    add_scoring_arguments(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and randomization resamples")
    p.add_argument("--show", choices=OUTCOMES, default="changed",
                   help="records listed: changed (won or lost, default), won, lost, tied or all")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="records listed at most (0: all)")
    p.add_argument("--output-file", dest="output_file", metavar="FILE",
                   help="write the comparison: .csv for the records x systems matrix, .html for the "
                        "self-contained report, anything else for JSON")
    p.add_argument("--format", choices=("table", "json", "csv", "html"), default="table",
                   help="what to print: table (default), or the comparison alone on stdout for scripts: json, csv "
                        "(records x systems) or html (the self-contained report)")
    p.add_argument("--systems-csv", metavar="FILE",
                   help="write each system's EM / F1 with 95%% intervals as CSV")
    p.add_argument("--baseline-report", metavar="FILE",
                   help="a report JSON written earlier (qa --output-file, sensitivity --output-file): warn when "
                        "this run's tokenizer (jieba version, dictionary digests, HMM, normalisation, script "
                        "conversion) differs from it")
    from evaluators.cli.runlog import add_log_arguments

    add_log_arguments(p)
    from evaluators.cli.sharding import add_shard_arguments

    add_shard_arguments(p, "records (of every run)", "--output-file", "--log, --systems-csv or --format csv|html")
    p.set_defaults(func=run)



def load_runs(args: argparse.Namespace, *, intervals: bool = False):
    """Score the inputs of ``args`` with :func:`evaluators.qa.run.run_qa`; returns ``(run, error message or None)``.

    Without ``intervals`` the reports carry no bootstrap intervals (a comparison computes
    them per system itself).  Any input that cannot be scored is an error (exit 2).
    """
    import dataclasses

    from evaluators.parallel import worker_count
    from evaluators.qa.run import QAInput, failure_message, run_qa

    config = config_of(args) if intervals else dataclasses.replace(config_of(args), ci_resamples=0)
    jobs: list[tuple[Path, str | None]] = [(Path(f), None) for f in args.input]
    if args.predictions:
        if len(args.input) != 1:
            return None, "--predictions needs exactly one --input (the SQuAD-style dataset)"
        jobs = [(Path(args.input[0]), p) for p in args.predictions]
    inputs = []
    for path, pred_file in jobs:
        if not path.is_file():
            return None, f"cannot read {path}: no such file"
        try:
            preds = read_file_bytes(pred_file) if pred_file else None
        except OSError as exc:
            return None, f"cannot read {pred_file}: {exc.strerror or exc}"
        inputs.append(QAInput(path, name=pred_file or None, predictions=preds, predictions_file=pred_file))
    try:
        result = run_qa(inputs, config, workers=worker_count(args.workers))
    except OSError as exc:
        return None, f"cannot read {exc.filename or ''}: {exc.strerror or exc}"
    except ValueError as exc:  # a bad --workers
        return None, str(exc)
    for outcome in result.inputs:
        for line in problem_lines(outcome.report.issues if outcome.report is not None else (), "warning"):
            print(line, file=sys.stderr)
        if outcome.failure is not None:
            return None, failure_message(outcome.failure)
    from evaluators.cli.patching import patch_qa_run  # --gt-patch: each report patched for its GT file
    return patch_qa_run(args, result, [path for path, _ in jobs])


def _comparison_text(fmt: str, view, comparison, signature: str, names: list[str], corrections=None) -> str:
    """The comparison as ``json``, ``csv`` (records x systems) or ``html`` (the self-contained report);
    ``corrections`` (``--gt-patch``): the before / after section of the JSON and the HTML."""
    from evaluators.reports.qa import comparison_json, matrix_csv

    if fmt == "csv":
        return matrix_csv(view, signature)
    if fmt == "html":
        from evaluators.reports.html import comparison_report
        return comparison_report(view, comparison, signature, title=f"Comparison: {', '.join(names)}",
                                 corrections=None if corrections is None or corrections.effect is None
                                 else (corrections.effect, corrections.applications))
    from evaluators.reports.corrections import corrections_jsonable
    return comparison_json(view, comparison, signature,
                           None if corrections is None else corrections_jsonable(corrections))


def _log(args: argparse.Namespace, result) -> str | None:
    """``--log``: every input's runs (:func:`evaluators.cli.runlog.qa_log_entry`, after the GT patches), named
    ``--run-name``/<system>; an error or ``None``."""
    from evaluators.cli.runlog import log_several, qa_log_entry

    jobs = [(Path(args.input[0]), p) for p in args.predictions] if args.predictions else \
        [(Path(f), None) for f in args.input]
    config = config_of(args)
    entries = []
    for n, ((path, pred_file), outcome) in enumerate(zip(jobs, result.inputs)):
        entry = qa_log_entry(args, path, outcome.report, config, predictions=pred_file, index=n)
        if isinstance(entry, str):
            return entry
        entries.append(entry)
    return log_several(args, entries)


def comparison_of(result, a: str | None, b: str | None, ci_resamples: int, seed: int):
    """``(names, a, b, view, comparison)`` of a scored run (``compare`` and the merge of its shards), or the
    reason it cannot be compared: the runs side by side and the paired tests of ``b`` against ``a`` (default the
    first two runs), intervals and tests on ``ci_resamples`` resamples with ``seed``."""
    runs = result.runs()
    if len(runs) < 2:
        return (f"one run only ({', '.join(runs)}): give two or more --input files, a file with a "
                "system/model field, or several --predictions")
    names = list(runs)
    a, b = a or names[0], b or names[1]
    for name in (a, b):
        if name not in runs:
            return f"no system named {name!r}; the runs are: {', '.join(names)}"
    if a == b:
        return "--a and --b name the same system"
    resamples = max(0, ci_resamples)
    view = result.side_by_side(runs, n_resamples=resamples, seed=seed)
    try:
        comparison = result.compare(a, b, runs, n_resamples=resamples, seed=seed)
    except ValueError as exc:
        return str(exc)
    return names, a, b, view, comparison


def run(args: argparse.Namespace) -> int:
    """Run the ``compare`` subcommand; returns the exit code."""
    from evaluators.reports.format import MISSING, p_value, percent, percent_interval
    from evaluators.reports.tables import format_table

    if args.shard:
        from evaluators.cli.sharding import compare as shard

        return shard(args, config_of(args))
    result, error = load_runs(args)
    if error:
        return fail(error)
    from evaluators.cli.qa import baseline_warnings

    for line in baseline_warnings(args.baseline_report, result.reports[0].provenance if result.reports else None):
        print(f"warning: {line}", file=sys.stderr)
    compared = comparison_of(result, args.a, args.b, args.ci_resamples, args.seed)
    if isinstance(compared, str):
        return fail(compared)
    names, a, b, view, comparison = compared
    signature = result.signature
    if args.log:  # one run per system of every input, as qa --log logs each
        error = _log(args, result)
        if error:
            return fail(error)
    if args.format != "table":  # a script's output: the comparison alone on stdout
        from evaluators.cli.patching import corrections_for
        corrections = corrections_for(args, result.reports)
        sys.stdout.write(_comparison_text(args.format, view, comparison, signature, names, corrections))
        return EXIT_OK

    ci = percent_interval

    bar = "=" * 80
    print(bar)
    print(f"Systems side by side ({len(names)} runs, {len(view.rows)} record ids)")
    common = view.common
    if common.same:
        print(format_table(["system", "n", "EM", "EM 95% CI", "F1", "F1 95% CI"],
                           [[s.system, s.n, percent(s.exact_match), ci(s.exact_match_ci_low, s.exact_match_ci_high),
                             percent(s.token_f1), ci(s.token_f1_ci_low, s.token_f1_ci_high)] for s in view.scores]))
    else:  # scores over the records every system scored, each system's own n and means beside them
        print(f"  {common.warning()}")
        on_common = {s.system: s for s in view.common_scores}
        rows = []
        for s in view.scores:
            c = on_common.get(s.system)
            rows.append([s.system, s.n, common.n_common,
                         percent(c.exact_match) if c else MISSING,
                         ci(c.exact_match_ci_low, c.exact_match_ci_high) if c else MISSING,
                         percent(c.token_f1) if c else MISSING,
                         ci(c.token_f1_ci_low, c.token_f1_ci_high) if c else MISSING,
                         percent(s.exact_match), percent(s.token_f1)])
        print(format_table(["system", "own n", "n common", "EM", "EM 95% CI", "F1", "F1 95% CI",
                            "EM (own n)", "F1 (own n)"], rows))
    print("  agreement (exact match): " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in view.counts.items()))
    print(bar)
    c = comparison
    print(f"Paired comparison: B = {b} against A = {a}")
    print(f"  records paired by id: {c.n_paired}" + (f" (left out: {c.only_a} only in A, {c.only_b} only in B)"
                                                     if c.only_a or c.only_b else ""))
    f1, em, ar, mc = c.token_f1_bootstrap, c.exact_match_bootstrap, c.token_f1_randomization, c.exact_match_mcnemar

    def tested(x, name):
        if not x.computed:
            return "no interval or p-value computed (--ci-resamples 0)"
        ci_text = (f"95% CI {signed(100 * x.ci_low, 2)} to {signed(100 * x.ci_high, 2)}, "
                   if x.ci_low is not None else "")
        if x.exact:
            name = "exact sign-flip test, every flip counted"
        flag = f" [!] not trustworthy: {x.small_sample}" if x.small_sample else ""
        return f"{ci_text}{p_value(x.p_value, x.p_value_is_bound)} ({name}){flag}"

    print(f"  F1: {percent(f1.mean_a)} -> {percent(f1.mean_b)}, delta {signed(100 * f1.delta, 2)} points, "
          f"{tested(f1, 'paired bootstrap')}" + (f", {tested(ar, 'approximate randomization')}" if ar.computed else ""))
    print(f"  EM: {percent(em.mean_a)} -> {percent(em.mean_b)}, delta {signed(100 * em.delta, 2)} points, "
          f"{tested(em, 'paired bootstrap')}")
    odds = MISSING if mc.odds_ratio is None else significant(mc.odds_ratio)
    print(f"  McNemar (EM): right in A only {mc.only_a}, in B only {mc.only_b}, exact {p_value(mc.p_value)}, "
          f"odds ratio {odds}")
    print(f"  records by F1: B won {f1.won}, lost {f1.lost}, tied {f1.tied}")
    wanted = {"changed": {"won", "lost"}, "all": {"won", "lost", "tied"}}.get(args.show, {args.show})
    listed = [r for r in c.records if r.outcome in wanted]
    shown = listed if args.limit <= 0 else listed[:args.limit]
    if shown:
        print(bar)
        print(f"Records ({args.show}): {len(listed)}" + (f", first {len(shown)} shown (--limit)"
                                                         if len(shown) < len(listed) else ""))
        print(format_table(["id", "outcome", "F1 A", "F1 B", "prediction A", "prediction B"],
                           [[r.id, r.outcome, fixed(r.token_f1_a, 2), fixed(r.token_f1_b, 2), r.prediction_a[:40],
                             r.prediction_b[:40]] for r in shown]))
    from evaluators.cli.patching import corrections_for, print_corrections
    corrections = corrections_for(args, result.reports)  # --gt-patch: before / after, printed and written
    if corrections is not None:
        print(bar)
        print_corrections(corrections, warn=False)  # apply_patches warned
    print(bar)
    print(f"statistics: {f1.method}; {ar.method}; McNemar exact (binomial); intervals: "
          f"{view.scores[0].ci or 'none'}")
    print(f"signature: {signature}")
    if args.output_file:
        out = Path(args.output_file)
        suffix = out.suffix.lower()
        fmt = "csv" if suffix == ".csv" else "html" if suffix in (".html", ".htm") else "json"
        out.write_text(_comparison_text(fmt, view, comparison, signature, names, corrections), encoding="utf-8")
        print(f"comparison written to {out}")
    if args.systems_csv:
        from evaluators.reports.qa import systems_csv
        Path(args.systems_csv).write_text(systems_csv(view, signature), encoding="utf-8")
        print(f"systems written to {args.systems_csv}")
    return EXIT_OK
