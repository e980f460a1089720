"""``python -m evaluators testsets``: keyword-score a test set (or multi-turn expected points) against answers.

``--answer-template FILE`` writes the answers file a model run should fill in (every id, and turn, with an
empty answer: the Test sets page's "Download answer template"); ANSWERS is then not needed.

Exit codes: 0 success; 2 unusable input (unreadable file, invalid JSON, no valid item),
with the reason on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluators.reports.format import fixed, problem_lines
from evaluators.cli.common import EXIT_OK, fail


def add_parser(subparsers) -> None:
    """Register the ``testsets`` subcommand."""
    p = subparsers.add_parser(
        "testsets",
        help="keyword-scored test sets (single turn) and multi-turn expected points",
        description="Score answers against a test set: fraction of keywords found per item (NFKC + casefold), "
                    "or expected points covered per turn and dialogue; breakdown by category and difficulty.",
    )
    from evaluators.cli.common import Positional, add_positionals

    add_positionals(p, Positional("items", "ITEMS", "--items", help="test set JSON"),
                    Positional("pred", "ANSWERS", "--pred", required=False,
                               help="answers keyed by item id (and turn); not needed with --answer-template"))
    p.add_argument("--items", metavar="FILE", help="test set JSON (factual_qa.json, multi_turn.json ...); the same "
                                                   "as ITEMS")
    p.add_argument("--pred", metavar="FILE",
                   help="answers keyed by item id (and turn): JSON object, JSON array, JSONL or CSV; the same as "
                        "ANSWERS")
    p.add_argument("--kind", choices=("auto", "single", "multi_turn"), default="auto", help="default: detect")
    p.add_argument("--verbose", action="store_true", help="print every item / turn")
    p.add_argument("--output-file", dest="output_file", metavar="FILE",
                   help="write the report: .csv for one row per item (or turn), anything else for JSON")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="what to print: table (default), json (the report) or csv (one row per item), for scripts; "
                        "with --output-file, the file's format (else its extension)")
    p.add_argument("--answer-template", dest="answer_template", metavar="FILE",
                   help="write the answers file to fill in for ITEMS (every id, and turn, with an empty answer) and "
                        "stop there unless ANSWERS is given too")
    from evaluators.cli.patching import add_gt_patch_argument
    from evaluators.parallel import add_workers_argument

    add_gt_patch_argument(p, TESTSETS_PATCH_HELP)

    add_workers_argument(p)
    from evaluators.cli.runlog import add_log_arguments

    add_log_arguments(p)
    from evaluators.cli.sharding import add_shard_arguments

    add_shard_arguments(p, "items (dialogues)", "--output-file", "--log, --answer-template or --format csv")
    p.set_defaults(func=run)


TESTSETS_PATCH_HELP = ("review corrections of the test set (a GT patch made for the --items file, JSONL, as written "
                       "by 'review patch'); repeatable, applied in order. An accepted answer: an answer containing "
                       "it passes (score 1); a corrected answer replaces the item's expected answer and keywords. "
                       "Prints the mean keyword score before and after with a paired test")



def _file_text(args: argparse.Namespace, run) -> str:
    """What ``--output-file`` gets: the format of ``--format`` json / csv, else of the file's extension (.csv: one
    row per item or turn, :func:`~evaluators.reports.testsets.report_csv`; else the JSON report)."""
    from evaluators.reports.testsets import report_csv, report_json

    fmt = args.format if args.format != "table" else "csv" if Path(args.output_file).suffix.lower() == ".csv" \
        else "json"
    return report_csv(run.scores) if fmt == "csv" else report_json(run)


def _write_template(items: str, out: str) -> int:
    """``--answer-template``: :func:`~evaluators.reports.testsets.answer_template` of the set ``items`` into ``out``;
    the exit code."""
    from evaluators.io import InputError
    from evaluators.io.sources import read_file_bytes
    from evaluators.reports.testsets import answer_template
    from evaluators.testsets import load_test_set

    try:
        test_set = load_test_set(read_file_bytes(items), str(items))
    except OSError as exc:
        return fail(f"cannot read {exc.filename or items}: {exc.strerror or exc}")
    except InputError as exc:
        return fail(f"{exc.issue.location()}: {exc.issue.message}")
    for line in problem_lines(test_set.issues, "warning"):
        print(line, file=sys.stderr)
    if not test_set.items:
        return fail(f"{items}: no valid item, so the template would hold no id")
    try:
        Path(out).write_text(answer_template(test_set), encoding="utf-8")
    except OSError as exc:
        return fail(f"cannot write {out}: {exc.strerror or exc}")
    print(f"answer template ({len(test_set.items)} items) written to {out}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the ``testsets`` subcommand; returns the exit code."""
    from evaluators.io import InputError
    from evaluators.parallel import worker_count
    from evaluators.reports.format import number
    from evaluators.reports.tables import format_table
    from evaluators.reports.testsets import report_json
    from evaluators.testsets import TestSetsConfig, TestSetsInputs, run_testsets

    try:
        workers = worker_count(args.workers)
    except ValueError as exc:
        return fail(str(exc))
    if args.answer_template:
        code = _write_template(args.items, args.answer_template)
        if code or not args.pred:
            return code
    if not args.pred:
        return fail("testsets needs ANSWERS: python -m evaluators testsets ITEMS ANSWERS (or --pred ANSWERS); "
                     "--answer-template FILE writes the answers file to fill in")
    try:
        inputs = TestSetsInputs.from_paths(args.items, args.pred)
    except OSError as exc:
        return fail(f"cannot read {exc.filename}: {exc.strerror or exc}")
    from evaluators.cli.patching import patches_of

    patches, error = patches_of(args)  # --gt-patch: read before anything is scored
    if error:
        return fail(error)
    if args.shard:
        from evaluators.cli.sharding import testsets as shard

        return shard(args, inputs, TestSetsConfig(None if args.kind == "auto" else args.kind, gt_patch=patches))
    try:
        run = run_testsets(inputs, TestSetsConfig(None if args.kind == "auto" else args.kind, gt_patch=patches),
                           workers=workers)
    except (InputError, ValueError) as exc:  # GTPatchMismatch is a ValueError
        return fail(str(exc))
    test_set, answers, report = run.test_set, run.answers, run.scores
    for line in problem_lines(run.issues, "warning"):
        print(line, file=sys.stderr)
    if report is None:
        return fail(f"{args.items}: no valid item")
    if not answers.answers:
        return fail(f"{args.pred}: no answers read (expected {{id: answer}} or records with id and answer)")
    if args.log:  # the run registry: the dataset is the test set file, the inputs kept for re-scoring
        from evaluators.cli.runlog import log_files
        from evaluators.tasks.builtin import testsets_run_result

        error = log_files(args, testsets_run_result(run), gt=args.items, predictions=[args.pred],
                          inputs={"items": (Path(args.items).name, inputs.items),
                                  "answers": (Path(args.pred).name, inputs.answers)})
        if error:
            return fail(error)
    if args.format != "table":  # a script's output: the report alone on stdout
        if args.format == "json":
            sys.stdout.write(report_json(run) + "\n")
        else:
            from evaluators.reports.testsets import report_csv
            sys.stdout.write(report_csv(report))
        if args.output_file:
            Path(args.output_file).write_text(_file_text(args, run), encoding="utf-8", newline="")
        return 0
    bar = "=" * 80
    print(bar)
    print(f"test set: {args.items} ({test_set.kind}, {len(test_set.items)} items, version {test_set.version})")
    print(f"answers:  {args.pred} ({len(answers.answers)} answers)")
    print(f"rule:     {report.rule}")
    print(bar)
    if report.kind == "single":
        o = report.overall
        print(f"items: {o.n_items}  scored: {o.n_scored}  missing answers: {len(report.missing_prediction)} (scored 0)"
              f"  without keywords: {len(report.no_keywords)} (not scored)")
        print(f"mean keyword score (macro over items): {number(o.mean_score)}")
        print(f"keyword recall (micro): {number(o.keyword_recall)}  ({o.keywords_found} of {o.keywords_total})")
        if o.n_human:
            print(f"mean human score (1-5): {fixed(o.mean_human_score, 2)} over {o.n_human}")
        rows = [[f"category={k}", v.n_items, number(v.mean_score), number(v.keyword_recall)]
                for k, v in report.by_category.items()]
        rows += [[f"difficulty={k}", v.n_items, number(v.mean_score), number(v.keyword_recall)]
                 for k, v in report.by_difficulty.items()]
        print()
        print(format_table(["subset", "items", "mean score", "keyword recall"], rows))
        if args.verbose:
            print(bar)
            for r in report.items:
                print(f"  {r.id} [{r.status}] score {number(r.score)}  found {list(r.found)}  missing {list(r.missing)}")
    else:
        o = report.overall
        print(f"dialogues: {len(report.dialogues)}  turns: {o.n_turns}  missing answers: {len(report.missing_prediction)}")
        print(f"points covered (micro): {number(o.coverage_micro)}  ({o.n_covered} of {o.n_points})")
        print(f"mean turn coverage (macro over turns): {number(o.coverage_macro)}")
        print(f"mean dialogue coverage (macro over dialogues): {number(report.dialogue_macro)}")
        rows = [[d.id, d.scenario, len(d.turns), f"{d.n_covered}/{d.n_points}", number(d.coverage_micro)]
                for d in report.dialogues]
        print()
        print(format_table(["dialogue", "scenario", "turns", "covered", "coverage"], rows))
        if args.verbose:
            print(bar)
            for d in report.dialogues:
                for t in d.turns:
                    marks = ", ".join(f"{'+' if p.covered else '-'}{p.point} ({p.rule})" for p in t.points)
                    print(f"  {d.id}#{t.turn} [{t.status}] {t.n_covered}/{t.n_points}: {marks}")
    if report.extra_answers:
        print(f"answers matching no item: {', '.join(report.extra_answers)}")
    if run.corrections is not None:  # the scores above are after the corrections
        from evaluators.cli.patching import print_corrections

        print(bar)
        print_corrections(run.corrections)
    print(bar)
    print(f"signature: {report.signature}")
    if args.output_file:
        Path(args.output_file).write_text(_file_text(args, run), encoding="utf-8", newline="")
        print(f"report written to {args.output_file}")
    return EXIT_OK
