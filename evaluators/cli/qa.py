"""``python -m evaluators qa``: score a QA or fact-check file and print aligned text tables.

Exit codes: 0 success; 2 unusable input (unreadable file, no records, no ground truth at
all), with the reason on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluators.cli.common import EXIT_OK, Positional, add_positionals, fail
from evaluators.cli.patching import add_gt_patch_argument, corrections_for, patch_runs, print_corrections
from evaluators.cli.runlog import add_log_arguments, log_qa
from evaluators.io.sources import read_file_bytes
from evaluators.parallel import add_workers_argument
from evaluators.reports.format import MISSING, fixed, percent_interval, problem_lines


def add_parser(subparsers) -> None:
    """Register the ``qa`` subcommand."""
    p = subparsers.add_parser(
        "qa",
        help="QA (EM/F1, SQuAD for English, CMRC 2018 for Chinese) and fact-check (verdicts, confusion matrix)",
        description="Score QA or fact-check records (JSONL, JSON array, CSV, or a SQuAD-style dataset with "
                    "--predictions). Prints the configuration, counts, EM and F1, and for fact-check the "
                    "confusion matrix and the per-class table.",
    )
    add_positionals(p, Positional("input", "FILE", "--input", many=True,
                                  help="records with ground truth and prediction (JSONL, JSON, CSV) or a SQuAD-style "
                                       "dataset; several are scored one after the other"))
    p.add_argument("--input", "--input_file", dest="input", action="append", metavar="FILE",
                   help="records with ground truth and prediction, or a SQuAD-style dataset (the same as FILE; "
                        "several files are scored one after the other)")
    p.add_argument("--predictions", metavar="FILE",
                   help="separate predictions, {id: answer} or records with id and prediction, joined by id")
    add_scoring_arguments(p)
    p.add_argument("--rows", choices=("true", "predicted"), default="true",
                   help="confusion matrix rows: true labels (default, as scikit-learn, the page and the HTML "
                        "report) or predicted (the earlier fact-check script)")
    p.add_argument("--verbose", action="store_true", help="print every record's comparison and all listed ids")
    p.add_argument("--output-file", "--output_file", dest="output_file", metavar="FILE",
                   help="write the report: .csv for per-record rows, .html for the self-contained HTML report "
                        "(the page's), anything else for JSON")
    p.add_argument("--format", choices=("table", "json", "csv", "html"), default="table",
                   help="what to print: table (default, readable on a terminal), json (the report), csv (one "
                        "row per record) or html (the self-contained report), for scripts; with --output-file, the "
                        "file's format (else its extension)")
    p.add_argument("--summary-csv", metavar="FILE",
                   help="write EM / F1 (and per-class F1) with their 95%% intervals by subset as CSV")
    add_log_arguments(p)
    from evaluators.cli.sharding import add_shard_arguments

    add_shard_arguments(p, "records", "--output-file", "--log, --summary-csv or several input files")
    p.set_defaults(func=run)


def add_scoring_arguments(p) -> None:
    """The scoring settings shared by ``qa`` and ``compare`` (dataset, task, language, fields, group, CI)."""
    p.add_argument("--dataset", metavar="NAME", help="dataset name (hover, exfever, fever, fact... mean fact-check)")
    p.add_argument("--task", choices=("auto", "qa", "factcheck"), default="auto", help="default: detect")
    p.add_argument("--lang", choices=("auto", "en", "zh"), default="auto",
                   help="QA tokenization: per record (auto), SQuAD v1.1 (en) or CMRC 2018 (zh)")
    p.add_argument("--gt-field", action="append", metavar="FIELD",
                   help="ground-truth field, repeatable, in priority order (dotted for nested: original_row.label); "
                        "replaces the default order")
    p.add_argument("--pred-field", action="append", metavar="FIELD",
                   help="prediction field, repeatable, in priority order; replaces the default order")
    p.add_argument("--group-field", metavar="FIELD", default="auto",
                   help="break scores down by this field (default: system/model/method/run if present; 'none' to disable)")
    p.add_argument("--ci-resamples", type=int, default=10_000, metavar="N",
                   help="bootstrap resamples for the 95%% confidence intervals of EM and F1 (0: none; default 10000)")
    add_text_arguments(p)
    add_workers_argument(p)
    add_gt_patch_argument(p)


def add_text_arguments(p) -> None:
    """``--script`` (OpenCC conversion, off by default) and ``--user-dict`` (jieba), recorded in the provenance."""
    from evaluators.text.script import SCRIPT_CONFIGS  # a tuple of names: no OpenCC import

    p.add_argument("--script", choices=SCRIPT_CONFIGS, default=None, metavar="CONFIG",
                   help="convert predictions and gold answers between Traditional and Simplified Chinese with this "
                        f"OpenCC configuration before scoring (off by default; one of {', '.join(SCRIPT_CONFIGS)}); "
                        "written into the signature")
    p.add_argument("--user-dict", dest="user_dict", metavar="FILE", default=None, type=_readable_file,
                   help="a jieba user dictionary for the word-level (jieba) numbers; its SHA-256 is recorded")


def _readable_file(name: str) -> str:
    if not Path(name).is_file():
        raise argparse.ArgumentTypeError(f"cannot read {name}: no such file")
    return name


def baseline_warnings(path: str | None, provenance) -> list[str]:
    """``tokenizer changed since the baseline: ...`` lines when report file ``path`` was cut differently."""
    if not path:
        return []
    import json

    from evaluators.text.provenance import provenance_differences

    try:
        data = json.loads(read_file_bytes(path).decode("utf-8"))
    except (OSError, ValueError) as exc:
        return [f"cannot read the baseline report {path}: {exc}"]
    diffs = provenance_differences(data.get("provenance") if isinstance(data, dict) else None, provenance)
    return [f"tokenizer changed since the baseline ({path}): {d}" for d in diffs]



def config_of(args: argparse.Namespace):
    """The :class:`~evaluators.qa.evaluate.QAConfig` of parsed :func:`add_scoring_arguments`."""
    from evaluators.qa.evaluate import DEFAULT_GT_FIELDS, DEFAULT_PRED_FIELDS, QAConfig

    return QAConfig(
        dataset=args.dataset, task=args.task, lang=args.lang,
        gt_fields=tuple(args.gt_field) if args.gt_field else DEFAULT_GT_FIELDS,
        pred_fields=tuple(args.pred_field) if args.pred_field else DEFAULT_PRED_FIELDS,
        group_field=None if (args.group_field or "").lower() == "none" else args.group_field,
        ci_resamples=max(0, args.ci_resamples),
        script=getattr(args, "script", None), user_dict=getattr(args, "user_dict", None),
    )



def _ids(ids: tuple[str, ...], verbose: bool) -> str:
    if verbose or len(ids) <= 10:
        return ", ".join(ids)
    return ", ".join(ids[:10]) + f", ... ({len(ids) - 10} more; --verbose lists all)"


def run(args: argparse.Namespace) -> int:
    """Run the ``qa`` subcommand on each input file in turn; returns the exit code (the worst of them)."""
    paths = list(args.input)
    if len(paths) > 1:
        single = [flag for flag, given in (("--output-file", args.output_file), ("--summary-csv", args.summary_csv),
                                           ("--predictions", args.predictions), ("--run-name", args.run_name),
                                           ("--format " + args.format, args.format != "table")) if given]
        if single:
            return fail(f"{', '.join(single)} goes with one input file, {len(paths)} given; score them one at a "
                        "time, or put them side by side with 'compare'")
    if args.shard:
        return _run_shard(args, paths)
    code = EXIT_OK
    for path in paths:
        code = max(code, _run_one(args, path))
    return code


def _run_shard(args: argparse.Namespace, paths: list[str]) -> int:
    """``qa --shard i/N --output-file FILE``: score one shard and write its shard file (:mod:`evaluators.shards`)."""
    from evaluators.cli.runlog import file_digest
    from evaluators.cli.sharding import begin, checked_patches, patch_digests, patch_extra, write
    from evaluators.io import InputError, InputIssue
    from evaluators.io.typed_json import encode
    from evaluators.parallel import worker_count
    from evaluators.qa.evaluate import NO_RECORDS
    from evaluators.qa.records import open_qa_source
    from evaluators.qa.run import failure_message, misplaced_input
    from evaluators.qa.shards import COLUMNS, result_row, score_shard, shard_manifest_parts, unusable_extra

    where = begin(args, (("several input files", len(paths) > 1), ("--log", args.log),
                         ("--summary-csv", args.summary_csv),
                         ("--format " + args.format, args.format not in ("table", "json"))), args.output_file,
                  "--output-file")
    if isinstance(where, int):
        return where
    shard, n_shards = where
    path = Path(paths[0])
    if not path.is_file():
        return fail(f"cannot read {path}: no such file")
    preds = None
    try:
        if args.predictions:
            preds = read_file_bytes(args.predictions)
        digests = {"gt_digest": file_digest(path), "predictions_digest": file_digest(args.predictions or path)}
    except OSError as exc:
        return fail(f"cannot read {exc.filename or path}: {exc.strerror or exc}")
    patches, error = checked_patches(args.gt_patch)  # applied once, by 'merge', to the pooled report
    if error:
        return fail(error)
    config = config_of(args)
    try:
        result = score_shard(lambda: open_qa_source(path, str(path), predictions=preds,
                                                    predictions_file=args.predictions or "<predictions>"),
                             config, shard, n_shards, args.shard_seed, workers=worker_count(args.workers))
    except InputError as exc:  # as the single process says it: where the file goes, else what is wrong
        return fail(failure_message(misplaced_input(path, str(path)) or exc.issue))
    except OSError as exc:
        return fail(f"cannot read {path}: {exc.strerror or exc}")
    except ValueError as exc:  # a bad --workers
        return fail(str(exc))
    if not result.n_records:  # refused on the whole input, as the single process refuses it
        for line in problem_lines(result.issues, "warning"):
            print(line, file=sys.stderr)
        return fail(failure_message(misplaced_input(path, str(path))
                                    or InputIssue(str(path), NO_RECORDS, kind="unusable")))
    parts = shard_manifest_parts(result, config)
    return write("qa", shard, n_shards, args.shard_seed, args.output_file,
                 input={"name": result.file, **digests, "patches": patch_digests(patches)},
                 n_items=parts["n_items"], assignment=parts["assignment"], config=config,
                 signature=parts["signature"], provenance=parts["provenance"], decision=parts["decision"],
                 keys=result.keys, columns=COLUMNS, rows=map(result_row, result.results),
                 extra={"issues": encode(result.issues),
                        "unusable": unusable_extra(path, str(path), args.predictions),
                        "gt_patches": patch_extra(patches)})


def _html(args: argparse.Namespace, report) -> str:
    """The self-contained HTML report of ``report`` (:func:`evaluators.reports.html.qa_report`, the QA page's
    "Download HTML report"), with the before / after section under ``--gt-patch``."""
    from evaluators.cli.patching import effect_of
    from evaluators.reports.html import qa_report

    return qa_report(report, corrections=effect_of(args, [report]))


def _run_one(args: argparse.Namespace, input_path: str) -> int:
    """Score one input file and print (or write) its report; returns the exit code."""
    from evaluators.parallel import keep_freed_memory, worker_count
    from evaluators.qa.run import QAInput, run_qa
    from evaluators.reports.format import number, percent
    from evaluators.reports.qa import (
        csv_rows,
        json_rows,
        record_rows,
        summary_csv,
        write_records_csv,
        write_report_json,
    )
    from evaluators.reports.tables import confusion_table, format_table, per_class_table

    path = Path(input_path)
    if not path.is_file():
        return fail(f"cannot read {path}: no such file")
    preds = None
    if args.predictions:
        try:
            preds = read_file_bytes(args.predictions)
        except OSError as exc:
            return fail(f"cannot read {args.predictions}: {exc.strerror or exc}")
    config = config_of(args)
    keep_freed_memory()  # a block of lines at a time: the same buffers again and again
    try:
        workers = worker_count(args.workers)
    except ValueError as exc:
        return fail(str(exc))
    out = Path(args.output_file) if args.output_file else None
    if out is not None and args.format != "table":
        file_format = args.format
    else:
        file_format = {".csv": "csv", ".html": "html", ".htm": "html"}.get(out.suffix.lower(), "json") if out else None
    as_csv, as_html = file_format == "csv", file_format == "html"
    to_stdout = out is None and args.format != "table"  # a script's output: the report alone on stdout
    try:  # rows are rendered while the records are scored (CSV straight to the file, JSON to a spool)
        out_file = open(out, "wb") if as_csv else None
    except OSError as exc:
        return fail(f"cannot write {out}: {exc.strerror or exc}")
    spool = capture = None
    if args.gt_patch:  # rows are written after the patch is applied, from the patched report
        sink = None
    elif args.log and out is None:  # the texts the registry keeps, taken while the records are scored
        from evaluators.qa.capture import RowCapture

        capture = RowCapture()
        sink = capture.sink()
    elif as_csv:
        sink = csv_rows(out_file)
    elif out is not None and not as_html:
        sink, spool = json_rows()
    else:
        sink = None
    try:
        result = run_qa(QAInput(path, predictions=preds, predictions_file=args.predictions), config,
                        workers=workers, rows=sink)
    except OSError as exc:
        return fail(f"cannot read {path}: {exc.strerror or exc}")
    finally:
        if out_file is not None:
            out_file.close()
    main = result.inputs[0]
    if main.report is not None:
        for line in problem_lines(main.report.issues, "warning"):
            print(line, file=sys.stderr)
    if not main.usable:
        if out_file is not None:
            out.unlink(missing_ok=True)  # nothing usable: no half-written rows
        from evaluators.qa.run import failure_message

        return fail(failure_message(main.failure))
    report = main.report
    if args.gt_patch:  # the scores below (and the output file) are after the review corrections
        patched, error = patch_runs(args, [report], [Path(path)])
        if error:
            return fail(error)
        report = patched[0]
    if args.log:  # the run as scored (after the corrections) into the registry, one run per system
        error = log_qa(args, path, report, config, capture=capture)
        if error:
            return fail(error)
    if to_stdout:
        if args.format == "html":
            sys.stdout.write(_html(args, report))
        elif args.format == "csv":
            write_records_csv(report, sys.stdout)
        else:
            corrections = corrections_for(args, [report])  # --gt-patch: the before / after section
            from evaluators.reports.corrections import corrections_jsonable
            write_report_json(report, sys.stdout,
                              **({} if corrections is None else {"gt_patch": corrections_jsonable(corrections)}))
        return EXIT_OK

    bar = "=" * 80
    print(bar)
    print("Configuration")
    print(f"  input:        {path}" + (f"  (predictions: {args.predictions})" if args.predictions else ""))
    print(f"  dataset:      {args.dataset or MISSING}")
    print(f"  task:         {report.task} ({report.task_reason})")
    gt_used = ", ".join(f"{k} x{v}" for k, v in report.gt_fields_used.items()) or MISSING
    pred_used = ", ".join(f"{k} x{v}" for k, v in report.pred_fields_used.items()) or MISSING
    print(f"  ground truth: {gt_used}")
    print(f"  prediction:   {pred_used}")
    if report.group_field:
        print(f"  group by:     {report.group_field}")
    script = (report.provenance.get("qa") or {}).get("script", "none")
    if script != "none":  # off by default; when on, named in the header as in the signature
        print(f"  script:       {script} (Traditional/Simplified conversion before scoring)")
    print(bar)
    print("Counts")
    print(f"  records read:          {report.n_records}")
    print(f"  scored:                {report.overall.n}")
    print(f"  lines skipped:         {sum(1 for i in report.issues if i.severity == 'error')}")
    print(f"  missing ground truth:  {len(report.missing_gt)}" +
          (f"  [{_ids(report.missing_gt, args.verbose)}]" if report.missing_gt else ""))
    print(f"  missing prediction:    {len(report.missing_prediction)} (scored 0)" +
          (f"  [{_ids(report.missing_prediction, args.verbose)}]" if report.missing_prediction else ""))
    if report.task == "factcheck":
        print(f"  unparsed predictions:  {len(report.unparsed_predictions)}" +
              (f"  [{_ids(report.unparsed_predictions, args.verbose)}]" if report.unparsed_predictions else ""))
        print(f"  unparsed ground truth: {len(report.gold_unparsed)} (not scored)" +
              (f"  [{_ids(report.gold_unparsed, args.verbose)}]" if report.gold_unparsed else ""))
    print(bar)
    print(f"Scores: {report.overall.aggregation}")
    print(f"  Exact Match (EM): {percent(report.overall.exact_match)}")
    print(f"  F1 Score:         {percent(report.overall.token_f1)}")
    o = report.overall
    if o.ci:
        print(f"  95% CI:           EM {percent(o.exact_match_ci_low)} - {percent(o.exact_match_ci_high)}, "
              f"F1 {percent(o.token_f1_ci_low)} - {percent(o.token_f1_ci_high)}  [{o.ci}]")
    if len(report.by_lang) > 1 or report.by_group:
        ci = percent_interval

        subsets = [(f"lang={k}", v) for k, v in report.by_lang.items()]
        subsets += [(f"{report.group_field}={k}", v) for k, v in report.by_group.items()]
        rows = [[name, v.n, percent(v.exact_match), ci(v.exact_match_ci_low, v.exact_match_ci_high), percent(v.token_f1),
                 ci(v.token_f1_ci_low, v.token_f1_ci_high)] for name, v in subsets]
        print()
        print(format_table(["subset", "n", "EM", "EM 95% CI", "F1", "F1 95% CI"], rows))
    cls = report.classification
    if cls is not None:
        print(bar)
        layout = "rows = true, columns = predicted" if args.rows == "true" else "rows = predicted, columns = true"
        print(f"Confusion matrix ({layout})")
        print(confusion_table(cls, args.rows))
        print(bar)
        print("Per-class metrics")
        print(per_class_table(cls))
        print()
        print(f"  Accuracy: {percent(cls.accuracy)}  ({cls.correct} of {cls.n})")
        ci = report.classification_ci
        if ci is not None:
            per_class = ", ".join(f"{lab} {percent(ci.f1_ci_low[lab])} - {percent(ci.f1_ci_high[lab])}"
                                  for lab in cls.labels if ci.f1_ci_low.get(lab) is not None)
            print(f"  95% CI: accuracy {percent(ci.accuracy_ci_low)} - {percent(ci.accuracy_ci_high)}, macro F1 "
                  f"{percent(ci.macro_f1_ci_low)} - {percent(ci.macro_f1_ci_high)}; F1 by class: {per_class}")
        kappa = number(cls.cohen_kappa, 4)
        print(f"  Cohen's kappa: {kappa}")
        skipped = cls.macro.n_skipped
        if skipped:
            print(f"  (macro averages skip {skipped} class(es) whose precision or recall is undefined)")
    if args.verbose:
        print(bar)
        print("Records")
        for row in record_rows(report):
            em, f1 = fixed(row["exact_match"], 2), fixed(row["token_f1"], 2)  # MISSING when not scored
            verdict = f"  {row['predicted_verdict']} vs {row['gold_verdict']}" if row["gold_verdict"] else ""
            print(f"  {row['id']}: [{row['status']}] EM {em} F1 {f1}{verdict}  "
                  f"pred={str(row['prediction'])[:60]!r} gold={row['gold_answers'][:60]!r}")
    corrections = corrections_for(args, [report])  # --gt-patch: the before / after table and JSON section
    if corrections is not None:
        print(bar)
        print_corrections(corrections, warn=False)  # apply_patches warned
    if args.script and report.task == "qa":
        from evaluators.qa.sensitivity import script_effect

        moved = script_effect({report.file: report.records}, args.script, args.lang)
        print(bar)
        print(f"Script conversion {args.script}: {len(moved)} record(s) scored differently than without it")
        for c in moved[:20 if not args.verbose else None]:
            print(f"  {c.id}: EM {c.exact_match_before:g} -> {c.exact_match_after:g}, "
                  f"F1 {fixed(c.token_f1_before, 2)} -> {fixed(c.token_f1_after, 2)} ({c.explanation[:60]})")
    print(bar)
    print(f"signature: {report.signature}")
    if out is not None:
        if as_html:
            out.write_text(_html(args, report), encoding="utf-8")
        elif spool is not None:
            with open(out, "w", encoding="utf-8") as f:
                write_report_json(report, f, spool=spool)
            spool.file.close()
        elif args.gt_patch:
            from evaluators.reports.corrections import corrections_jsonable
            with open(out, "w", encoding="utf-8", newline="") as f:
                if as_csv:
                    write_records_csv(report, f)
                else:
                    write_report_json(report, f, gt_patch=corrections_jsonable(corrections))
        print(f"report written to {out}")
    if args.summary_csv:
        Path(args.summary_csv).write_text(summary_csv(report), encoding="utf-8")
        print(f"summary written to {args.summary_csv}")
    return EXIT_OK
