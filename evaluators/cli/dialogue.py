"""``python -m evaluators dialogue``: score persona replies from files or a live endpoint.

Examples::

    python -m evaluators dialogue --cases cases.json --pred run_a.jsonl --pred run_b.csv --out results/
    python -m evaluators dialogue --cases cases.json --endpoint http://127.0.0.1:8000 --model qwen3-32B
    python -m evaluators dialogue --cases report.json --pred report.json --mode difflib   # re-score a stored run
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from pathlib import Path

from evaluators.io.sources import read_file_bytes
from evaluators.parallel import add_workers_argument, worker_count
from evaluators.reports.format import problem_lines
from evaluators.cli.common import EXIT_OK, fail


def add_parser(subparsers) -> None:
    """Register the ``dialogue`` subcommand."""
    p = subparsers.add_parser(
        "dialogue", help="persona dialogue replies by scene and model (files or a live endpoint)",
        description="Score persona chatbot replies against expected responses, per case, scene and model.",
    )
    from evaluators.cli.common import Positional, add_positionals

    add_positionals(p, Positional("cases", "CASES", "--cases", help="test cases"),
                    Positional("pred", "PRED", "--pred", many=True, required=False,
                               help="predictions files, one or more"))
    p.add_argument("--cases", help="test cases (test_cases_by_scene JSON, a stored report, JSONL, CSV); the same as "
                                   "CASES")
    p.add_argument("--pred", action="append", default=[], metavar="FILE",
                   help="predictions file (stored JSON report, or CSV/JSONL with model, scene, dialogue_index, "
                        "prediction); repeat for several models")
    p.add_argument("--endpoint", help="live mode: base URL of the chat server (POST /chat, POST /reset)")
    p.add_argument("--model", action="append", default=[], metavar="NAME",
                   help="live mode: model_config_name to ask (repeatable); with --pred, the name for files "
                        "without a model column")
    p.add_argument("--timeout", type=float, default=60.0, help="live mode: seconds per request (default 60)")
    p.add_argument("--retries", type=int, default=2, help="live mode: retries per failed request (default 2)")
    p.add_argument("--checkpoint", help="live mode: JSONL file to resume from and append to")
    add_workers_argument(p)
    p.add_argument("--mode", choices=["default", "difflib"], default="default",
                   help="difflib: exact/fuzzy/keyword exactly as the earlier persona script")
    p.add_argument("--user-dict", dest="user_dict", metavar="FILE",
                   help="a jieba user dictionary for keyword_jaccard (its SHA-256 goes into the signature)")
    p.add_argument("--metrics", help="comma-separated metric names (default: the combined score's and "
                                     "token_f1_char, rougeL, bleu4); see --list-metrics")
    p.add_argument("--weights", help="combined-score weights, e.g. exact_match_normalized=0.5,fuzzy_ratio=0.5 "
                                     "(in --mode difflib each applies to the metric's difflib variant)")
    p.add_argument("--list-metrics", action="store_true", help="list the metrics with availability and exit")
    p.add_argument("--out", help="folder for the annotation CSV, JSON report and summary")
    p.add_argument("--prefix", default="persona_evaluation", help="file name prefix in --out (a timestamp is added)")
    p.add_argument("--format", choices=["table", "text", "json", "csv"], default="table",
                   help="what to print: table (default; also 'text'), the summary per model; json (the report) or "
                        "csv (the human-annotation rows), alone on stdout for scripts")
    from evaluators.cli.patching import add_gt_patch_argument

    add_gt_patch_argument(p, "review corrections of the reference replies (a GT patch made for the --cases file, "
                             "JSONL, as written by 'review patch'; record ids scene#dialogue_index#occurrence); "
                             "repeatable, applied in order. A corrected reply replaces the case's expected "
                             "response; an accepted reply is one more reference (the reference with the highest "
                             "combined score counts). Prints each model's scores before and after with a paired "
                             "test and the rank flips (to stderr with --format json)")
    from evaluators.cli.runlog import add_log_arguments

    add_log_arguments(p)
    from evaluators.cli.sharding import add_shard_arguments

    add_shard_arguments(p, "(model, case) replies", "--out (with --shard: the shard file, not a folder)",
                        "--endpoint, --log or --format csv")
    p.set_defaults(func=run)


def _parse_weights(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        out[name.strip()] = float(value)
    return out


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code (2: unusable input, reason on stderr)."""
    from evaluators.dialogue.inputs import PredictionSet, load_cases, load_predictions
    from evaluators.dialogue.run import DialogueInputs, run_dialogue
    from evaluators.dialogue.scoring import DEFAULT_METRICS, DEFAULT_WEIGHTS, DialogueConfig
    from evaluators.metrics.registry import list_metrics
    from evaluators.reports.dialogue import annotation_csv, json_report_text, summary_text

    if args.list_metrics:
        for m in list_metrics():
            reason = m.unavailable_reason()
            print(f"{m.name:20s} {m.range} {'available' if reason is None else reason}\n{'':20s} {m.signature}")
        return EXIT_OK
    if not args.pred and not args.endpoint:
        return fail("give --pred FILE (one or more) or --endpoint URL --model NAME")
    if args.endpoint and not args.model:
        return fail("--endpoint needs --model NAME")
    if args.endpoint and args.shard:  # refused before any request is sent
        return fail("--shard does not go with --endpoint: score the endpoint with --checkpoint FILE, then shard "
                    "that file with --pred FILE --shard i/N")
    if args.endpoint and args.log:
        return fail("--log keeps runs of prediction files: score the endpoint with --checkpoint FILE, then log "
                    "that file with --pred FILE --log")
    from evaluators.cli.patching import patches_of

    patches, error = patches_of(args)  # --gt-patch: read before anything is scored
    if error:
        return fail(error)
    try:
        cases_path = Path(args.cases)
        case_set = load_cases(read_file_bytes(cases_path), cases_path.name)
    except OSError as exc:
        return fail(f"cannot read cases file {args.cases}: {exc}")
    for line in problem_lines(case_set.issues):
        print(line, file=sys.stderr)
    if not case_set.cases:
        return fail(f"no usable test case in {args.cases}")
    pred_sets: list[PredictionSet] = []
    default_model = args.model[0] if (args.model and not args.endpoint) else None
    for file in args.pred:
        try:
            data = read_file_bytes(file)
        except OSError as exc:
            print(f"error: cannot read predictions file {file}: {exc}", file=sys.stderr)
            continue
        pred_sets.append(load_predictions(data, Path(file).name, default_model=default_model))
    if args.endpoint:
        from evaluators.dialogue.live import ChatClient, EndpointConfig, run_live

        for model in args.model:
            try:  # settings, URL rules (evaluators.net) and the checkpoint, before anything is sent
                cfg = EndpointConfig(args.endpoint, model, timeout_s=args.timeout, max_retries=args.retries)
                client = ChatClient(cfg)
                if args.checkpoint:
                    Path(args.checkpoint).open("a", encoding="utf-8").close()
            except ValueError as exc:  # also evaluators.net.URLRejected
                return fail(f"live mode, --endpoint {args.endpoint}: {exc}")
            except OSError as exc:
                return fail(f"cannot write the checkpoint {args.checkpoint}: {exc.strerror or exc}")

            def show(done, total, row, model=model):
                mark = "!" if row.error else "."
                print(f"\r{model}: {done}/{total} {mark}", end="", file=sys.stderr, flush=True)

            live = run_live(case_set.cases, cfg, checkpoint=args.checkpoint, progress=show, client=client)
            print(f"\n{model}: {live.n_called} called, {live.n_resumed} resumed, {live.n_errors} errors",
                  file=sys.stderr)
            for err in live.reset_errors:
                print(f"warning: reset failed {err}", file=sys.stderr)
            pred_sets.append(PredictionSet(rows=live.rows, files=[f"{args.endpoint} ({model})"]))
    inputs = DialogueInputs.of(case_set, pred_sets, patches)
    preds = inputs.combined()
    for line in problem_lines(preds.issues):
        print(line, file=sys.stderr)
    if not preds.rows:
        return fail("no usable prediction row")
    from evaluators.dialogue.matching import prediction_fit

    for fit in prediction_fit(case_set.cases, pred_sets):  # the counts first, as the page's headline
        if headline := fit.headline(f"the cases file {Path(args.cases).name}"):
            print(f"warning: {headline}", file=sys.stderr)
            if fit.offers_own_cases:
                print(f"  to score it against its own cases, give it as the cases file too: "
                      f"evalboard dialogue {fit.file} {fit.file}", file=sys.stderr)
    if args.user_dict and not os.path.isfile(args.user_dict):
        return fail(f"cannot read {args.user_dict}: no such file")
    try:
        metrics = tuple(m.strip() for m in args.metrics.split(",")) if args.metrics else DEFAULT_METRICS
        weights = _parse_weights(args.weights) if args.weights else dict(DEFAULT_WEIGHTS)
        config = DialogueConfig(metrics=metrics, weights=weights, mode=args.mode, user_dict=args.user_dict)
        if args.shard:
            from evaluators.cli.sharding import dialogue as shard

            return shard(args, inputs, config)
        evaluation = run_dialogue(inputs, config, predictions=preds, workers=worker_count(args.workers))
    except (KeyError, ValueError) as exc:
        return fail(exc)
    if args.log:  # the run registry: one run per model, the dataset the cases file, the inputs kept
        from evaluators.cli.runlog import log_files
        from evaluators.tasks.builtin import dialogue_run_result

        try:  # kept for re-scoring unless reading them needs an option more (--model, --user-dict)
            kept = {} if args.model or args.user_dict else {"cases": (cases_path.name, read_file_bytes(cases_path))}
            kept.update({"predictions" if n == 0 else f"predictions_{n + 1}": (Path(f).name, read_file_bytes(f))
                         for n, f in enumerate(args.pred) if kept})
        except OSError as exc:
            return fail(f"cannot log the run: {exc.strerror or exc}")
        error = log_files(args, dialogue_run_result(evaluation), gt=cases_path, predictions=args.pred, inputs=kept)
        if error:
            return fail(error)
    now = datetime.now()
    matching_issues = [i for i in evaluation.issues if i.kind in ("unmatched", "duplicate", "expected_mismatch",
                                                                        "context_mismatch")]
    matching_lines = problem_lines(matching_issues)
    for line in matching_lines[:20]:
        print(line, file=sys.stderr)
    if len(matching_lines) > 20:
        print(f"... and {len(matching_lines) - 20} more matching warnings (see the JSON report)", file=sys.stderr)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = f"{args.prefix}_{now.strftime('%Y%m%d%H%M')}"
        (out / f"{stem}_human_annotation.csv").write_text(annotation_csv(evaluation), encoding="utf-8", newline="")
        (out / f"{stem}_report.json").write_text(json_report_text(evaluation, now), encoding="utf-8")
        (out / f"{stem}_summary.txt").write_text(summary_text(evaluation, now), encoding="utf-8")
        print(f"wrote {out / stem}_{{human_annotation.csv,report.json,summary.txt}}", file=sys.stderr)
    if args.format == "csv":
        sys.stdout.write(annotation_csv(evaluation))
    else:
        print(json_report_text(evaluation, now) if args.format == "json" else summary_text(evaluation, now))
    if evaluation.corrections is not None:  # the scores above are after the corrections
        from evaluators.cli.patching import print_corrections

        print_corrections(evaluation.corrections, sys.stderr if args.format in ("json", "csv") else sys.stdout)
    return EXIT_OK
