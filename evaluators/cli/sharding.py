"""``--shard i/N`` for the batch commands: the options of every one of them (:func:`add_shard_arguments`), the
preamble and refusals they share (:func:`begin`) and, for ``memory``, ``testsets``, ``dialogue`` and ``compare``,
the writing of the shard file (:mod:`evaluators.shards`); each command's scoring of a shard lives in its task's
``shards`` module.  ``--workers N`` / ``--scheduler`` score a shard's own items in parallel, as they score the
single process's (the shard file is the same for any N).

Kept out of the commands' own modules so that each of them only registers the options and hands over to this
module once its inputs and settings are read (``compare``: before, it reads its inputs here as ``load_runs`` does).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

from evaluators.cli.common import EXIT_OK, fail


def add_shard_arguments(p, items: str = "items", out: str = "--out", refused: str = "--log") -> None:
    """Register ``--shard i/N`` and ``--shard-seed S``, the one way every batch command takes them (``items``: what is
    dealt; ``out``: the shard file's option; ``refused``: the options that do not go with ``--shard``, for the
    help)."""
    p.add_argument("--shard", metavar="i/N",
                   help=f"score shard i of N of the {items} only (dealt by a seeded hash of their id, balanced within "
                        f"each slice) and write their per-item results with a manifest to {out}; 'merge' pools the N "
                        "shard files into the report of the whole run. --workers N / --scheduler score the shard's "
                        f"own {items} in parallel (the shard file is the same for any N); not with {refused}")
    p.add_argument("--shard-seed", type=int, default=0, metavar="S",
                   help=f"with --shard: seed of the assignment of {items} to shards (default 0; equal in every shard)")


def begin(args, refused: Iterable[tuple[str, Any]], output: str | None, out_flag: str = "--out"
          ) -> tuple[int, int] | int:
    """The shard preamble every command runs before it scores: ``(i, N)`` of ``--shard``, or the exit code 2 (the
    reason on stderr) for a malformed ``--shard``, an option given that does not go with it (``refused``:
    ``(flag, given)`` pairs) or no shard file named (``output``, the value of ``out_flag``)."""
    from evaluators.shards import ShardError, parse_shard

    try:
        where = parse_shard(args.shard)
    except ShardError as exc:
        return fail(str(exc))
    others = [flag for flag, given in refused if given]
    if others:
        return fail(f"--shard does not go with {', '.join(others)} (yet): a shard file holds one run's per-item "
                    "results; 'merge' makes the report")
    if not output:
        return fail(f"--shard needs {out_flag} FILE (the shard file that 'merge' reads)")
    return where


def digests(paths: dict[str, str | None]) -> dict[str, Any]:
    """``{role}_digest`` (SHA-256, as ``--log`` records it; ``None`` for an input not given) of each input path."""
    from evaluators.cli.runlog import path_digest

    from pathlib import Path

    return {f"{role}_digest": (path_digest(p) if p and Path(p).exists() else None) for role, p in paths.items()}


def patch_files(names: Sequence[str] | None) -> list[tuple[str, bytes]]:
    """``(name, bytes)`` of the ``--gt-patch`` files (read already, and checked, by the command): they travel in the
    shard file and the merge applies them once, to the pooled report (``OSError`` when one cannot be read)."""
    from evaluators.io.sources import read_file_bytes

    return [(name, read_file_bytes(name)) for name in names or ()]


def checked_patches(names: Sequence[str] | None) -> tuple[list[tuple[str, bytes]], str | None]:
    """``(patches, error)``: the ``--gt-patch`` files checked as the command checks them (unreadable, or without a
    usable line: the error) and read (:func:`patch_files`); applied once, by 'merge', to the pooled reports."""
    if not names:
        return [], None
    from evaluators.cli.patching import read_patch_set

    _, error = read_patch_set(names)
    if error:
        return [], error
    try:
        return patch_files(names), None
    except OSError as exc:
        return [], f"cannot read {exc.filename}: {exc.strerror or exc}"


def patch_digests(patches: Sequence[tuple[str, bytes]]) -> list[str]:
    """The patches' SHA-256, in order (the manifest's ``input.patches``: a shard without them is another run)."""
    import hashlib

    return [hashlib.sha256(data).hexdigest() for _, data in patches]


def patch_extra(patches: Sequence[tuple[str, bytes]]) -> list[dict[str, Any]]:
    """The patches as the shard file's ``extra.gt_patches`` (name and bytes, typed JSON)."""
    from evaluators.io.typed_json import encode

    return [{"name": name, "data": encode(data)} for name, data in patches]


def write(command: str, shard: int, n_shards: int, seed: int, output: str, *, input: dict[str, Any],  # noqa: A002
          n_items: int, assignment: str, config: Any, signature: str, provenance: dict, decision: dict,
          keys: Sequence[tuple], columns: Sequence[str], rows: Iterable[Sequence], extra: dict[str, Any]) -> int:
    """Write the shard file (:func:`evaluators.shards.write_shard`) and say so on stderr; returns the exit code."""
    from evaluators.shards import manifest, write_shard

    head = manifest(command, shard, n_shards, seed=seed, input={"gt_digest": None, "predictions_digest": None,
                                                                "patches": [], **input},
                    n_items=n_items, assignment=assignment, config=config, signature=signature,
                    provenance=provenance, decision=decision, items=keys)
    try:
        write_shard(output, head, columns, rows, extra=extra)
    except OSError as exc:
        return fail(f"cannot write {output}: {exc.strerror or exc}")
    print(f"shard {shard} of {n_shards}: {len(keys)} of {n_items} items written to {output}", file=sys.stderr)
    return EXIT_OK


# ------------------------------------------------------------------------------------------ memory

def memory(args, inputs, config) -> int:
    """``memory ... --shard i/N --out FILE``: score one shard's questions and write its shard file."""
    from dataclasses import replace

    from evaluators.memory.metrics import metric_signatures
    from evaluators.memory.run import text_provenance
    from evaluators.memory.shards import COLUMNS, keys_of, plan_decision, score_shard, shard_extra, shard_rows

    where = begin(args, (("--judge", args.judge), ("--log", args.log), ("--write-results", args.write_results),
                         ("--write-cache", args.write_cache),
                         ("--format " + str(args.format), args.format not in (None, "json"))), args.out)
    if isinstance(where, int):
        return where
    shard, n_shards = where
    try:
        result = score_shard(inputs, config, shard, n_shards, args.shard_seed)
        patches = patch_files(args.gt_patch)
    except (ValueError, ImportError) as exc:  # GTPatchMismatch is a ValueError
        return fail(exc)
    except OSError as exc:
        return fail(f"cannot read {exc.filename}: {exc.strerror or exc}")
    # how a shard was scored, not what: equal in every shard's manifest (the patches travel beside it)
    config = replace(config, workers=1, gt_patch=None)
    keys = keys_of(inputs.results)
    return write("memory", shard, n_shards, args.shard_seed, args.out,
                 input={"name": args.results or args.questions, "patches": patch_digests(patches),
                        **digests({role: getattr(args, role) for role in ("results", "questions", "predictions",
                                                                          "labels", "cache")})},
                 n_items=result.n_questions, assignment=result.assignment, config=config,
                 signature=metric_signatures(result.plan.names), provenance=text_provenance(config),
                 decision=plan_decision(result), keys=[keys[k] for k in result.positions], columns=COLUMNS,
                 rows=shard_rows(inputs, result),
                 extra={**shard_extra(inputs, result), "gt_patches": patch_extra(patches)})


# ------------------------------------------------------------------------------------------ testsets

def testsets(args, inputs, config) -> int:
    """``testsets ITEMS ANSWERS --shard i/N --output-file FILE``: score one shard's items and write its shard file."""
    from dataclasses import replace

    from evaluators.io import InputError
    from evaluators.parallel import worker_count
    from evaluators.testsets.evaluate import signature
    from evaluators.testsets.shards import COLUMNS, score_shard, shard_extra, shard_rows

    where = begin(args, (("--log", args.log), ("--answer-template", args.answer_template),
                         ("--format " + args.format, args.format not in ("table", "json"))), args.output_file,
                  "--output-file")
    if isinstance(where, int):
        return where
    shard, n_shards = where
    try:
        result = score_shard(inputs, config, shard, n_shards, args.shard_seed, workers=worker_count(args.workers))
        patches = patch_files(args.gt_patch)
    except (InputError, ValueError) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot read {exc.filename}: {exc.strerror or exc}")
    if not result.test_set.items:
        return fail(f"{args.items}: no valid item")
    if not result.answers.answers:  # the whole answers file is read by every shard: refused as one process does
        return fail(f"{args.pred}: no answers read (expected {{id: answer}} or records with id and answer)")
    return write("testsets", shard, n_shards, args.shard_seed, args.output_file,
                 input={"name": args.items, **digests({"gt": args.items, "predictions": args.pred}),
                        "patches": patch_digests(patches)},
                 n_items=len(result.keys), assignment=result.assignment, config=replace(config, gt_patch=None),
                 signature=signature(result.test_set.kind), provenance={}, decision={"kind": result.test_set.kind},
                 keys=[result.keys[k] for k in result.positions], columns=COLUMNS, rows=shard_rows(result),
                 extra={**shard_extra(result), "gt_patches": patch_extra(patches)})


# ------------------------------------------------------------------------------------------ dialogue

def dialogue(args, inputs, config) -> int:
    """``dialogue CASES PRED... --shard i/N --out FILE``: score one shard's replies and write its shard file (with
    ``--shard``, ``--out`` names the shard file, not a folder)."""
    from evaluators.dialogue.shards import COLUMNS, score_shard, shard_rows
    from evaluators.io.typed_json import encode
    from evaluators.parallel import worker_count

    where = begin(args, (("--endpoint", args.endpoint), ("--log", args.log),
                         ("--format " + args.format, args.format not in ("table", "text", "json"))), args.out)
    if isinstance(where, int):
        return where
    shard, n_shards = where
    try:
        result = score_shard(inputs, config, shard, n_shards, args.shard_seed, workers=worker_count(args.workers))
        patches = patch_files(args.gt_patch)
    except (KeyError, ValueError) as exc:  # GTPatchMismatch is a ValueError
        return fail(exc)
    except OSError as exc:
        return fail(f"cannot read {exc.filename}: {exc.strerror or exc}")
    plan = result.plan
    extra = {"plan": encode(plan)}
    if patches:  # the merge patches the cases as read and compares the pooled runs before and after
        extra.update(cases=encode(inputs.cases), plan_after=encode(result.plan_after), gt_patches=patch_extra(patches))
    pred_digests = [digests({"p": p})["p_digest"] for p in args.pred]
    return write("dialogue", shard, n_shards, args.shard_seed, args.out,
                 input={"name": args.cases, **digests({"gt": args.cases}), "predictions_digest": pred_digests,
                        "patches": patch_digests(patches)},
                 n_items=len(result.keys), assignment=result.assignment, config=config,
                 signature=plan.signatures, provenance={"user_dict": digests({"u": args.user_dict})["u_digest"]},
                 decision={"models": plan.models, "matching": plan.matching},
                 keys=[result.keys[k] for k in result.positions], columns=COLUMNS, rows=shard_rows(result),
                 extra=extra)


# ------------------------------------------------------------------------------------------ compare

def compare(args, config) -> int:
    """``compare FILE... --shard i/N --output-file FILE``: score one shard of every run's records and write its
    shard file; the merge computes the side-by-side scores, their intervals and the paired tests of B against A
    once, on the pooled records (same resamples, same seed).  ``config``: the scoring settings of the options
    (:func:`evaluators.cli.qa.config_of`)."""
    import dataclasses
    from pathlib import Path

    from evaluators.io import InputError
    from evaluators.io.sources import read_file_bytes
    from evaluators.io.typed_json import encode
    from evaluators.parallel import worker_count
    from evaluators.qa.evaluate import signature, text_provenance
    from evaluators.qa.records import open_qa_source
    from evaluators.qa.run import failure_message, misplaced_input
    from evaluators.qa.shards import COMPARE_COLUMNS, score_compare_shard, unusable_extra

    where = begin(args, (("--log", args.log), ("--systems-csv", args.systems_csv),
                         ("--format " + args.format, args.format not in ("table", "json"))), args.output_file,
                  "--output-file")
    if isinstance(where, int):
        return where
    shard, n_shards = where
    patches, error = checked_patches(args.gt_patch)
    if error:
        return fail(error)
    config = dataclasses.replace(config, ci_resamples=0)  # as compare scores its runs (load_runs)
    jobs: list[tuple[Path, str | None]] = [(Path(f), None) for f in args.input]
    if args.predictions:
        if len(args.input) != 1:
            return fail("--predictions needs exactly one --input (the SQuAD-style dataset)")
        jobs = [(Path(args.input[0]), p) for p in args.predictions]
    openers = []
    for path, pred_file in jobs:
        if not path.is_file():
            return fail(f"cannot read {path}: no such file")
        try:
            preds = read_file_bytes(pred_file) if pred_file else None
        except OSError as exc:
            return fail(f"cannot read {pred_file}: {exc.strerror or exc}")
        openers.append(lambda path=path, pred_file=pred_file, preds=preds: open_qa_source(
            path, pred_file or None, predictions=preds, predictions_file=pred_file or "<predictions>"))
    try:
        result = score_compare_shard(openers, config, shard, n_shards, args.shard_seed,
                                     workers=worker_count(args.workers))
    except InputError as exc:  # as compare says it: where the file goes, else what is wrong
        label = exc.issue.file
        path = next((p for p, f in jobs if (f or str(p)) == label), None)
        return fail(failure_message((misplaced_input(path, label) if path is not None else None) or exc.issue))
    except OSError as exc:
        return fail(f"cannot read {exc.filename or ''}: {exc.strerror or exc}")
    except ValueError as exc:  # a bad --workers
        return fail(str(exc))
    task = result.decisions[0]["task"]
    return write("compare", shard, n_shards, args.shard_seed, args.output_file,
                 input={"name": args.input[0], "gt_digest": [digests({"f": str(p)})["f_digest"] for p, _ in jobs],
                        "predictions_digest": [digests({"f": f})["f_digest"] for _, f in jobs],
                        "patches": patch_digests(patches)},
                 n_items=result.n_items, assignment=result.assignment, config=config,
                 signature=signature(task, config.script), provenance=text_provenance(config),
                 decision={"inputs": result.decisions,
                           "compare": {"a": args.a, "b": args.b, "seed": args.seed,
                                       "n_resamples": max(0, args.ci_resamples)}},
                 keys=result.keys, columns=COMPARE_COLUMNS, rows=result.rows,
                 extra={"files": result.files, "predictions_files": [f for _, f in jobs],
                        "unusable": [unusable_extra(p, f or str(p), f) for p, f in jobs],
                        "gt_files": [str(p) for p, _ in jobs], "issues": encode(result.issues),
                        "gt_patches": patch_extra(patches)})
