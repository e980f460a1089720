"""``python -m evaluators judge calibrate|run|compare``: judge versions against human labels, run, compared.

``judge calibrate --labels FILE --verdicts FILE``:

Reads the human final labels and one or more files of judge verdicts (formats:
:mod:`evaluators.judgelab.inputs`), splits the labelled items into dev and test (stratified by label x
slice; ``--split FILE`` keeps the split: read when the file exists, extended with new items, written back),
and prints each judge version's accuracy, Cohen's kappa, sensitivity, specificity, base rate, confusion and
disagreeing ids on dev and on test with 95% bootstrap intervals, and the overfit warning
(:func:`evaluators.judgelab.calibrate`).  ``--target FILE`` (the same versions' verdicts on the model's
unlabelled outputs) adds each version's corrected scores (:func:`evaluators.judgelab.corrected_for_version`).  ``--format json`` prints the whole report as JSON.

``judge run --items FILE --template FILE --out FILE``: one judge version (the prompt template, the model,
``--parser``, ``--max-tokens``) over the items through an OpenAI-compatible endpoint (``--base-url`` and
``--model``, else ``EVALBOARD_JUDGE_BASE_URL`` / ``EVALBOARD_JUDGE_MODEL``) on ``--workers`` threads through the
judge call cache (``--cache FILE``, a SQLite file: :mod:`evaluators.io.judge_calls`; each reply is stored as it
arrives, so a run killed halfway and run again sends no call twice, and several runs may share the file; a reply
is reused when the same model was asked the same template about the same input), at most ``--rate`` requests a
second; writes the verdicts as JSONL in the form ``--verdicts`` reads (:func:`evaluators.judgelab.run.run_judge`).

``judge compare --verdicts FILE [--verdicts FILE]``: two judge versions (the first the old one) on the same
items: agreement and Cohen's kappa between them, the share of items whose verdict moved, McNemar's exact test,
the moved items (:func:`evaluators.judgelab.lab.compare_versions`); ``--labels FILE`` restricts the items to
the labelled ones (the fixed anchor set).

Each takes ``--format json``.  Exit codes: 0 success; 1 a run whose every request failed; 2 unusable input
(unreadable file, no label, labels under several guidelines versions without ``--pool-guidelines``, no
endpoint, not two versions to compare).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evaluators.cli.common import EXIT_FAILED, fail


def add_parser(subparsers) -> None:
    """Register the ``judge`` subcommand."""
    p = subparsers.add_parser("judge", help="judge lab: judge versions against the team's own labels",
                              description="Calibrate LLM-judge versions against human final labels: figures with "
                                          "intervals on a held-out test split, and the overfit warning.")
    p.add_argument("action", choices=("calibrate", "run", "compare"))
    p.add_argument("--labels", metavar="FILE",
                   help="human labels (JSONL / JSON / CSV: item_id, label, slice, guidelines_version); calibrate: "
                        "required; compare: the anchor items")
    p.add_argument("--verdicts", metavar="FILE", action="append",
                   help="judge verdicts (item_id, verdict, judge, model, prompt_hash, parameters, parser; "
                        "LongMemEval judge output read as is), repeatable; compare: two versions in all")
    p.add_argument("--session", metavar="NAME", action="append",
                   help="calibrate: take the labels from this review session's final labels (adjudicated, else "
                        "unanimous; repeatable) instead of --labels")
    p.add_argument("--db", metavar="URL_OR_FILE", help="calibrate --session: the review database (default: "
                                                       "EVALBOARD_DATABASE_URL, else $EVALBOARD_DATA_DIR/review.sqlite)")
    p.add_argument("--items", metavar="FILE", help="run: the items (item_id, question, reference, answer)")
    p.add_argument("--template", metavar="FILE", help="run: the prompt template (UTF-8 text with {question}, "
                                                      "{reference}, {answer})")
    p.add_argument("--name", help="run: the version's display name (default: the template file's name)")
    p.add_argument("--parser", default="yes-in-reply", help="run: yes-in-reply (default) or first-word")
    p.add_argument("--max-tokens", type=int, default=10, help="run: max_tokens of each request (default 10)")
    p.add_argument("--base-url", help="run: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", help="run: judge model name")
    p.add_argument("--cache", metavar="FILE", help="run: the judge call cache (SQLite, shared by workers and runs): "
                                                   "replies reused, each new one stored as it arrives")
    p.add_argument("--rate", type=float, default=None, metavar="PER_S",
                   help="run: at most this many requests a second (default: no limit)")
    p.add_argument("--out", metavar="FILE", help="run: write the verdicts here (JSONL, as --verdicts reads them; "
                                                 "required); calibrate, compare: write the report here instead of "
                                                 "printing it")
    p.add_argument("--workers", type=int, default=4, help="run: items judged at once (default 4)")
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
    """Run ``judge calibrate``, ``judge run`` or ``judge compare``; returns the exit code."""
    if args.action == "run":
        return run_judge_command(args)
    if args.action == "compare":
        return compare_command(args)
    if not (args.labels or args.session) or not args.verdicts:
        return fail("judge calibrate needs --labels (or --session) and at least one --verdicts")
    if args.labels and args.session:
        return fail("judge calibrate takes its labels from --labels or from --session, not both")
    from evaluators.io import InputError
    from evaluators.io.sources import read_file_bytes
    from evaluators.judgelab import Split, calibrate, corrected_for_version
    from evaluators.judgelab.inputs import read_labels, read_verdicts
    from evaluators.reports.format import problem_lines
    from evaluators.reports.judgelab import calibration_json, calibration_text, corrected_text

    try:
        labels = read_labels(read_file_bytes(args.labels), args.labels) if args.labels else _review_labels(args)
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
        return _emit(args, calibration_json(report, corrected if target is not None else None))
    return _emit(args, calibration_text(report) + (corrected_text(corrected) if corrected else ""))


def _review_labels(args: argparse.Namespace):
    """The final labels of the ``--session`` review sessions (by name) of ``--db``, as a labels file would give."""
    from evaluators.judgelab.from_review import labels_from_review
    from evaluators.judgelab.inputs import CalibrationInputs
    from evaluators.review.store import ReviewStore

    if args.db and "://" not in args.db and not Path(args.db).exists():
        raise ValueError(f"no review database at {args.db}")
    store = ReviewStore(args.db)
    try:
        ids = []
        for name in args.session:
            session = store.session_by_name(name)
            if session is None:
                raise ValueError(f"no review session named {name!r}")
            ids.append(session.id)
        got = labels_from_review(store, ids)
    finally:
        store.engine.dispose()
    for item_id, why in got.left_out:
        print(f"note: {item_id}: {why}, left out", file=sys.stderr)
    return CalibrationInputs(labels=got.labels)


def _emit(args: argparse.Namespace, text: str) -> int:
    """Print the report, or write it to ``--out``; returns the exit code."""
    if not args.out:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc.strerror or exc}")
    return 0


def run_judge_command(args: argparse.Namespace) -> int:
    """``judge run``: one judge version over items through the endpoint and the reply cache; returns the exit code."""
    from evaluators.io import InputError
    from evaluators.io.judge_calls import JudgeCallCache
    from evaluators.io.sources import read_file_bytes
    from evaluators.judgelab.inputs import read_items
    from evaluators.judgelab.run import run_judge
    from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient
    from evaluators.net import RateLimiter
    from evaluators.reports.format import problem_lines
    from evaluators.reports.judgelab import run_json, run_text, verdicts_jsonl

    if not args.items or not args.template or not args.out:
        return fail("judge run needs --items, --template and --out")
    try:
        items, issues = read_items(read_file_bytes(args.items), args.items)
        template = read_file_bytes(args.template).decode("utf-8")
        cache = JudgeCallCache(args.cache, limiter=RateLimiter(args.rate)) if args.cache else None
        config = LLMConfig.from_env(base_url=args.base_url, model=args.model)
    except (OSError, InputError, ValueError, UnicodeDecodeError) as exc:
        return fail(exc)
    for line in problem_lines(list(issues)):
        print(line, file=sys.stderr)
    if config is None:
        return fail("judge run needs an endpoint: set EVALBOARD_JUDGE_BASE_URL and EVALBOARD_JUDGE_MODEL "
                    "(or --base-url and --model)")
    if not items:
        return fail(f"no usable item in {args.items}")
    if cache is None:
        cache = JudgeCallCache(None, limiter=RateLimiter(args.rate))
    try:
        result = run_judge(items, template, OpenAICompatibleClient(config), parser=args.parser,
                           max_tokens=args.max_tokens, name=args.name or Path(args.template).stem, cache=cache,
                           workers=args.workers)
    except ValueError as exc:
        return fail(exc)
    try:
        Path(args.out).write_text(verdicts_jsonl(result), encoding="utf-8")
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc}")
    sys.stdout.write(run_json(result) if args.format == "json" else run_text(result))
    return EXIT_FAILED if not result.replies else 0  # every request failed


def compare_command(args: argparse.Namespace) -> int:
    """``judge compare``: two judge versions' verdicts compared; returns the exit code."""
    from evaluators.io import InputError
    from evaluators.io.sources import read_file_bytes
    from evaluators.judgelab.inputs import read_labels, read_verdicts
    from evaluators.judgelab.lab import compare_versions
    from evaluators.reports.format import problem_lines
    from evaluators.reports.judgelab import compare_json, compare_text

    if not args.verdicts:
        return fail("judge compare needs --verdicts (two judge versions in all: the old one first)")
    try:
        judges, issues = [], []
        for name in args.verdicts:
            got = read_verdicts(read_file_bytes(name), name)
            judges += got.judges
            issues += got.issues
        labels = read_labels(read_file_bytes(args.labels), args.labels) if args.labels else None
    except (OSError, InputError, ValueError) as exc:
        return fail(exc)
    if labels is not None:
        issues += labels.issues
    for line in problem_lines(issues):
        print(line, file=sys.stderr)
    if len(judges) != 2:
        return fail(f"judge compare needs two judge versions, found {len(judges)}"
                    + (f" ({', '.join(v.label for v, _ in judges)})" if judges else ""))
    (before, a), (after, b) = judges
    anchors = [lab.item_id for lab in labels.labels] if labels is not None else None
    try:
        comparison = compare_versions(a, b, names=(before.label, after.label), anchor_ids=anchors,
                                      n_resamples=max(0, args.resamples), seed=args.seed)
    except ValueError as exc:
        return fail(exc)
    return _emit(args, compare_json(comparison) if args.format == "json" else compare_text(comparison))
