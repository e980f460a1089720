"""``python -m evaluators runs``: the run registry (runs kept by ``qa ... --log``).

Actions: ``list`` (filters ``--task``, ``--dataset``, ``--system``, ``--tag``, ``--since``), ``show NAME``,
``compare A B`` (``compare``'s paired tests on the items both runs scored; refused below ``--min-overlap``),
``trend --metric M`` (the runs of one dataset in time order, each step tested and corrected; ``--current-gt``:
every run re-scored on the dataset's current GT version), ``accept NAME``,
``leaderboard --metric M`` (each system's latest run on a dataset, ranked, with intervals and the tiers the data
cannot tell apart), ``delete NAME``, ``export FILE``, ``import FILE``, ``noise NAME NAME ... --metric M
[--candidate C]`` (the noise
floor of repeats: flip rates, flaky items, pass@k, the band a change must exceed); each with ``--format json``.

Exit codes: 0 success; 2 an unknown run, runs that cannot be joined, a file that cannot be read or written,
a corrupt registry entry; the reason on stderr.
"""

from __future__ import annotations

import argparse
import sys

from evaluators.cli.common import fail

ACTIONS = ("list", "show", "compare", "trend", "leaderboard", "noise", "accept", "delete", "export", "import")


def add_parser(subparsers) -> None:
    """Register the ``runs`` subcommand."""
    from evaluators.runs.compare import MIN_OVERLAP

    p = subparsers.add_parser(
        "runs", help="the run registry: list, show, compare and trend logged runs; accept, delete, export, import",
        description="Runs kept with 'qa ... --log': list them, show one, compare two on the items both scored "
                    "(the paired tests of 'compare'), a metric's trend over the runs of one dataset (each step "
                    "tested, Holm or Benjamini-Hochberg across its metrics x slices), mark a baseline, delete, "
                    "and move them between databases (export / import).")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="show/accept/delete: a run; compare: runs A and B; export/import: the file; noise: the "
                        "repeats (2 or more)")
    p.add_argument("--db", metavar="URL_OR_FILE",
                   help="SQLAlchemy URL or SQLite file (default: EVALBOARD_DATABASE_URL, else "
                        "$EVALBOARD_DATA_DIR/review.sqlite)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="table (default) or json")
    p.add_argument("--task", help="list/trend: runs of this task")
    p.add_argument("--dataset", help="list/trend: runs of this dataset (its name or digest)")
    p.add_argument("--system", help="list/trend: runs of this system")
    p.add_argument("--tag", metavar="KEY[=VALUE]", help="list/trend: runs with this tag")
    p.add_argument("--since", metavar="TIME", help="list/trend: runs created at or after this UTC time (ISO 8601)")
    p.add_argument("--metric", action="append", metavar="M", help="trend: a metric (repeatable)")
    p.add_argument("--slice", action="append", metavar="S", default=[],
                   help="trend: break each metric down by this slice column too (repeatable)")
    p.add_argument("--correction", choices=("holm", "bh"), default="holm",
                   help="trend: across each step's metrics x slices: holm (family-wise error, default) or bh "
                        "(Benjamini-Hochberg false discovery rate)")
    p.add_argument("--alpha", type=float, default=0.05, help="trend: level of the corrected tests (default 0.05)")
    p.add_argument("--test", choices=("randomization", "bootstrap"), default="randomization",
                   help="trend: the paired test of a step (default approximate randomization)")
    p.add_argument("--current-gt", action="store_true",
                   help="trend: every run re-scored on its dataset's current GT version (from its stored "
                        "predictions, with the GT patches logged since) instead of as scored then")
    p.add_argument("--noise", action="append", metavar="NAME", default=[],
                   help="compare/trend: repeats of one run (2 or more, repeatable): a trend step is flagged only "
                        "beyond their noise band; compare lists the flaky items that changed")
    p.add_argument("--candidate", metavar="NAME",
                   help="noise: a run judged against the repeats (flagged only beyond their noise band)")
    p.add_argument("--min-overlap", type=float, default=MIN_OVERLAP, metavar="SHARE",
                   help=f"compare/trend: share of the larger run's items two runs must share (default {MIN_OVERLAP})")
    p.add_argument("--ci-resamples", type=int, default=10_000, metavar="N",
                   help="compare/trend: bootstrap and randomization resamples (default 10000, as compare)")
    p.add_argument("--seed", type=int, default=0, help="compare/trend: seed of the resamples (default 0)")
    p.set_defaults(func=run)


def _names(args: argparse.Namespace, n: int) -> list[str] | None:
    return list(args.names) if len(args.names) == n else None


def run(args: argparse.Namespace) -> int:
    """Run the ``runs`` subcommand; returns the exit code."""
    from evaluators.reports import runs as out
    from evaluators.review.schema import SchemaTooNew
    from evaluators.runs import CorruptBlob, RunStore

    want = {"list": 0, "trend": 0, "leaderboard": 0, "compare": 2}.get(args.action, 1)
    if args.action == "noise":
        names = list(args.names) if len(args.names) >= 2 else None
    else:
        names = _names(args, want)
    if names is None:
        many = "2 or more" if args.action == "noise" else want
        return fail(f"runs {args.action} takes {many} name(s), {len(args.names)} given")
    try:
        store = RunStore(args.db)
    except SchemaTooNew as exc:
        return fail(str(exc))
    as_json = args.format == "json"
    try:
        if args.action == "list":
            records = store.runs(task=args.task, dataset=args.dataset, system=args.system, tag=args.tag,
                                 since=args.since)
            sys.stdout.write(out.to_json(records) if as_json else out.list_text(records))
        elif args.action == "show":
            record = store.get(names[0])
            sys.stdout.write(out.to_json(record) if as_json else out.show_text(record))
        elif args.action == "accept":
            record = store.accept(names[0])
            sys.stdout.write(out.to_json(record) if as_json else f"{record.name} is the accepted baseline of "
                             f"{record.task} on {record.dataset}\n")
        elif args.action == "delete":
            store.delete(names[0])
            sys.stdout.write(out.to_json({"deleted": names[0]}) if as_json else f"deleted {names[0]}\n")
        elif args.action == "export":
            with open(names[0], "wb") as f:
                n = store.export(f)
            sys.stdout.write(out.to_json({"exported": n, "file": names[0]}) if as_json
                             else f"{n} run(s) written to {names[0]}\n")
        elif args.action == "import":
            with open(names[0], "rb") as f:
                n = store.import_(f)
            sys.stdout.write(out.to_json({"imported": n, "file": names[0]}) if as_json
                             else f"{n} run(s) added from {names[0]}\n")
        elif args.action == "compare":
            return _compare(args, store, names, out)
        elif args.action == "noise":
            return _noise(args, store, names, out)
        elif args.action == "leaderboard":
            return _leaderboard(args, store, out)
        else:
            return _trend(args, store, out)
    except KeyError as exc:
        return fail(exc.args[0] if exc.args else str(exc))
    except OSError as exc:
        return fail(f"{exc.filename or ''}: {exc.strerror or exc}")
    except (CorruptBlob, ValueError) as exc:
        return fail(str(exc))
    return 0


def _compare(args, store, names, out) -> int:
    from evaluators.runs.compare import compare_runs, tokenizer_changes

    a, b = (store.load(n) for n in names)
    for line in tokenizer_changes(names[0], a.signature, names[1], b.signature):
        print(f"warning: {line}", file=sys.stderr)
    c = compare_runs(a, b, names[0], names[1], min_overlap=args.min_overlap, n_resamples=max(0, args.ci_resamples),
                     seed=args.seed)
    noise = None
    if args.noise:
        from evaluators.runs.noise import flaky_changes

        noise = [{"metric": f.metric, "band": f.band, "flaky_changed": list(flaky_changes(f, a, b))}
                 for f in _floors(args, store, [m.metric for m in c.metrics])]
    if args.format == "json":
        from evaluators.results import to_jsonable

        sys.stdout.write(out.to_json({**to_jsonable(c), **({"noise": noise} if noise is not None else {})}))
    else:
        sys.stdout.write(out.comparison_text(c, noise))
    return 0


def _floors(args, store, metrics):
    """The noise floors of ``--noise`` repeats, one per metric."""
    from evaluators.runs.noise import noise_floor

    if len(args.noise) < 2:
        raise ValueError("--noise takes 2 or more repeats of one run")
    repeats = [(n, store.load(n)) for n in args.noise]
    return [noise_floor(repeats, m, system=args.system) for m in metrics]


def _one_dataset(args, store):
    """The runs matching the filters, all of one dataset; else ``ValueError`` saying what to choose."""
    records = store.runs(task=args.task, dataset=args.dataset, system=args.system, tag=args.tag, since=args.since)
    datasets = sorted({r.dataset_digest for r in records})
    if len(datasets) > 1:
        raise ValueError(f"the runs are of {len(datasets)} datasets: choose one with --dataset (runs list shows them)")
    if not records:
        raise ValueError("no run matches (runs list shows them)")
    return records


def _columns(record, metrics, slices) -> list[str]:
    """The columns of ``record`` a trend or a leaderboard of ``metrics`` by ``slices`` reads."""
    have = {s["slice"] for s in record.summary if s["slice"]}
    return [m for m in metrics if m in record.metrics] + [s for s in slices if s in have]


def _leaderboard(args, store, out) -> int:
    from evaluators.runs.leaderboard import latest_by_system, leaderboard

    if not args.metric or len(args.metric) != 1:
        return fail("runs leaderboard needs one --metric M")
    latest = latest_by_system(_one_dataset(args, store))
    latest_results = [(r.name, store.load(r.name, _columns(r, args.metric, ()))) for r in latest]
    board = leaderboard(latest_results, args.metric[0], alpha=args.alpha, n_resamples=max(0, args.ci_resamples),
                        seed=args.seed, min_overlap=args.min_overlap)
    sys.stdout.write(out.to_json(board) if args.format == "json" else out.leaderboard_text(board))
    return 0


def _trend(args, store, out) -> int:
    from evaluators.runs.trend import trend

    if not args.metric:
        return fail("runs trend needs --metric M (repeatable)")
    records = _one_dataset(args, store)
    if args.current_gt:
        from evaluators.runs.rescore import on_current_gt

        import evaluators.tasks

        results = [(r.name, on_current_gt(store, r.name, tasks=evaluators.tasks)[0]) for r in records]
    else:
        results = [(r.name, store.load(r.name, _columns(r, args.metric, args.slice))) for r in records]
    bands = {f.metric: f.band for f in _floors(args, store, args.metric)} if args.noise else None
    t = trend(results, args.metric, slices=args.slice, noise_bands=bands,
              correction=args.correction, alpha=args.alpha, test=args.test, n_resamples=max(0, args.ci_resamples),
              seed=args.seed, min_overlap=args.min_overlap, system=args.system)
    sys.stdout.write(out.to_json(t) if args.format == "json" else out.trend_text(t))
    return 0


def _noise(args, store, names, out) -> int:
    from evaluators.runs.noise import beyond_noise, noise_floor

    if not args.metric or len(args.metric) != 1:
        return fail("runs noise needs one --metric M")
    repeats = [(n, store.load(n)) for n in names]
    floor = noise_floor(repeats, args.metric[0], system=args.system)
    verdict = None
    if args.candidate:
        verdict = beyond_noise(repeats, (args.candidate, store.load(args.candidate)), args.metric[0],
                               alpha=args.alpha, n_resamples=max(1, args.ci_resamples), seed=args.seed,
                               system=args.system, floor=floor)
    data = {"noise_floor": floor, "candidate": verdict}
    sys.stdout.write(out.to_json(data) if args.format == "json" else out.noise_text(floor, verdict))
    return 0
