"""``python -m evaluators review patch|estimate|gate``: from review decisions to numbers (issue 19).

- ``review patch --gt FILE [--out P]`` (no session): the corrections of every QA session of the
  database for the records of ``FILE``, keyed by record and GT: the dataset's patch, for every run;
- ``review patch --session S --gt FILE [--out P]``: the session's final labels as a GT patch for
  ``FILE`` (acceptable variants added as answers, adjudicated GT errors with their corrected answer),
  for the ``qa``, ``compare``, ``report``, ``memory``, ``testsets`` and ``dialogue`` commands'
  ``--gt-patch``; ``FILE`` is the file the session was made from (refused when the session kept
  another one): the QA file, the test set, the memory results (or questions), the persona cases;
  for a ``narrative`` session the story GT files (a file, folder or zip; refused when none is a
  file the session kept), for the ``narrative`` command's ``--gt-patch``;
- ``review estimate --session S [--gt FILE] [--metric M] [--system NAME]``: the run's human-verified
  score from the reviewed sample (prediction-powered inference: uniform, stratified or active by the
  session's design, :mod:`evaluators.review.sampling`) beside the human-only estimate, which sample
  it used, the unadjudicated disagreements (counted, with the estimate with all of them wrong / right),
  the expected interval width after more reviews, and the metric (``>= 0.5``) against the people's
  final labels with the people's own agreement on the same two labels.  A QA session needs ``--gt``
  (the QA file: GT errors are rescored against it); a memory, test-set or dialogue session's items
  carry their metric.  Exit 2 with the reason for a session that is not a random sample (informative
  order, a filter), for items without a metric, and whenever no estimate could be made;
- ``review gate --baseline A --candidate B [--gt FILE] [--gt-patch P ...] [--metric M] [--level L]``:
  exits 1 when the candidate's (reviewed) score is significantly below the baseline's (paired
  test on the records both scored), 0 otherwise; prints the figures.  ``A`` and ``B`` are two
  record files (GT and prediction in each), two prediction files of the GT dataset ``--gt``, or
  two systems of the file ``--gt``; or two runs of the registry: ``--baseline-run NAME|accepted
  --candidate-run NAME [--current-gt]`` (``accepted``: the accepted run of the candidate's task and dataset).

Exit codes: 0 success (gate: passed); 1 gate failed; 2 unusable input, with the reason on stderr.
The parser is :mod:`evaluators.cli.review`'s (these actions are registered there).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from evaluators.io.sources import read_file_bytes
from evaluators.cli.common import EXIT_FAILED, EXIT_OK, actor, fail, terminal

ACTIONS = ("patch", "estimate", "gate")
METRICS = ("exact_match", "token_f1")
TESTS = ("bootstrap", "randomization", "mcnemar")


def add_arguments(p) -> None:
    """The options of :data:`ACTIONS` on the ``review`` parser."""
    from evaluators.cli.patching import add_gt_patch_argument

    g = p.add_argument_group("from review to numbers (patch, estimate, gate)")
    g.add_argument("--gt", metavar="FILE", help="patch / estimate: the QA file the session's records come from "
                   "(patch of a narrative session: the story GT files, a file, folder or zip); "
                   "gate: the GT dataset of two --predictions-style files, or a file whose systems are compared")
    g.add_argument("--baseline", metavar="FILE_OR_SYSTEM", help="gate: the baseline run")
    g.add_argument("--candidate", metavar="FILE_OR_SYSTEM", help="gate: the candidate run")
    g.add_argument("--metric", choices=METRICS, default="exact_match", help="gate / estimate metric (default EM)")
    g.add_argument("--level", type=float, default=0.05, metavar="ALPHA",
                   help="gate: significance level of the paired test (default 0.05); estimate: 1 - confidence")
    g.add_argument("--test", choices=TESTS, default="bootstrap",
                   help="gate: paired bootstrap (default), approximate randomization, or McNemar's exact test (EM)")
    g.add_argument("--system", metavar="NAME", help="estimate: one system of the file (default: every run)")
    g.add_argument("--resamples", type=int, default=10_000, metavar="N", help="gate: resamples (default 10000)")
    g.add_argument("--seed", type=int, default=0, help="gate: seed of the resampling; create: seed of the order (default 0)")
    g.add_argument("--baseline-report", metavar="FILE",
                   help="gate: the baseline's report JSON (qa --output-file): warn when the tokenizer differs")
    g.add_argument("--baseline-run", metavar="NAME|accepted",
                   help="gate: the baseline is a run of the registry (qa --log), or 'accepted': the accepted run "
                        "of the candidate's task and dataset (runs accept)")
    g.add_argument("--candidate-run", metavar="NAME", help="gate: the candidate is a run of the registry")
    g.add_argument("--current-gt", action="store_true",
                   help="gate with registry runs: both re-scored on their dataset's current GT version")
    add_gt_patch_argument(g)



def _scoring_args(**values) -> argparse.Namespace:
    """The ``qa`` scoring settings at their defaults, with ``values`` set."""
    from evaluators.cli.qa import add_scoring_arguments

    parser = argparse.ArgumentParser(add_help=False)
    add_scoring_arguments(parser)
    args = parser.parse_args([])
    for k, v in values.items():
        setattr(args, k, v)
    return args


def run(args: argparse.Namespace, store_of) -> int:
    """Run ``review patch|estimate|gate``; ``store_of()`` opens the review database (patch, estimate)."""
    if args.action == "gate":
        return gate(args)
    if args.action == "patch" and args.gt and not args.session:
        return dataset(args, store_of(), Path(args.gt))
    if not args.session or (not args.gt and args.action != "estimate"):
        return fail(f"review {args.action} needs --session NAME and --gt FILE (the file the session was made from)"
                    + ("; or --gt FILE alone: every session's corrections of that file's records" if args.action
                       == "patch" else ""))
    gt = Path(args.gt) if args.gt else None
    if gt is not None and not gt.exists():
        return fail(f"cannot read {gt}: no such file")
    store = store_of()
    session = store.session_by_name(args.session)
    if session is None:
        return fail(f"no review session named {args.session!r}")
    if args.action == "estimate" and (gt is None or session.kind != "qa"):
        return estimate_items(args, store, session, gt)
    if args.action == "patch":  # the GT patch is checked and audited as the page's corrections download
        from evaluators.review import service as rs

        who = actor(args)
        try:
            rs.require(session, who, "patch")
        except PermissionError as exc:
            return fail(terminal(exc))
        def audit() -> None:  # written by _write_patch once the patch is complete, before it is released
            rs.audit(store, who, "patch", session, detail=gt.name)

        if session.kind == "narrative":
            return narrative_patch(args, store, session, gt, audit=audit)
        return fail(f"cannot read {gt}: not a file") if not gt.is_file() else patch(args, store, session, gt,
                                                                                       audit=audit)
    if not gt.is_file():
        return fail(f"cannot read {gt}: not a file")
    return estimate(args, store, session, gt)


def _qa_report(gt: Path):
    from evaluators.io import InputError
    from evaluators.qa.evaluate import QAConfig, evaluate_qa_file

    try:
        return evaluate_qa_file(gt, QAConfig(ci_resamples=0)), None
    except (OSError, InputError) as exc:
        return None, f"cannot read {gt}: {getattr(exc, 'strerror', None) or exc}"


def patch(args, store, session, gt: Path, *, audit: Callable[[], None] | None = None) -> int:
    """``review patch``: write the session's GT patch for ``gt`` (refused when the session kept another file);
    ``audit`` writes its audit row (:func:`_write_patch`)."""
    from evaluators.io import InputError
    from evaluators.io.gt_patch import file_sha256
    from evaluators.review.gt_patch import build_gt_patch, gold_of

    try:
        data = read_file_bytes(gt)
    except OSError as exc:
        return fail(f"cannot read {gt}: {exc.strerror or exc}")
    digest = file_sha256(data)
    if session.uploads and digest not in session.uploads:
        kept = store.get_upload(session.uploads[0])
        return fail(f"session {session.name!r} was made from {kept[0] if kept else 'another file'} "
                    f"(sha256 {session.uploads[0][:12]}...), not from {gt} (sha256 {digest[:12]}...): give that file "
                    "as --gt")
    try:
        gold = gold_of(session.kind, str(gt), data)
    except (InputError, ValueError) as exc:
        return fail(f"cannot read {gt} as the GT of a {session.kind!r} session: {exc}")
    return _write_patch(args, build_gt_patch(store, session.id, digest, gold), audit)


def dataset(args, store, gt: Path) -> int:
    """``review patch --gt FILE`` without a session: the corrections of every QA session of the database for
    the records of ``FILE`` (:func:`evaluators.review.gt_patch.dataset_patch`), for every run of that dataset."""
    from evaluators.io import InputError
    from evaluators.review.gt_patch import dataset_patch, gold_of

    try:
        data = read_file_bytes(gt)
        gold = gold_of("qa", str(gt), data)
    except OSError as exc:
        return fail(f"cannot read {gt}: {exc.strerror or exc}")
    except (InputError, ValueError) as exc:
        return fail(f"cannot read {gt} as a QA file: {exc}")
    return _write_patch(args, dataset_patch(store, gold or {}))


def _write_patch(args, built, audit: Callable[[], None] | None = None) -> int:
    """Write a built patch to ``--out`` (else stdout), its audit row (``audit``) with it.

    A patch is read from the database and released as a file: there is no transaction for the row to share,
    so the row is written once the patch is complete and *before* it is released.  With ``--out`` the text
    goes to a temporary file beside it, then the row, then the file is renamed into place (``os.replace``,
    atomic): an unwritable ``--out`` leaves no row and a row that cannot be written leaves no file (nor a
    temporary one).  On stdout the row precedes the text.  What is left is the safe direction: a rename or a
    print that fails after the row leaves a row for a patch not delivered, never a patch without its row.
    """
    import os

    from evaluators.io.gt_patch import write_gt_patch

    for where, why in built.skipped:
        print(f"note: {where}: {why}", file=sys.stderr)
    text = write_gt_patch(built.entries)
    if args.out:
        out = Path(args.out)
        part = out.with_name(f".{out.name}.{os.getpid()}.part")
        try:
            try:
                part.write_text(text, encoding="utf-8")
            except OSError as exc:
                return fail(f"cannot write {args.out}: {exc.strerror or exc}")
            if audit is not None:
                audit()
            try:
                os.replace(part, out)
            except OSError as exc:
                return fail(f"cannot write {args.out}: {exc.strerror or exc}")
        finally:
            part.unlink(missing_ok=True)
        print(f"{len(built.entries)} correction(s) written to {args.out} ({len(built.skipped)} skipped)")
    else:
        if audit is not None:
            audit()
        sys.stdout.write(text)
    return EXIT_OK


def narrative_patch(args, store, session, gt: Path, *, audit: Callable[[], None] | None = None) -> int:
    """``review patch`` of a narrative session: ``gt`` is a story GT file, a folder or a zip of them; each
    correction carries its story file's digest (:func:`evaluators.review.gt_patch.build_narrative_patch`);
    ``audit`` writes its audit row (:func:`_write_patch`)."""
    from evaluators.io.sources import collect_paths
    from evaluators.review.gt_patch import build_narrative_patch, narrative_gold

    try:
        files = [f for f in collect_paths(gt) if f.issue is None]
    except OSError as exc:
        return fail(f"cannot read {gt}: {exc.strerror or exc}")
    gold, problems = narrative_gold([(f.name, f.data) for f in files])
    for message in problems:
        print(f"warning: {message} (not read)", file=sys.stderr)
    if session.uploads and not set(session.uploads) & set(gold):
        kept = store.get_upload(session.uploads[0])
        return fail(f"session {session.name!r} was made from {kept[0] if kept else 'other files'} "
                    f"(sha256 {session.uploads[0][:12]}...{' and others' if len(session.uploads) > 1 else ''}), "
                    f"and no GT file under {gt} is one of them: give those files as --gt")
    return _write_patch(args, build_narrative_patch(store, session.id, gold), audit)


def _disagreements(store, session_id: int) -> list:
    """``(system, id)`` keys of items whose submitted labels differ and that nobody adjudicated."""
    from evaluators.review.estimate import item_key

    adjudicated = {a["item_id"] for a in store.adjudications(session_id)}
    labels: dict[int, set] = {}
    for d in store.decisions(session_id):
        if d.status == "submitted" and d.label is not None:
            labels.setdefault(d.item_id, set()).add(d.label)
    split = {i for i, ls in labels.items() if len(ls) > 1 and i not in adjudicated}
    return [item_key(item.payload) for item in store.items(session_id) if item.id in split]


def _print_estimates(blocks: list[str], estimated: int, args, store, session, metric: str | None) -> int:
    """Print the estimate blocks and the metric against people; exit 2 when no estimate was made."""
    print("\n\n".join(blocks))
    if not estimated:
        return fail(f"session {session.name!r}: no reviewed estimate could be made (see above)")
    from evaluators.reports.corrections import metric_agreement_text
    from evaluators.review.metric_agreement import metric_against_people
    try:
        agreement = metric_against_people(store, session.id, source=metric, confidence_level=1 - args.level)
    except ValueError as exc:
        print(f"metric against people: {exc}")
    else:
        print()
        print(metric_agreement_text(agreement))
    return EXIT_OK


def estimate_items(args, store, session, gt: Path | None) -> int:
    """``review estimate`` of a session of any kind whose items carry a metric (memory: the judge score, test
    sets: the keyword score, persona dialogue: the combined score, QA: ``--metric``): the run is the
    session's items, each with its metric; the reviewed ones with a final label are the sample."""
    from evaluators.io.gt_patch import file_sha256
    from evaluators.reports.corrections import reviewed_estimate_text
    from evaluators.review.estimate import design_estimate, human_labels, item_key
    from evaluators.review.gt_patch import final_labels
    from evaluators.review.items import AUTOMATIC, score_at
    from evaluators.review.sampling import session_design, stratum_of

    if not 0 < args.level < 1:
        return fail("--level must be in (0, 1)")
    if gt is not None and gt.is_file() and session.uploads and file_sha256(gt) not in session.uploads:
        return fail(f"session {session.name!r} was not made from {gt}: give the file it was made from as --gt, or "
                    "no --gt (the session's items carry their metric)")
    design = session_design(session.settings)
    if not design.random:
        return fail(f"review estimate: session {session.name!r}: {design.description}; an estimate needs a random "
                    "sample (a session in the random order without a filter, or a stratified / active sample)")
    if session.kind == "qa":
        path, what = (args.metric,), args.metric
    else:
        path, what = AUTOMATIC.get(session.kind, ((), None))
    if not path:
        return fail(f"review estimate: the items of a {session.kind!r} session carry no metric to estimate from "
                    f"(kinds with one: {', '.join(AUTOMATIC)})")
    items = store.items(session.id)
    payloads = {item_key(i.payload): i.payload for i in items}
    values = {k: score_at(p, path) for k, p in payloads.items()}
    finals = final_labels(store, session.id)
    human = human_labels(finals)
    unlabelled = sum(1 for f in finals if item_key(f.item.payload) not in human)
    by = (session.settings or {}).get("sampling", {}).get("by", "metric") if design.design != "uniform" else "metric"
    strata = {k: stratum_of(payloads[k], v, by) for k, v in values.items() if v is not None}
    disagreements = _disagreements(store, session.id)
    runs: dict = {}
    for k in payloads:
        runs.setdefault(k[0], []).append(k)
    blocks, estimated = [], 0
    for system, keys in runs.items():
        if args.system and system != args.system:
            continue
        name = f"{what} ({'.'.join(path)})" + (f" of {system}" if system else "")
        auto = {k: values[k] for k in keys if values[k] is not None}
        if not auto:
            blocks.append(f"{name}: no item carries the metric {'.'.join(path)}")
            continue
        try:
            est = design_estimate(auto, {k: v for k, v in human.items() if k in auto}, design, strata=strata,
                                  metric=name, disagreements=disagreements, n_unlabelled=unlabelled,
                                  confidence_level=1 - args.level)
        except ValueError as exc:
            blocks.append(f"{name}: {exc}")
            continue
        estimated += 1
        blocks.append(reviewed_estimate_text(est))
    if args.system and args.system not in runs:
        return fail(f"no system named {args.system!r}; the runs are: {', '.join(str(s) for s in runs)}")
    return _print_estimates(blocks, estimated, args, store, session, ".".join(path))


def estimate(args, store, session, gt: Path) -> int:
    """``review estimate``: reviewed estimate (PPI) of each run of the file from the session's labels."""
    from evaluators.io.gt_patch import file_sha256
    from evaluators.qa.compare import runs_of
    from evaluators.qa.patch import COUNTED, gold_answers, patch_report
    from evaluators.reports.corrections import reviewed_estimate_text
    from evaluators.review.estimate import design_estimate, human_labels, item_key
    from evaluators.review.gt_patch import build_gt_patch, final_labels
    from evaluators.review.sampling import session_design, stratum_of

    if not 0 < args.level < 1:
        return fail("--level must be in (0, 1)")
    design = session_design(session.settings)
    if not design.random:
        return fail(f"review estimate: session {session.name!r}: {design.description}; an estimate needs a random "
                    "sample (a session in the random order without a filter, or a stratified / active sample)")
    report, error = _qa_report(gt)
    if error:
        return fail(error)
    digest = file_sha256(gt)
    patched, _ = patch_report(report, build_gt_patch(store, session.id, digest, gold_answers(report.records)).entries,
                              digest)
    rescored = {(r.group, r.id): getattr(r, args.metric) for r in patched.records if r.status in COUNTED}
    finals = final_labels(store, session.id)
    human = human_labels(finals, rescored)
    unlabelled = sum(1 for f in finals if item_key(f.item.payload) not in human)
    disagreements = _disagreements(store, session.id)
    payloads = {item_key(i.payload): i.payload for i in store.items(session.id)}
    by = (session.settings or {}).get("sampling", {}).get("by", "metric") if design.design != "uniform" else "metric"
    runs = runs_of([report])
    if args.system and args.system not in runs:
        return fail(f"no system named {args.system!r}; the runs are: {', '.join(runs)}")
    blocks, estimated = [], 0
    for name, records in runs.items():
        if args.system and name != args.system:
            continue
        auto = {(r.group, r.id): getattr(r, args.metric) for r in records if r.status in COUNTED}
        strata = {k: stratum_of(payloads.get(k, {"system": k[0]}), v, by) for k, v in auto.items() if v is not None}
        try:
            est = design_estimate(auto, human, design, strata=strata, metric=f"{args.metric} of {name}",
                                  disagreements=disagreements, n_unlabelled=unlabelled,
                                  confidence_level=1 - args.level)
        except ValueError as exc:
            blocks.append(f"{name}: {exc}")
            continue
        estimated += 1
        blocks.append(reviewed_estimate_text(est))
    return _print_estimates(blocks, estimated, args, store, session, args.metric)


def gate(args) -> int:
    """``review gate``: exit 1 when the candidate is significantly below the baseline."""
    from evaluators.cli.compare import load_runs
    from evaluators.qa.compare import compare_records, runs_of

    if not 0 < args.level < 1:
        return fail("--level must be in (0, 1)")
    if args.test == "mcnemar" and args.metric != "exact_match":
        return fail("McNemar's test is for binary outcomes: use it with --metric exact_match")
    if getattr(args, "baseline_run", None) or getattr(args, "candidate_run", None):
        return _gate_runs(args)
    if not args.baseline or not args.candidate:
        return fail("review gate needs --baseline and --candidate (or --baseline-run and --candidate-run)")
    files = [Path(args.baseline).is_file(), Path(args.candidate).is_file()]
    common = {"gt_patch": args.gt_patch, "workers": 1}
    if args.gt and all(files):        # two prediction files of one GT dataset
        scoring = _scoring_args(input=[args.gt], predictions=[args.baseline, args.candidate], group_field="none",
                                **common)
    elif args.gt:                       # two systems of one file
        scoring = _scoring_args(input=[args.gt], predictions=None, **common)
    elif all(files):                    # two record files
        scoring = _scoring_args(input=[args.baseline, args.candidate], predictions=None, group_field="none", **common)
    else:
        missing = [f for f, ok in zip((args.baseline, args.candidate), files) if not ok]
        return fail(f"no such file: {', '.join(missing)} (name systems of a file with --gt FILE)")
    result, error = load_runs(scoring)
    if error:
        return fail(error)
    reports = result.reports
    from evaluators.cli.qa import baseline_warnings

    for line in baseline_warnings(getattr(args, "baseline_report", None), reports[0].provenance if reports else None):
        print(f"warning: {line}", file=sys.stderr)
    if args.gt and not all(files):
        runs = runs_of(reports)
        for name in (args.baseline, args.candidate):
            if name not in runs:
                return fail(f"no system named {name!r} in {args.gt}; the runs are: {', '.join(runs)}")
        a, b = runs[args.baseline], runs[args.candidate]
    else:
        a, b = list(reports[0].records), list(reports[1].records)
    try:
        c = compare_records(a, b, args.baseline, args.candidate, n_resamples=1, seed=args.seed)
    except ValueError as exc:
        return fail(str(exc))
    key = "exact_match" if args.metric == "exact_match" else "token_f1"
    xa = [getattr(r, f"{key}_a") for r in c.records]
    xb = [getattr(r, f"{key}_b") for r in c.records]
    applied = ""
    if args.gt_patch:
        _, applications = scoring.gt_patch_before
        n = len({c.where for _, app in applications for c in app.changes if c.status == "applied"})
        applied = f" after {n} review correction(s)"
    return _verdict(args, xa, xb, args.baseline, args.candidate, f"{args.metric}{applied}, {c.n_paired} records "
                    "paired by id" + (f" (left out: {c.only_a} only in the baseline, {c.only_b} only in the candidate)"
                                      if c.only_a or c.only_b else ""))


def _gate_runs(args) -> int:
    """``review gate --baseline-run NAME|accepted --candidate-run NAME``: the two runs from the registry, paired
    by item id on the items both scored (refused below 80% common items, as ``runs compare``)."""
    from evaluators.runs import CorruptBlob, RunStore
    from evaluators.runs.compare import TooFewCommon, compare_runs

    if not args.baseline_run or not args.candidate_run:
        return fail("review gate with registry runs needs --baseline-run and --candidate-run")
    if args.gt_patch:
        return fail("--gt-patch goes with files; registry runs take --current-gt (the patches logged since)")
    try:
        store = RunStore(args.db)
        candidate = store.get(args.candidate_run)
        base = args.baseline_run
        if base == "accepted":
            accepted = store.runs(task=candidate.task, dataset=candidate.dataset_digest, accepted=True)
            if not accepted:
                return fail(f"no accepted run of {candidate.task} on {candidate.dataset} (runs accept NAME)")
            base = accepted[0].name
        if args.current_gt:
            from evaluators.runs.rescore import on_current_gt

            import evaluators.tasks

            (a, _), (b, version) = (on_current_gt(store, base, tasks=evaluators.tasks),
                                    on_current_gt(store, args.candidate_run, tasks=evaluators.tasks))
            applied = f" on the current GT (v{version})"
        else:
            a, b, applied = store.load(base), store.load(args.candidate_run), ""
        c = compare_runs(a, b, base, args.candidate_run, metrics=[args.metric], n_resamples=0)
    except (KeyError, CorruptBlob, TooFewCommon, ValueError) as exc:
        return fail(exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc))
    from evaluators.runs.compare import rows_of

    rows_a, rows_b = rows_of(a), rows_of(b)
    col_a, col_b = a.items.values[args.metric], b.items.values[args.metric]
    ids = [i for i in rows_a if i in rows_b and col_a[rows_a[i]] is not None and col_b[rows_b[i]] is not None]
    m = c.metrics[0]
    return _verdict(args, [col_a[rows_a[i]] for i in ids], [col_b[rows_b[i]] for i in ids], base, args.candidate_run,
                    f"{args.metric}{applied}, {m.n_paired} items paired by id (n common = {c.n_common} of {c.n_a} "
                    f"and {c.n_b})")


def _verdict(args, xa, xb, baseline: str, candidate: str, head: str) -> int:
    """The gate's test of ``xb`` against ``xa`` (paired, same items), printed; 1 when significantly worse."""
    from evaluators.metrics.statistics import approximate_randomization, mcnemar, paired_bootstrap
    from evaluators.reports.format import p_value, percent, signed

    boot = paired_bootstrap(xa, xb, n_resamples=max(1, args.resamples), confidence_level=1 - args.level,
                            seed=args.seed)
    if args.test == "bootstrap":
        p, bound, method = boot.p_value, boot.p_value_is_bound, boot.method
    elif args.test == "randomization":
        ar = approximate_randomization(xa, xb, n_resamples=max(1, args.resamples), seed=args.seed)
        p, bound, method = ar.p_value, ar.p_value_is_bound, ar.method
    else:
        p, bound, method = mcnemar(xa, xb).p_value, False, "McNemar exact (binomial)"
    worse = boot.delta < 0 and p < args.level
    print(f"gate: {head}")
    print(f"  baseline  {baseline}: {percent(boot.mean_a)}")
    print(f"  candidate {candidate}: {percent(boot.mean_b)}")
    print(f"  delta {signed(100 * boot.delta, 2)} points, {100 * (1 - args.level):g}% CI "
          f"{signed(100 * boot.ci_low, 2)} to {signed(100 * boot.ci_high, 2)} (paired bootstrap); "
          f"{p_value(p, bound)} ({method}); level {args.level:g}")
    print(f"  records: candidate higher {boot.won}, lower {boot.lost}, tied {boot.tied}")
    if args.test == "bootstrap" and boot.small_sample:
        print(f"  [!] the paired bootstrap p-value is not trustworthy ({boot.small_sample}): use --test randomization "
              "(exact sign flips) or --test mcnemar")
    if worse:
        print("FAIL: the candidate is significantly below the baseline")
        return EXIT_FAILED
    print("PASS: the candidate is not significantly below the baseline")
    return EXIT_OK
