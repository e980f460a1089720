"""``python -m evaluators narrative``: score JSON v3 files or folders from the command line.

``--gt-patch FILE`` (repeatable) applies review corrections of the story GT files
(:mod:`evaluators.narrative.patch`): the table is the run after them, followed by what each patch did
and the overall and component scores before and after; the JSON report gets ``gt_patch``, the HTML
and Markdown reports a section.  A patch with no line for the GT files given is an error (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from evaluators.cli.common import EXIT_INPUT, Positional, add_positionals, fail
from evaluators.cli.patching import add_gt_patch_argument
from evaluators.io.sources import read_file_bytes
from evaluators.parallel import add_workers_argument
from evaluators.reports.format import problem, problem_lines

FORMATS = ("json", "md", "csv", "html")


def add_parser(subparsers) -> None:
    """Register the ``narrative`` subcommand."""
    p = subparsers.add_parser(
        "narrative",
        help="score JSON v3 narrative annotations (characters, relationships, sentiment, action layer, spans)",
        description="Score predicted JSON v3 narrative annotations against ground truth: evalboard narrative GT "
                    "PRED. Each is a file, a folder or a .zip; files are paired by story id (the name without _v2, "
                    "_v3, _prediction, _pred).",
    )
    add_positionals(p, Positional("gt", "GT", "--gt", help="ground-truth JSON v3 file, folder or zip"),
                    Positional("pred", "PRED", "--pred", help="prediction file, folder or zip"))
    p.add_argument("--gt", metavar="PATH", help="ground-truth file, folder or zip (the same as GT)")
    p.add_argument("--pred", metavar="PATH", help="prediction file, folder or zip (the same as PRED)")
    p.add_argument("--out", metavar="FILE", help="write the report here (format from --format or the extension)")
    p.add_argument("--format", choices=FORMATS, help="without --out: print this report instead of the table (alone on "
                                                     "stdout, for scripts; the table goes to stderr); with --out: the "
                                                     "file's format (default from its extension, else json). json, md, "
                                                     "csv (every mismatch) or html (self-contained)")
    p.add_argument("--other-pred", dest="other_pred", action="append", default=[], metavar="PATH",
                   help="another system's predictions of the same stories (file, folder or zip), repeatable: scored "
                        "with the same settings and compared (--systems-csv, --comparison-html; the page's Compare "
                        "view); each is named after its file name")
    p.add_argument("--systems-csv", dest="systems_csv", metavar="FILE",
                   help="write the documents x systems CSV (every system's overall and component scores per story)")
    p.add_argument("--comparison-html", dest="comparison_html", metavar="FILE",
                   help="write the systems side by side with the paired test of the first two, as one "
                        "self-contained HTML file (needs --other-pred)")
    p.add_argument("--whole-batch", dest="whole_batch", action="store_true",
                   help="write the whole batch's report even for one document pair (the page's 'Whole batch' "
                        "downloads); by default one pair gets its own document's report")
    p.add_argument("--min-iou", type=float, default=0.5, help="minimum span IoU to align two events (default 0.5)")
    p.add_argument("--n-t", type=int, default=2, help="near-miss tolerance of boundary similarity (default 2)")
    p.add_argument("--weights", metavar="C=W,...",
                   help="component weights, e.g. characters=2,text_span=0 (others keep 1)")
    p.add_argument("--relationship-taxonomy", metavar="CSV", help="relationship vocabulary in the guide's layout")
    p.add_argument("--sentiment-taxonomy", metavar="CSV", help="sentiment vocabulary in the guide's layout")
    from evaluators.text.script import SCRIPT_CONFIGS  # a tuple of names: no OpenCC import

    p.add_argument("--script", choices=SCRIPT_CONFIGS, default=None, metavar="CONFIG",
                   help="convert GT and prediction (names, texts, span texts, labels) with this OpenCC configuration "
                        "before comparing them (off by default; tw2s, t2s, s2t, ...; t2s keeps 著 where tw2s gives "
                        "着); spans stay in the original text's offsets; named in the signature")
    add_gt_patch_argument(p, help="review corrections of the story GT files (a GT patch, JSONL, as 'review patch' "
                          "writes it from a narrative session); repeatable, applied in order; each line applies to "
                          "the GT file it was made for (by SHA-256), a line for no GT file given is skipped with a "
                          "warning, a patch with no line for them is refused. Prints the overall and component "
                          "scores before and after with bootstrap intervals (documents resampled) and a paired test")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_workers_argument(p)
    from evaluators.cli.runlog import add_log_arguments

    add_log_arguments(p)
    from evaluators.cli.sharding import add_shard_arguments

    add_shard_arguments(p, "document pairs", "--out",
                        "--log, --other-pred, --systems-csv, --comparison-html or --format other than json")
    p.set_defaults(func=run)



def _choices(args) -> dict:
    """The keyword arguments of :func:`evaluators.narrative.settings.build_config` the options give (taxonomy
    files read: a shard's manifest keeps them, so a merge builds the same settings)."""
    from evaluators.narrative.settings import TaxonomyFile, parse_weights

    try:
        weights = parse_weights(args.weights)
    except ValueError as exc:
        raise ValueError(f"--weights: {exc}") from None
    files = {}
    for key, path in (("relationship_taxonomy", args.relationship_taxonomy),
                      ("sentiment_taxonomy", args.sentiment_taxonomy)):
        if path:
            files[key] = TaxonomyFile(Path(path).name, read_file_bytes(path))
    return {"min_iou": args.min_iou, "n_t": args.n_t, "weights": weights, "script": args.script, **files}


def _settings(args):
    """The narrative settings of the options (:func:`evaluators.narrative.settings.build_config`)."""
    from evaluators.narrative.settings import build_config

    return build_config(**_choices(args))


def _run_shard(args, settings, workers: int) -> int:
    """``narrative GT PRED --shard i/N --out FILE``: score one shard's pairs and write its shard file."""
    from dataclasses import replace

    from evaluators.cli.patching import patches_of
    from evaluators.cli.runlog import path_digest
    from evaluators.cli.sharding import begin, patch_digests, patch_extra, patch_files, write
    from evaluators.io.typed_json import encode
    from evaluators.narrative.run import NarrativeInputs
    from evaluators.narrative.shards import COLUMNS, score_shard, shard_rows

    where = begin(args, (("--other-pred", args.other_pred), ("--log", args.log), ("--systems-csv", args.systems_csv),
                         ("--comparison-html", args.comparison_html),
                         ("--format " + str(args.format), args.format not in (None, "json"))), args.out)
    if isinstance(where, int):
        return where
    shard, n_shards = where
    patch_set, error = patches_of(args)  # applied by 'merge' to the pooled runs: the files travel in the shard
    if error:
        return fail(error)
    try:
        inputs = replace(NarrativeInputs.from_paths(args.gt, args.pred), gt_patch=patch_set)
        digests = {"gt_digest": path_digest(args.gt), "predictions_digest": path_digest(args.pred)}
        choices = _choices(args)
        patches = patch_files(args.gt_patch)
        result = score_shard(inputs, settings, shard, n_shards, args.shard_seed, workers=workers)
    except (OSError, ValueError) as exc:  # GTPatchMismatch is a ValueError
        return fail(str(exc))
    if not result.n_pairs:
        return fail(_no_pair(result.unpaired_gt, result.unpaired_pred))
    return write("narrative", shard, n_shards, args.shard_seed, args.out,
                 input={"name": str(args.pred), "gt_name": str(args.gt), **digests,
                        "patches": patch_digests(patches)},
                 n_items=result.n_pairs, assignment=result.assignment, config=choices,
                 signature=settings.config.signature, provenance={"script": args.script},
                 decision={"single_pair": inputs.single_pair}, keys=result.keys, columns=COLUMNS,
                 rows=shard_rows(result),
                 extra={"issues": encode(result.issues), "unpaired_gt": result.unpaired_gt,
                        "unpaired_pred": result.unpaired_pred, "patched": encode(result.patched),
                        "gt_patches": patch_extra(patches)})


def write_report(text: str, out: TextIO) -> None:
    """Write a narrative report as ``narrative`` writes it, the one writer of the command and of ``merge``: into a
    file (``--out``, ``merge --output-file``) the report's text as the report writer gives it; printed on standard
    output ended by a newline (the table's and the JSON's last line, as ``print`` ends it).

    Parameters
    ----------
    text : str
        The report (:func:`evaluators.reports.narrative.to_json`, ``batch_json``, ``to_markdown`` ...).
    out : text file
        An open file, or ``sys.stdout`` (as it is when called: a captured stdout is stdout too).
    """
    out.write(text if out is not sys.stdout or text.endswith("\n") else text + "\n")


def _no_pair(unpaired_gt, unpaired_pred) -> str:
    """The refusal of a batch without a ground-truth/prediction pair, naming the files that found no partner (the
    single process and a shard, which pairs the whole input, say it alike)."""
    msg = "no ground-truth/prediction pair found"
    if unpaired_gt or unpaired_pred:
        msg += (f" (GT files: {', '.join(unpaired_gt) or 'none'}; prediction files: "
                f"{', '.join(unpaired_pred) or 'none'}; files are paired by story id)")
    return msg


def _table(batch) -> str:
    from evaluators.narrative.base import COMPONENTS
    from evaluators.reports.format import number as fmt
    from evaluators.reports.tables import format_table

    head = ["document", "overall", "chars", "rels", "sent", "action", "spans", "events g/p/aligned"]
    rows = []
    for d in batch.documents:
        if d.result is None:
            rows.append([d.story_id, "error", *[""] * 5, d.error.message if d.error else ""])
            continue
        r = d.result
        s = r.summary
        rows.append([d.story_id, fmt(r.overall_score), *[fmt(r.component_scores[c]) for c in COMPONENTS],
                     f"{s.total_events_ground_truth}/{s.total_events_predicted}/{s.events_aligned}"])
    if batch.micro:
        for name, agg in (("micro", batch.micro), ("macro", batch.macro)):
            rows.append([f"[{name}]", fmt(agg["overall_score"]),
                         *[fmt(agg["component_scores"][c]) for c in COMPONENTS], ""])
    return format_table(head, rows)


def run(args) -> int:
    """Score, print a table on stdout, write the report; 2 on unusable input."""
    from dataclasses import replace

    from evaluators.io.gt_patch import GTPatchMismatch
    from evaluators.narrative.run import NarrativeInputs, run_narrative
    from evaluators.parallel import worker_count
    from evaluators.reports.narrative import (
        BatchJsonWriter,
        batch_json,
        document_entry_json,
        document_json,
        mismatches_csv,
        to_json,
        to_markdown,
    )

    try:
        settings = _settings(args)
        workers = worker_count(args.workers)
    except (OSError, ValueError) as exc:
        return fail(str(exc))
    for line in problem_lines(settings.issues):
        print(line, file=sys.stderr)
    if settings.has_errors:
        return EXIT_INPUT
    if args.shard:
        return _run_shard(args, settings, workers)
    from evaluators.cli.patching import patches_of

    patches, error = patches_of(args)
    if error:
        return fail(error)
    bar = None
    if not args.quiet and sys.stderr.isatty():
        from tqdm import tqdm
        bar = tqdm(total=0, unit="doc", file=sys.stderr, desc="scoring")

    def progress(done, total, sid):
        if bar is not None:
            bar.total = total
            bar.set_postfix_str(sid[:30])
            bar.update(1)

    fmt_name = None
    if args.out or args.format:
        fmt_name = args.format or {".md": "md", ".csv": "csv", ".html": "html", ".htm": "html"}.get(
            Path(args.out).suffix.lower(), "json")
    # A JSON report's documents are written by the processes that score them (render) and, with --out,
    # streamed into a file beside the target while the rest is scored (moved into place at the end).
    render = document_entry_json if fmt_name == "json" else None
    stream = partial_path = None
    if render is not None and args.out:
        partial_path = Path(args.out).with_name(Path(args.out).name + ".partial")
        try:
            stream = partial_path.open("w", encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write {args.out}: {exc.strerror or exc}")
    writer = BatchJsonWriter(stream) if stream is not None else None
    streamed = False
    try:
        inputs = NarrativeInputs.from_paths(args.gt, args.pred)
        if patches is not None:
            inputs = replace(inputs, gt_patch=patches)
        batch = run_narrative(inputs, settings, progress=progress,
                              workers=workers, render=render, on_document=writer.document if writer else None)
        if writer is not None:
            writer.finish(batch)
            streamed = True
    except (FileNotFoundError, GTPatchMismatch) as exc:
        return fail(str(exc))
    finally:
        if bar is not None:
            bar.close()
        if stream is not None:
            stream.close()
            if not streamed:  # a path not found, or an error while scoring: no half-written report is left
                partial_path.unlink(missing_ok=True)
    # files not read (archive limits, unreadable members, too large): say so first
    for line in problem_lines([i for i in batch.issues if i.kind == "archive"]):
        print(line, file=sys.stderr)
    if not batch.documents:
        if partial_path is not None:
            partial_path.unlink(missing_ok=True)
        return fail(_no_pair(batch.unpaired_gt, batch.unpaired_pred))
    alone = fmt_name is not None and not args.out  # a report printed on stdout (--format, no --out) is alone there
    print(_table(batch), file=sys.stderr if alone else sys.stdout)
    if batch.corrections is not None:
        from evaluators.cli.patching import print_corrections

        for issue in batch.issues:  # patch lines for no GT file of this run
            if issue.kind == "gt_patch":
                print(problem(issue, "warning"), file=sys.stderr)
        print_corrections(batch.corrections, sys.stderr if alone else sys.stdout)
    for issue in batch.issues:
        if issue.kind == "pairing" and "ignored" in issue.message:
            print(f"warning: {issue.file}: {issue.message}", file=sys.stderr)
    for name in batch.unpaired_gt:
        print(f"unpaired GT file: {name}", file=sys.stderr)
    for name in batch.unpaired_pred:
        print(f"unpaired prediction file: {name}", file=sys.stderr)
    for d in batch.documents:
        if d.error:
            print(f"unreadable: {d.error.location()}: {d.error.message}", file=sys.stderr)
        for enc_side, enc in d.encodings.items():
            if enc and enc != "utf-8":
                print(f"note: {d.gt_file if enc_side == 'gt' else d.pred_file} decoded as {enc}", file=sys.stderr)
    counts = batch.problem_counts()
    if counts["input_errors"] or counts["input_warnings"] or counts["scoring_notes"]:
        print(f"input problems: {counts['input_errors']} errors, {counts['input_warnings']} warnings; "
              f"pairs not scored: {counts['pairs_not_scored']}; scoring notes: {counts['scoring_notes']} "
              "(offset repairs, pairs without text evidence, labels outside the taxonomy): see the report",
              file=sys.stderr)
    print(batch.signature, file=sys.stderr)
    batches = None  # every system's batch, scored once for --log and the comparison outputs
    if batch.documents and (args.log or args.systems_csv or args.comparison_html):
        batches, error = _batches(args, batch, inputs, settings, workers)
        if error:
            return fail(error)
    if args.log and batch.documents:
        code = _log(args, batches, settings)
        if code:
            return code
    if fmt_name is not None:
        # one document: its own report, unless review corrections were applied (the batch report holds them)
        single = not args.whole_batch and len(batch.documents) == 1 and batch.scored and batch.corrections is None
        target = batch.scored[0] if single else batch
        if target is batch and partial_path is not None:
            text = None  # streamed already
        elif fmt_name == "html":
            from evaluators.reports.html import narrative_report
            text = narrative_report(batch)
        elif fmt_name == "json" and target is batch:
            text = batch_json(batch)  # from the entries the workers wrote
        elif fmt_name == "json":
            text = document_json(batch.documents[0])
        else:
            text = {"json": to_json, "md": to_markdown, "csv": mismatches_csv}[fmt_name](target)
        if args.out:
            if text is None:
                partial_path.replace(args.out)
            else:
                with open(args.out, "w", encoding="utf-8") as out:
                    write_report(text, out)
                if partial_path is not None:
                    partial_path.unlink(missing_ok=True)
            print(f"wrote {fmt_name} report to {args.out}", file=sys.stderr)
        else:
            write_report(text, sys.stdout)
    if args.systems_csv or args.comparison_html:
        code = _write_comparison(args, batch, batches)
        if code:
            return code
    if not batch.scored:
        return fail("no pair could be scored")
    return 0


def _log(args, batches, settings) -> int:
    """``--log``: the batch and each ``--other-pred`` set as one run per system (named as the Compare view names
    them, :func:`~evaluators.narrative.batch.system_labels`), the settings as ``config``, the dataset the GT file
    or folder; a pair of single files scored with the shipped taxonomy is kept for re-scoring.  The exit code."""
    import dataclasses

    from evaluators.cli.runlog import log_files, log_several
    from evaluators.tasks.builtin import narrative_run_result

    c = settings.config
    config = {"min_iou": c.min_iou, "n_t": c.n_t, "correct_iou": c.correct_iou, "weights": dict(c.weights),
              "script": c.script}
    entries = []
    for (name, scored), pred in zip(batches.items(), [args.pred, *args.other_pred]):
        result = dataclasses.replace(narrative_run_result(scored, name), config=config)
        kept = None
        if all(Path(p).is_file() and Path(p).suffix.lower() == ".json" for p in (args.gt, pred)) \
                and not (args.relationship_taxonomy or args.sentiment_taxonomy):
            try:
                kept = {role: (Path(p).name, read_file_bytes(p)) for role, p in (("gt", args.gt), ("pred", pred))}
            except OSError as exc:
                return fail(f"cannot log the run: {exc.strerror or exc}")
        entries.append((result, {"gt": args.gt, "predictions": [pred], "inputs": kept}))
    if len(entries) == 1:
        error = log_files(args, entries[0][0], **entries[0][1])
    else:
        error = log_several(args, entries, log=log_files)
    return fail(error) if error else 0


def _batches(args, batch, inputs, settings, workers: int):
    """The batch and each ``--other-pred`` set scored with the same GT, settings and corrections, by system name
    (:func:`~evaluators.narrative.batch.system_labels`); ``(batches, error or None)``."""
    from dataclasses import replace

    from evaluators.io.sources import system_name
    from evaluators.narrative.batch import system_labels
    from evaluators.narrative.run import NarrativeInputs, run_narrative

    names = system_labels(system_name([args.pred]), [Path(p).name for p in args.other_pred])
    batches = {names[0]: batch}
    for name, path in zip(names[1:], args.other_pred):
        try:
            other = replace(NarrativeInputs.from_paths(args.gt, path), gt_patch=inputs.gt_patch)
            batches[name] = run_narrative(other, settings, workers=workers)
        except (FileNotFoundError, ValueError) as exc:  # a path not found; GTPatchMismatch is a ValueError
            return None, str(exc)
    return batches, None


def _write_comparison(args, batch, batches) -> int:
    """``--systems-csv`` / ``--comparison-html``: the batch and each ``--other-pred`` set (the same GT, settings
    and corrections), named by :func:`~evaluators.narrative.batch.system_labels`, written as the page's Compare
    view writes them; the exit code."""
    from evaluators.narrative.batch import compare_two_systems, systems_matrix
    from evaluators.reports.html import narrative_comparison_report
    from evaluators.reports.narrative import systems_csv

    if args.comparison_html and not args.other_pred:
        return fail("--comparison-html compares systems: give the others with --other-pred")
    names = list(batches)
    try:
        if args.systems_csv:
            Path(args.systems_csv).write_text(systems_csv(systems_matrix(batches), batch.signature),
                                              encoding="utf-8", newline="")
            print(f"wrote documents x systems CSV to {args.systems_csv}", file=sys.stderr)
        if args.comparison_html:
            try:
                paired = compare_two_systems(batches, names[0], names[1])
            except ValueError as exc:  # no story both scored: the report says so, without the test
                print(f"warning: {exc}", file=sys.stderr)
                paired = None
            Path(args.comparison_html).write_text(narrative_comparison_report(batches, paired), encoding="utf-8")
            print(f"wrote comparison HTML to {args.comparison_html}", file=sys.stderr)
    except OSError as exc:
        return fail(f"cannot write {exc.filename}: {exc.strerror or exc}")
    return 0
