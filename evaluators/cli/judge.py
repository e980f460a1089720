"""``python -m evaluators judge calibrate --labels FILE --verdicts FILE``: judge versions against human labels.

Reads the human final labels and one or more files of judge verdicts (formats:
:mod:`evaluators.judgelab.inputs`), splits the labelled items into dev and test (stratified by label x
slice; ``--split FILE`` keeps the split: read when the file exists, extended with new items, written back),
and prints each judge version's accuracy, Cohen's kappa, sensitivity, specificity, base rate, confusion and
disagreeing ids on dev and on test with 95% bootstrap intervals, and the overfit warning
(:func:`evaluators.judgelab.calibrate`).  ``--target FILE`` (the same versions' verdicts on the model's
unlabelled outputs) adds each version's corrected scores (:func:`evaluators.judgelab.corrected_for_version`).  ``--format json`` prints the whole report as JSON.

Exit codes: 0 success; 2 unusable input (unreadable file, no label, labels under several guidelines
versions without ``--pool-guidelines``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    """Register the ``judge`` subcommand."""
    p = subparsers.add_parser("judge", help="judge lab: judge versions against the team's own labels",
                              description="Calibrate LLM-judge versions against human final labels: figures with "
                                          "intervals on a held-out test split, and the overfit warning.")
    p.add_argument("action", choices=("calibrate",))
    p.add_argument("--labels", metavar="FILE", required=True,
                   help="human labels (JSONL / JSON / CSV: item_id, label, slice, guidelines_version)")
    p.add_argument("--verdicts", metavar="FILE", action="append", required=True,
                   help="judge verdicts (item_id, verdict, judge, model, prompt_hash, parameters, parser; "
                        "LongMemEval judge output read as is), repeatable")
    p.add_argument("--target", metavar="FILE",
                   help="verdicts of the same judge versions on the model's unlabelled outputs: print each version's "
                        "corrected scores (raw, bias-adjusted, prediction-powered, human-only), calibrated on the "
                        "test side")
    p.add_argument("--split", metavar="FILE", help="the dev/test split: read when it exists (items keep their "
                                                   "sides, new ones are added), written back")
    p.add_argument("--seed", type=int, default=0, help="seed of a new split and of the bootstrap (default 0)")
    p.add_argument("--dev-fraction", type=float, default=0.5, help="share of each stratum on dev (default 0.5)")
    p.add_argument("--pool-guidelines", action="store_true",
                   help="accept labels made under several guidelines versions (refused by default)")
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples per interval (default 2000; 0: no intervals)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``judge calibrate``; returns the exit code."""
    from evaluators.io import InputError
    from evaluators.io.sources import read_file_bytes
    from evaluators.judgelab import Split, calibrate, corrected_for_version
    from evaluators.judgelab.inputs import read_labels, read_verdicts
    from evaluators.reports.format import problem_lines
    from evaluators.reports.judgelab import calibration_json, calibration_text, corrected_text

    try:
        labels = read_labels(read_file_bytes(args.labels), args.labels)
        judges, issues = [], list(labels.issues)
        for name in args.verdicts:
            got = read_verdicts(read_file_bytes(name), name)
            judges += got.judges
            issues += got.issues
        target = read_verdicts(read_file_bytes(args.target), args.target) if args.target else None
        if target is not None:
            issues += target.issues
        split = None
        if args.split and Path(args.split).is_file():
            split = Split.from_dict(json.loads(read_file_bytes(args.split).decode("utf-8")))
    except (OSError, InputError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in problem_lines(issues):
        print(line, file=sys.stderr)
    names = [v.label for v, _ in judges]
    if len(set(names)) != len(names):
        print(f"error: two verdict groups are both named {sorted(n for n in names if names.count(n) > 1)[0]!r}: "
              "give each judge version its own 'judge' name", file=sys.stderr)
        return 2
    try:
        report = calibrate(labels.labels, judges, split=split, seed=args.seed, dev_fraction=args.dev_fraction,
                           pool_guidelines=args.pool_guidelines, n_resamples=max(0, args.resamples))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    corrected = {}
    if target is not None:
        targets = {v.label: d for v, d in target.judges}
        try:
            corrected = {v.label: corrected_for_version(labels.labels, report.split, d, targets[v.label])
                         for v, d in judges if v.label in targets}
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for name in sorted(set(targets) - set(corrected)):
            print(f"warning: target verdicts of {name!r} have no calibrated version of that name", file=sys.stderr)
    if args.split:
        Path(args.split).write_text(json.dumps(report.split.to_dict(), ensure_ascii=False) + "\n", encoding="utf-8")
    if args.format == "json":
        data = json.loads(calibration_json(report))
        if target is not None:
            data["corrected"] = {name: s.to_dict() for name, s in corrected.items()}
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(calibration_text(report) + (corrected_text(corrected) if corrected else ""))
    return 0
