"""``python -m evaluators memory ...``: score long-term-memory QA results.

Examples::

    # an EvalResult JSONL (or mem0's LoCoMo results.json), text metrics by type
    python -m evaluators memory --results results.jsonl

    # LoCoMo's own F1 (the benchmark's published scoring) on mem0's predictions
    python -m evaluators memory --results results.json --questions locomo10.json --parity locomo

    # LongMemEval predictions keyed by question id, judged by a local endpoint, cached
    EVALBOARD_JUDGE_BASE_URL=http://127.0.0.1:8000/v1 EVALBOARD_JUDGE_MODEL=qwen2.5 \\
    python -m evaluators memory --questions longmemeval_oracle.json --predictions preds.jsonl \\
        --judge --cache judge_cache.json

    # an official judge's labels: per-type accuracy, and agreement when we judge too
    python -m evaluators memory --questions longmemeval_oracle.json --labels preds.eval-results-gpt-4o
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from evaluators.io import InputIssue
from evaluators.io.sources import read_file_bytes
from evaluators.memory.metrics import METEOR_DATA_HINT
from evaluators.parallel import add_workers_argument, worker_count
from evaluators.reports.format import problem_lines
from evaluators.reports.memory import questions_csv, report_json, report_markdown
from evaluators.cli.common import EXIT_FAILED, EXIT_OK, fail


def add_parser(subparsers) -> None:
    """Register the ``memory`` subcommand."""
    p = subparsers.add_parser(
        "memory", help="long-term-memory QA (LoCoMo, LongMemEval): metrics by question type, LLM judge",
        description="Score long-term-memory QA results by question type, optionally with an LLM judge (cached), "
                    "LoCoMo's own F1 (--parity locomo) and agreement with stored judge labels.",
    )
    from evaluators.cli.common import Positional, add_positionals

    add_positionals(p, Positional("results", "RESULTS", "--results", required=False,
                                  help="EvalResult JSONL/JSON/CSV, or mem0 LoCoMo results.json"))
    p.add_argument("--results", help="EvalResult JSONL/JSON/CSV, or mem0 LoCoMo results.json (the same as RESULTS)")
    p.add_argument("--questions", help="LoCoMo (locomo10.json) or LongMemEval question file")
    p.add_argument("--predictions", help="predictions keyed by question_id (JSONL/JSON/CSV); joined with --questions")
    p.add_argument("--metrics", help="comma-separated metrics (default: judge_score and the text metrics but "
                                     "meteor, bert_f1, semantic_similarity; locomo_f1 with --parity locomo). "
                                     f"meteor needs nltk's WordNet data: run `{METEOR_DATA_HINT}` once (with "
                                     "network), then --metrics ...,meteor. bert_f1, semantic_similarity: pip install "
                                     "-r requirements-optional.txt. The earlier names f1, exact_match, "
                                     "sbert_similarity are still accepted")
    p.add_argument("--judge", action="store_true", help="run the LLM judge (endpoint from EVALBOARD_JUDGE_* "
                                                        "variables or --base-url/--model)")
    p.add_argument("--judge-mode", default="auto", help="auto (by question type) or one judge mode for all")
    p.add_argument("--cache", help="judge cache JSON: reused, filled in, written as judgements arrive")
    p.add_argument("--judge-calls", dest="judge_calls", metavar="FILE",
                   help="--judge: the judge call cache (SQLite, shared with other workers, runs and `judge run`): "
                        "each reply stored as it arrives, so a killed run resumes without asking again")
    p.add_argument("--judge-rate", dest="judge_rate", type=float, metavar="PER_S",
                   help="--judge: at most this many requests a second (default: no limit)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", help="judge model name")
    p.add_argument("--labels", help="stored judge labels (LongMemEval eval-results JSONL, records with a label, "
                                    "mem0 results): per-type accuracy and agreement with our judge")
    p.add_argument("--parity", choices=["locomo"], help="add LoCoMo's own F1 (published scoring code): a table by "
                                                         "category and the locomo_f1 metric")
    p.add_argument("--user-dict", dest="user_dict", metavar="FILE",
                   help="a jieba user dictionary (jieba.load_userdict format) for the jieba tokenizations of the "
                        "Tokenization analysis (evalboard sensitivity --memory, the page's Tokenization view); "
                        "its SHA-256 is written into the report's provenance (the metrics cut by characters)")
    p.add_argument("--write-results", help="write the joined EvalResult records here (JSONL)")
    p.add_argument("--write-cache", dest="write_cache", metavar="FILE",
                   help="write the judge verdicts of these questions here (the judge cache layout --cache reads; the "
                        "page's 'Judge cache (JSON)'); not written when no question has one")
    p.add_argument("--out", help="write the report here (default: stdout); its format from --format, else from the "
                                 "extension (.md, .csv, .html; anything else JSON)")
    p.add_argument("--format", choices=["table", "json", "md", "csv", "html"],
                   help="table (readable on a terminal: the default on stdout), json (full report, the default in "
                        "--out), md (tables), csv (one row per question), html (self-contained report)")
    p.add_argument("--ci-resamples", type=int, default=10_000, metavar="N",
                   help="bootstrap resamples for the 95%% confidence interval of each mean (0: none; default 10000)")
    add_workers_argument(p)
    from evaluators.cli.patching import add_gt_patch_argument

    add_gt_patch_argument(p, "review corrections of the ground truth (a GT patch made for the file the answers come "
                             "with: --results when given, else --questions; JSONL, as written by 'review patch'); "
                             "repeatable, applied in order. A corrected answer replaces the question's ground truth "
                             "(its judgement is judged again); an accepted answer is one more reference (text "
                             "metrics: the best over the references). Prints the scores before and after with a "
                             "paired test (to stderr when the report goes to stdout) and adds gt_patch to the JSON")
    from evaluators.cli.runlog import add_log_arguments

    add_log_arguments(p)
    from evaluators.cli.sharding import add_shard_arguments

    add_shard_arguments(p, "questions", "--out",
                        "--judge, --log, --write-results, --write-cache or --format other than json")
    p.set_defaults(func=run)


#: The input options, by the role :func:`evaluators.memory.inputs.resolve_inputs` gives them.
INPUT_ROLES = ("results", "questions", "predictions", "labels")


def _issue_lines(issues: list[InputIssue]) -> list[str]:
    return problem_lines(issues)  # identical problems folded into one line with their count


def _input_files(args) -> dict[str, tuple[str, bytes] | None]:
    """``role -> (path, bytes)`` of the input options given; raises OSError naming the file."""
    files: dict[str, tuple[str, bytes] | None] = {}
    for role in INPUT_ROLES:
        path = getattr(args, role)
        if not path:
            files[role] = None
            continue
        try:
            files[role] = (path, read_file_bytes(path))
        except OSError as exc:
            raise OSError(f"cannot read the {role} file {path}: {exc.strerror or exc}") from None
    return files


def run(args) -> int:
    """Execute ``memory``; returns 0, 2 with the reason on stderr for unusable input, or 1 when ``--judge``
    asked the endpoint and every request failed (the report is still written).

    The inputs are resolved by :func:`evaluators.memory.inputs.resolve_inputs` and scored by
    :func:`evaluators.memory.run.run_memory`, as on the Long Memory page; the rules it applied are
    printed (``note: ...``) and written under ``input.notes``.
    """
    from dataclasses import replace

    from evaluators.io import InputError
    from evaluators.memory.inputs import resolve_inputs
    from evaluators.memory.records import results_to_jsonl
    from evaluators.memory.run import MemoryConfig, run_memory

    if not (args.results or args.questions):
        return fail("give --results, or --questions (with --predictions or --labels)")
    from evaluators.cli.patching import patches_of

    patches, error = patches_of(args)  # --gt-patch: read before anything is scored
    if error:
        return fail(error)
    if args.user_dict and not Path(args.user_dict).is_file():
        return fail(f"cannot read {args.user_dict}: no such file")
    try:
        files = _input_files(args)
        inputs = resolve_inputs(**files)
        config = MemoryConfig(metrics=args.metrics.split(",") if args.metrics else None,
                              parity=args.parity == "locomo", ci_resamples=max(0, args.ci_resamples),
                              workers=worker_count(args.workers), judge_mode=args.judge_mode,
                              judge_store=args.cache, judge_calls=args.judge_calls,
                              judge_rate=args.judge_rate, gt_patch=patches,
                              user_dict=args.user_dict)
        _, unavailable = config.metric_names()
    except (ValueError, OSError, ImportError) as exc:  # unreadable file, unknown metric, bad --workers, no registry
        return fail(exc)
    for name, reason in unavailable.items():
        print(f"warning: {name} left out: {reason}", file=sys.stderr)
    for line in _issue_lines(inputs.issues):
        print(line, file=sys.stderr)
    for note in inputs.notes:
        print(f"note: {note}", file=sys.stderr)
    results = inputs.results
    if not results:
        return fail(f"no usable question in {args.results or args.questions} (see the problems above)")
    if args.shard:
        from evaluators.cli.sharding import memory as shard

        return shard(args, inputs, config)
    if args.write_results:
        try:
            Path(args.write_results).write_text(results_to_jsonl(results), encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write the results {args.write_results}: {exc.strerror or exc}")
    if args.judge:
        from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient

        try:
            llm_config = LLMConfig.from_env(base_url=args.base_url, model=args.model)
        except ValueError as exc:
            return fail(exc)
        if llm_config is None:
            return fail("--judge needs an endpoint: set EVALBOARD_JUDGE_BASE_URL and EVALBOARD_JUDGE_MODEL "
                        "(or --base-url and --model)")
        config = replace(config, judge=OpenAICompatibleClient(llm_config))
    try:
        report = run_memory(inputs, config, progress=_progress if args.judge and sys.stderr.isatty() else None)
    except OSError as exc:  # only the judge store is written by the run
        return fail(f"cannot write the judge cache {args.cache}: {exc.strerror or exc}; nothing was sent")
    except (InputError, ValueError, ImportError) as exc:  # an unreadable store; MetricUnavailable names the install
        return fail(exc)
    if report.judge_cache is not None:
        for line in _issue_lines(report.judge_cache.issues):
            print(line, file=sys.stderr)
    if args.write_cache:
        from evaluators.reports.memory import judge_cache_of

        verdicts = judge_cache_of(report, results)
        if verdicts is None:
            print(f"warning: no judge verdict for these questions: {args.write_cache} not written", file=sys.stderr)
        else:
            try:
                Path(args.write_cache).write_text(verdicts.to_json(), encoding="utf-8")
            except OSError as exc:
                print(f"error: cannot write the judge cache {args.write_cache}: {exc.strerror or exc}",
                      file=sys.stderr)
                return 2
    all_failed = False
    if report.judge_run is not None:
        all_failed = _judge_summary(report.judge_run)
    elif args.cache:
        error = cache_refusal(report, results, args.cache)
        if error:
            return fail(error)
    if args.log:  # the run registry: the dataset is the file the GT comes with, the inputs kept for re-scoring
        from evaluators.cli.runlog import log_files
        from evaluators.tasks.builtin import memory_run_result

        predictions = [args.results] if args.results else [p for p in (args.predictions, args.labels) if p]
        kept = {role: (Path(path).name, data) for role, f in files.items() if f for path, data in (f,)}
        if args.judge or args.cache:  # judge scores from an endpoint or a cache: re-scoring could not give them
            print("note: judged with --judge / --cache: the input files are not kept, this run cannot be re-scored "
                  "on a later GT version", file=sys.stderr)
            kept = None
        error = log_files(args, memory_run_result(report), gt=args.results or args.questions, predictions=predictions,
                          inputs=kept)
        if error:
            return fail(error)
    fmt = args.format or (({".md": "md", ".csv": "csv", ".html": "html", ".htm": "html"}.get(
        Path(args.out).suffix.lower(), "json")) if args.out else "table")
    if report.corrections is not None:
        from evaluators.cli.patching import print_corrections

        print_corrections(report.corrections, sys.stdout if args.out or fmt == "table" else sys.stderr)
    if fmt == "table":
        from evaluators.reports.memory import report_text
        text = report_text(report.to_dict())
    elif fmt == "json":
        text = report_json(report)
    elif fmt == "md":
        text = report_markdown(report.to_dict())
    elif fmt == "html":
        from evaluators.reports.html import memory_report
        text = memory_report(report.to_dict(), corrections=report.corrections)
    else:
        text = questions_csv(report.rows, results)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write the report {args.out}: {exc.strerror or exc}")
    else:
        sys.stdout.write(text)
    return EXIT_FAILED if all_failed else EXIT_OK


def cache_refusal(report, results, cache) -> str | None:
    """``--cache`` without ``--judge``, read only as the page reads a judge cache: the refusal (a cache that cannot
    be read, or that holds none of the questions) or ``None``, the stale and missing judgements warned of on
    stderr.  The single process and ``merge`` of its shards (on the pooled report) both decide it here.

    Parameters
    ----------
    report : MemoryReport
        The run's report (its ``judge_cache_problem``, ``judgements`` and ``stale``).
    results : sequence of EvalResult
        The run's questions, in input order.
    cache : str
        The ``--cache`` path, for the messages.
    """
    if report.judge_cache_problem is not None:
        return f"{report.judge_cache_problem.location()}: {report.judge_cache_problem.message}"
    judgements, stale = report.judgements, report.stale
    missing = [r.question_id for r in results if r.question_id not in judgements]
    if not judgements:
        return (f"{len(missing)} question(s) are not in the judge cache {cache} (none of the questions is); run "
                "with --judge and an endpoint to judge them")
    if stale:
        print(f"warning: {len(stale)} cached judgement(s) no longer match their question, ground truth or "
              f"prediction and are not used (e.g. {', '.join(stale[:3])})", file=sys.stderr)
    if missing:
        print(f"warning: {len(missing)} question(s) are not in the judge cache and have no judge score "
              f"(e.g. {', '.join(missing[:3])}); --judge judges them", file=sys.stderr)
    return None


def _judge_summary(run_) -> bool:
    """Print failed judge requests to stderr; True when every request sent in this run failed.

    Rule-based judgements (adversarial questions, ``model == "rule"``) send no request and do
    not count; cached ones are not in this run.
    """
    if not run_.n_errors:
        return False
    errors = Counter(j.error for j in run_.judgements.values() if j.error)
    n_requests = run_.n_judged - sum(1 for j in run_.judgements.values() if j.model == "rule" and j.ok)
    print(f"judge: {run_.n_errors} of {n_requests} judge request(s) of this run failed; most frequent error(s):",
          file=sys.stderr)
    for message, n in errors.most_common(3):
        print(f"  {n} x {message}", file=sys.stderr)
    failed = run_.n_errors >= n_requests
    if failed:
        print("error: every judge request failed; the report is written without judge scores (exit 1)",
              file=sys.stderr)
    return failed


def _progress(done: int, total: int) -> None:
    print(f"\rjudged {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)
