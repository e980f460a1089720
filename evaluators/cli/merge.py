"""``python -m evaluators merge SHARD_FILES...``: the report of a run scored in shards (``qa --shard i/N``,
``narrative GT PRED --shard i/N``, ``memory ... --shard i/N``, ``testsets ... --shard i/N``,
``dialogue ... --shard i/N``, ``compare ... --shard i/N``).

The shard files are checked to be one complete run (:func:`evaluators.shards.check_shards`): mixed manifests,
a missing or repeated shard, an id in two shards, or shards that do not add up to the run are refused with
exit 2, naming the files.  Then every aggregate and interval (and for ``compare`` the paired tests and rank
flips) is computed once on the pooled per-item values by the single-process run's code, and the report is
written by the single-process writer: it equals the command's ``--format json`` output (``narrative GT PRED
--format json --whole-batch``; ``dialogue``: apart from its timestamp).

The refusals the single-process run makes on its whole input are made here, on the pooled whole, with the same
message and exit code (:class:`Refused`): ``qa`` and ``compare`` refuse an input with no record, no ground truth
or no prediction for any record (one shard may hold none while the whole has them); ``memory --cache`` a judge
cache that cannot be read or holds none of the questions; ``narrative`` writes the report and exits 2 when no
pair could be scored; a GT patch that applies to none of the inputs is refused as the command refuses it.

Exit codes: 0 success; 2 unusable shard files, or a run the single process refuses (the reason on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NamedTuple, TextIO

from evaluators.cli.common import EXIT_OK, Positional, add_positionals, fail

#: Commands whose shard files this command merges.
MERGEABLE = ("qa", "narrative", "memory", "testsets", "dialogue", "compare")


class Refused(Exception):
    """The pooled run is one the single process refuses: the message is the command's own (exit 2, no report)."""


class Merged(NamedTuple):
    """A task's merged report: ``write(out)`` writes it, ``n`` items, and ``refusal``: the message of a run the
    single process reports and then refuses (exit 2 after the report is written), else ``None``."""

    write: Callable[[TextIO], None]
    n: int
    refusal: str | None = None


def add_parser(subparsers) -> None:
    """Register the ``merge`` subcommand."""
    p = subparsers.add_parser(
        "merge",
        help="merge the shard files of a run scored with --shard i/N into its report (checked: one run, every "
             "shard once, no id twice)",
        description="Merge the shard files written by 'qa FILE --shard i/N --output-file SHARD' (or 'narrative GT "
                    "PRED --shard i/N --out SHARD', 'memory ... --shard i/N --out SHARD', 'testsets ITEMS ANSWERS "
                    "--shard i/N --output-file SHARD', 'dialogue CASES PRED... --shard i/N --out SHARD', 'compare "
                    "FILE... --shard i/N --output-file SHARD') into the report of the whole input: the same JSON as "
                    "the command's --format json ('narrative GT PRED --format json --whole-batch'; dialogue: apart "
                    "from its timestamp), every aggregate, interval, paired test and rank flip computed once on the "
                    "pooled items with the run's seed. Refuses (exit 2) shard files of different runs, a missing or "
                    "repeated shard and ids found in two shards.",
    )
    add_positionals(p, Positional("shards", "SHARD_FILE", "--shard-file", many=True,
                                  help="the shard files, one per shard, in any order"))
    p.add_argument("--shard-file", dest="shards", action="append", metavar="FILE",
                   help="a shard file (the same as SHARD_FILE; repeatable)")
    p.add_argument("--output-file", "--output_file", dest="output_file", metavar="FILE",
                   help="write the merged report here (default: standard output)")
    p.add_argument("--format", choices=("json", "csv"), default="json",
                   help="json (default: the report, as the command's --format json) or csv (qa: one row per "
                        "record; narrative: every mismatch; memory: one row per question; testsets: per item or "
                        "turn; dialogue: the annotation rows; compare: records x systems)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check and merge the shard files; returns the exit code."""
    from evaluators.io import InputError
    from evaluators.io.typed_json import CodecError
    from evaluators.shards import ShardError, check_shards, read_shard

    try:
        files = check_shards([read_shard(p) for p in args.shards])
    except ShardError as exc:
        return fail(str(exc))
    first = files[0]
    command = first.manifest["command"]
    if command not in MERGEABLE:
        return fail(f"{first.path}: shards of '{command}' cannot be merged (only {', '.join(MERGEABLE)})")
    from evaluators.io.gt_patch import GTPatchMismatch

    try:
        merged = {"qa": _qa, "narrative": _narrative, "memory": _memory, "testsets": _testsets,
                  "dialogue": _dialogue, "compare": _compare}[command](files, args.format)
    except (Refused, GTPatchMismatch) as exc:  # refused as the single process refuses the whole run
        return fail(str(exc))
    except CodecError as exc:
        return fail(f"{first.path}: the manifest's settings or issues do not decode ({exc})")
    except InputError as exc:  # a GT patch carried by the shards that does not read
        return fail(str(exc))
    except (ValueError, TypeError, KeyError) as exc:
        return fail(f"the shard files {', '.join(f.path for f in files)} do not make a report: {exc}")
    del files  # the report keeps the rows it needs
    if args.output_file:
        try:
            with open(args.output_file, "w", encoding="utf-8", newline="") as out:
                merged.write(out)
        except OSError as exc:
            return fail(f"cannot write {args.output_file}: {exc.strerror or exc}")
        print(f"merged {first.manifest['shards']} shards ({merged.n} items) into {args.output_file}", file=sys.stderr)
    else:
        merged.write(sys.stdout)
    return fail(merged.refusal) if merged.refusal else EXIT_OK


def _qa(files, fmt: str):
    """The :class:`Merged` writer of the merged QA report (``qa --format json|csv``'s text) and its record
    count."""
    from functools import partial

    from evaluators.io.typed_json import decode
    from evaluators.qa.shards import merged_refusal, merged_report
    from evaluators.reports.format import problem_lines
    from evaluators.reports.qa import write_records_csv, write_report_json

    first = files[0]
    report = merged_report(first.manifest["input"]["name"], first.config(), first.manifest["decision"],
                           decode(first.extra.get("issues", {"$tuple": []})), first.columns, [f.rows for f in files])
    for line in problem_lines(report.issues, "warning"):  # the input's reading problems, as 'qa' warns of them
        print(line, file=sys.stderr)
    refusal = merged_refusal(report, report.config, first.extra.get("unusable"))
    if refusal:
        raise Refused(refusal)
    patches = first.extra.get("gt_patches") or []
    if not patches:
        return Merged(partial(write_records_csv if fmt == "csv" else write_report_json, report), report.n_records)
    # qa --gt-patch: the pooled report patched as one process patches its report, with the same before / after
    from evaluators.cli.patching import EFFECT_RESAMPLES
    from evaluators.io.gt_patch import GTPatchSet
    from evaluators.qa.patch import patch_reports, qa_corrections
    from evaluators.reports.corrections import corrections_jsonable

    names = [p["name"] for p in patches]
    patch_set = GTPatchSet.read([(name, decode(p["data"])) for name, p in zip(names, patches)])
    patched, applications = patch_reports([report], [(report.file, first.manifest["input"]["gt_digest"])], patch_set)
    for line in problem_lines([i for _, app in applications for i in app.issues], "warning"):
        print(line, file=sys.stderr)
    if fmt == "csv":
        return Merged(partial(write_records_csv, patched[0]), report.n_records)
    resamples = report.config.ci_resamples
    corrections = qa_corrections([report], patched, applications, names,
                                 n_resamples=resamples if resamples > 0 else EFFECT_RESAMPLES, seed=0)
    return Merged(partial(write_report_json, patched[0], gt_patch=corrections_jsonable(corrections)), report.n_records)


def _narrative(files, fmt: str):
    """The merged narrative batch report (``narrative --format json --whole-batch``'s text; csv: every mismatch),
    its pair count and, when no pair could be scored, narrative's refusal."""
    from functools import partial

    from evaluators.cli.narrative import write_report
    from evaluators.io.typed_json import decode
    from evaluators.narrative.settings import build_config
    from evaluators.narrative.shards import merged_report
    from evaluators.reports.narrative import mismatches_csv, to_json

    first = files[0]
    settings = build_config(**first.config())
    extra = first.extra
    patches = _patch_set(first)
    report = merged_report(settings, first.columns, [row for f in files for row in f.values()],
                           issues=decode(extra["issues"]), unpaired_gt=extra["unpaired_gt"],
                           unpaired_pred=extra["unpaired_pred"],
                           patched=None if patches is None else (patches, decode(extra["patched"])))
    text = mismatches_csv(report) if fmt == "csv" else to_json(report)
    # byte for byte what 'narrative' writes (its writer); then, as there, a batch none of whose pairs could be
    # scored exits 2 after its report
    return Merged(partial(write_report, text), len(report.documents),
                  None if report.scored else "no pair could be scored")


def _memory(files, fmt: str):
    """The :class:`Merged` writer of the merged memory report (``memory --format json``'s text; csv: one row per
    question, as ``memory --format csv``) and its question count."""
    from evaluators.memory.shards import merged_report
    from evaluators.reports.memory import questions_csv, report_json

    from dataclasses import replace

    first = files[0]
    config = replace(first.config(), gt_patch=_patch_set(first))
    report = merged_report(config, first.manifest["decision"], first.extra, first.columns,
                           [row for f in files for row in f.values()])
    if config.judge_store:  # memory --cache: read only, refused as the single process refuses it
        from evaluators.cli.memory import cache_refusal

        refusal = cache_refusal(report, report.inputs.results, config.judge_store)
        if refusal:
            raise Refused(refusal)
    text = questions_csv(report.rows, report.results) if fmt == "csv" else report_json(report)
    return Merged(lambda out: out.write(text), len(report.rows))


def _testsets(files, fmt: str):
    """The :class:`Merged` writer of the merged test-set report (``testsets --format json``'s text; csv: one row
    per item or turn, as ``testsets --format csv``) and its item count."""
    from evaluators.reports.testsets import report_csv, report_json
    from evaluators.testsets.shards import merged_report

    first = files[0]
    run = merged_report(first.extra, first.columns, [row for f in files for row in f.values()],
                        gt_patch=_patch_set(first), gt_digest=first.manifest["input"]["gt_digest"])
    text = report_csv(run.scores) if fmt == "csv" else report_json(run) + "\n"
    return Merged(lambda out: out.write(text), first.manifest["n_items"])


def _dialogue(files, fmt: str):
    """The :class:`Merged` writer of the merged persona report (``dialogue --format json``'s text; csv: the
    human-annotation rows, as ``dialogue --format csv``) and its reply count."""
    from evaluators.dialogue.shards import merged_report
    from evaluators.io.typed_json import decode
    from evaluators.reports.dialogue import annotation_csv, json_report_text

    first = files[0]
    patches = _patch_set(first)
    patched = None if patches is None else (decode(first.extra["cases"]), patches, decode(first.extra["plan_after"]))
    evaluation = merged_report(decode(first.extra["plan"]), first.columns, [row for f in files for row in f.values()],
                               patched=patched)
    text = annotation_csv(evaluation) if fmt == "csv" else json_report_text(evaluation) + "\n"
    return Merged(lambda out: out.write(text), len(evaluation.results))


def _compare(files, fmt: str):
    """The :class:`Merged` writer of the merged comparison (``compare --format json``'s text; csv: the records
    x systems matrix) and its record count: every run's report rebuilt from the pooled records, then the
    side-by-side scores and the paired tests computed once (:func:`evaluators.cli.compare.comparison_of`)."""
    from evaluators.cli.compare import _comparison_text, comparison_of
    from evaluators.io.typed_json import decode
    from evaluators.qa.run import QAInputResult, QARun
    from evaluators.qa.shards import merged_compare_reports, merged_refusal
    from evaluators.reports.format import problem_lines

    first = files[0]
    config, decision, extra = first.config(), first.manifest["decision"], first.extra
    reports = merged_compare_reports(extra["files"], config, decision["inputs"], decode(extra["issues"]),
                                     first.columns, [row for f in files for row in f.values()])
    outcomes = []
    carried = extra.get("unusable") or [{"label": r.file, "predictions_file": f, "misplaced": None}
                                        for r, f in zip(reports, extra["predictions_files"])]
    for report, unusable in zip(reports, carried):  # as load_runs: each input's warnings, the first refusal
        for line in problem_lines(report.issues, "warning"):
            print(line, file=sys.stderr)
        refusal = merged_refusal(report, config, unusable)
        if refusal:
            raise Refused(refusal)
        outcomes.append(QAInputResult(report.file, report, None))
    result = QARun(config, tuple(outcomes))
    settings = decision["compare"]
    patches = extra.get("gt_patches") or []
    if patches:  # compare --gt-patch: the pooled reports patched as one process patches them
        from evaluators.io.gt_patch import GTPatchSet
        from evaluators.qa.patch import patch_reports, with_reports

        names = [p["name"] for p in patches]
        patch_set = GTPatchSet.read([(name, decode(p["data"])) for name, p in zip(names, patches)])
        gt = list(zip(extra["gt_files"], first.manifest["input"]["gt_digest"]))
        patched, applications = patch_reports(reports, gt, patch_set)
        for line in problem_lines([i for _, app in applications for i in app.issues], "warning"):
            print(line, file=sys.stderr)
        result = with_reports(result, patched)
    compared = comparison_of(result, settings["a"], settings["b"], settings["n_resamples"], settings["seed"])
    if isinstance(compared, str):  # fewer than two runs, an unknown system ...: compare's own refusal
        raise Refused(compared)
    names, _, _, view, comparison = compared
    corrections = None
    if patches:  # the before / after section: paired tests and rank flips once, on the pooled records
        from evaluators.cli.patching import EFFECT_RESAMPLES
        from evaluators.qa.patch import qa_corrections

        resamples = settings["n_resamples"]
        corrections = qa_corrections(reports, result.reports, list(applications), [p["name"] for p in patches],
                                     n_resamples=resamples if resamples > 0 else EFFECT_RESAMPLES,
                                     seed=settings["seed"] or 0)
    text = _comparison_text("csv" if fmt == "csv" else "json", view, comparison, result.signature, names,
                            corrections)
    return Merged(lambda out: out.write(text), first.manifest["n_items"])


def _patch_set(first):
    """The GT patch files a shard file carries (``extra.gt_patches``), read as one set; ``None`` without any."""
    from evaluators.io.gt_patch import GTPatchSet
    from evaluators.io.typed_json import decode

    patches = first.extra.get("gt_patches") or []
    return GTPatchSet.read([(p["name"], decode(p["data"])) for p in patches]) if patches else None
