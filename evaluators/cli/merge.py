"""``python -m evaluators merge SHARD_FILES...``: the report of a run scored in shards (``qa --shard i/N``).

The shard files are checked to be one complete run (:func:`evaluators.shards.check_shards`): mixed manifests,
a missing or repeated shard, an id in two shards, or shards that do not add up to the run are refused with
exit 2, naming the files.  Then every aggregate and interval is computed once on the pooled per-item values
by the single-process run's code, and the report is written by the single-process writer: it equals
``qa --input FILE --format json``.

Exit codes: 0 success; 2 unusable shard files (the reason on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluators.cli.common import EXIT_OK, Positional, add_positionals, fail

#: Commands whose shard files this command merges.
MERGEABLE = ("qa",)


def add_parser(subparsers) -> None:
    """Register the ``merge`` subcommand."""
    p = subparsers.add_parser(
        "merge",
        help="merge the shard files of a run scored with --shard i/N into its report (checked: one run, every "
             "shard once, no id twice)",
        description="Merge the shard files written by 'qa --shard i/N --output-file FILE' into the report of the "
                    "whole input: the same JSON as 'qa --input FILE --format json'. Refuses (exit 2) shard files "
                    "of different runs, a missing or repeated shard and ids found in two shards.",
    )
    add_positionals(p, Positional("shards", "SHARD_FILE", "--shard-file", many=True,
                                  help="the shard files, one per shard, in any order"))
    p.add_argument("--shard-file", dest="shards", action="append", metavar="FILE",
                   help="a shard file (the same as SHARD_FILE; repeatable)")
    p.add_argument("--output-file", "--output_file", dest="output_file", metavar="FILE",
                   help="write the merged report here (default: standard output)")
    p.add_argument("--format", choices=("json", "csv"), default="json",
                   help="json (default: the report, as 'qa --format json') or csv (one row per record)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check and merge the shard files; returns the exit code."""
    from evaluators.io.typed_json import CodecError, decode
    from evaluators.shards import ShardError, check_shards, read_shard

    try:
        files = check_shards([read_shard(p) for p in args.shards])
    except ShardError as exc:
        return fail(str(exc))
    first = files[0]
    command = first.manifest["command"]
    if command not in MERGEABLE:
        return fail(f"{first.path}: shards of '{command}' cannot be merged yet (only {', '.join(MERGEABLE)})")
    try:
        config = first.config()
        issues = decode(first.extra.get("issues", {"$tuple": []}))
    except CodecError as exc:
        return fail(f"{first.path}: the manifest's config or issues do not decode ({exc})")
    from evaluators.qa.shards import merged_report
    from evaluators.reports.qa import write_records_csv, write_report_json

    rows = [row for f in files for row in f.rows]
    try:
        report = merged_report(first.manifest["input"]["name"], config, first.manifest["decision"], issues,
                               first.columns, rows)
    except (ValueError, TypeError, KeyError) as exc:
        return fail(f"the shard files {', '.join(f.path for f in files)} do not make a report: {exc}")
    out = Path(args.output_file) if args.output_file else None
    try:
        f = open(out, "w", encoding="utf-8", newline="") if out is not None else sys.stdout
    except OSError as exc:
        return fail(f"cannot write {out}: {exc.strerror or exc}")
    try:
        if args.format == "csv":
            write_records_csv(report, f)
        else:
            write_report_json(report, f)
    finally:
        if out is not None:
            f.close()
    if out is not None:
        print(f"merged {len(files)} shards ({report.n_records} records) into {out}", file=sys.stderr)
    return EXIT_OK
