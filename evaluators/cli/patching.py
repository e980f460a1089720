"""``--gt-patch FILE`` of the QA commands (``qa``, ``compare``, ``report``): review corrections applied
to the scores (:mod:`evaluators.io.gt_patch`, :mod:`evaluators.qa.patch`).  Not a command itself:
the commands call these helpers.

A patch file's bad lines and its conflicts are warnings (stderr; the good lines still apply); a
patch for none of the records given (keyed lines, version 3) or with a line bound to none of the GT
files given (versions 1 and 2), or that cannot be read, is an error (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from evaluators.reports.format import problem_lines

#: Resamples of the before / after intervals and paired tests when ``--ci-resamples 0`` was given.
EFFECT_RESAMPLES = 2000


def add_gt_patch_argument(p, help: str | None = None) -> None:
    """Register ``--gt-patch`` (repeatable, applied in order); ``help`` says what a correction means for the task."""
    p.add_argument("--gt-patch", action="append", metavar="FILE",
                   help=help or "review corrections to apply to the ground truth before scoring (a GT patch, JSONL, "
                        "as written by 'review patch'); repeatable, applied in order; each correction applies to "
                        "the records with the id and GT it was made for, in any run (a patch for none of them, or "
                        "an older one bound to another GT file, is refused). Prints the scores before and after "
                        "with a paired test")


def read_patch_set(files: Sequence[str]):
    """``(GTPatchSet, None)`` of the patch files, their bad lines warned on stderr; ``(None, error)`` when one
    cannot be read or has no usable line."""
    from evaluators.io import InputError
    from evaluators.io.gt_patch import GTPatchSet

    try:
        patches = GTPatchSet.read_files(files)
    except OSError as exc:
        return None, f"cannot read GT patch {exc.filename}: {exc.strerror or exc}"
    except InputError as exc:
        return None, str(exc)
    for line in problem_lines(patches.issues, "warning"):  # identical problems folded into one line
        print(line + " (line skipped)", file=sys.stderr)
    return patches, None


def patches_of(args: argparse.Namespace):
    """``(GTPatchSet or None, error or None)`` of ``args.gt_patch`` (``None`` when no ``--gt-patch`` was given)."""
    if not getattr(args, "gt_patch", None):
        return None, None
    return read_patch_set(args.gt_patch)


def print_corrections(corrections, stream=None, *, warn: bool = True) -> None:
    """Print what a run's GT patches did and its scores before -> after (``stream``: stdout by default);
    ``warn``: the patches' problems on stderr too (``False`` where :func:`apply_patches` printed them)."""
    from evaluators.reports.corrections import applications_text, patch_effect_text

    if warn:
        for line in problem_lines([i for _, app in corrections.applications for i in app.issues], "warning"):
            print(line, file=sys.stderr)
    stream = stream or sys.stdout
    if corrections.effect is None:
        print("Review corrections (GT patch)\n" + applications_text(corrections.applications)
              + (f"\n  {corrections.note}" if corrections.note else ""), file=stream)
    else:
        print(patch_effect_text(corrections.effect, corrections.applications), file=stream)


def apply_patches(reports: Sequence, gt_paths: Sequence[Path], files: Sequence[str]):
    """Apply GT patch files to scored QA reports, each scored from the GT file in ``gt_paths``
    (:func:`evaluators.qa.patch.patch_reports`).

    Returns
    -------
    (patched reports, [(GT file, PatchApplication)], error or None)
    """
    from evaluators.io.gt_patch import GTPatchMismatch, file_sha256
    from evaluators.qa.patch import patch_reports

    patches, error = read_patch_set(files)
    if error:
        return [], [], error
    digests = {str(p): file_sha256(p) for p in dict.fromkeys(gt_paths)}
    try:
        patched, applications = patch_reports(reports, [(str(p), digests[str(p)]) for p in gt_paths], patches)
    except GTPatchMismatch as exc:
        return [], [], str(exc)
    for line in problem_lines([i for _, app in applications for i in app.issues], "warning"):
        print(line, file=sys.stderr)
    return patched, list(applications), None


def patch_runs(args: argparse.Namespace, reports: Sequence, gt_paths: Sequence[Path]):
    """``args.gt_patch`` applied to ``reports``; keeps ``(reports before, applications)`` in
    ``args.gt_patch_before`` for :func:`print_effect`.  Returns ``(reports, error or None)``."""
    if not getattr(args, "gt_patch", None):
        return list(reports), None
    patched, applications, error = apply_patches(reports, gt_paths, args.gt_patch)
    if error:
        return [], error
    args.gt_patch_before = (list(reports), applications)
    return patched, None


def patch_qa_run(args: argparse.Namespace, result, gt_paths: Sequence[Path]):
    """``args.gt_patch`` applied to every usable report of a :class:`~evaluators.qa.run.QARun`.

    ``gt_paths[i]`` is the GT file of input ``i``. Returns ``(QARun with the patched reports, error or None)``.
    """
    from evaluators.qa.patch import with_reports

    if not getattr(args, "gt_patch", None):
        return result, None
    usable = [(i, x) for i, x in enumerate(result.inputs) if x.usable]
    patched, error = patch_runs(args, [x.report for _, x in usable], [gt_paths[i] for i, _ in usable])
    if error:
        return None, error
    return with_reports(result, patched), None


def corrections_for(args: argparse.Namespace, after: Sequence):
    """The :class:`~evaluators.metrics.before_after.Corrections` of the patched reports ``after``: what the
    patches did and the scores before and after (``None`` without ``--gt-patch``); computed once per
    command and cached on ``args``, so the terminal table and the JSON section are the same data."""
    from evaluators.qa.patch import qa_corrections

    if not getattr(args, "gt_patch", None):
        return None
    cached = getattr(args, "gt_patch_corrections", None)
    if cached is not None and cached[0] == [id(r) for r in after]:
        return cached[1]
    before, applications = args.gt_patch_before
    # the before / after table always has intervals (--ci-resamples 0 only drops them elsewhere)
    corrections = qa_corrections(before, after, applications, args.gt_patch,
                                 n_resamples=args.ci_resamples if args.ci_resamples > 0 else EFFECT_RESAMPLES,
                                 seed=getattr(args, "seed", 0) or 0)
    args.gt_patch_corrections = ([id(r) for r in after], corrections)
    return corrections


def effect_of(args: argparse.Namespace, after: Sequence):
    """``(PatchEffect, applications)`` of the patched reports ``after`` (``None`` without ``--gt-patch``)."""
    corrections = corrections_for(args, after)
    if corrections is None:
        return None
    if corrections.effect is None:
        raise ValueError(corrections.note)
    return corrections.effect, corrections.applications


def print_effect(args: argparse.Namespace, after: Sequence) -> None:
    """Print scores before -> after the patch, per run, with paired tests and rank flips."""
    from evaluators.reports.corrections import patch_effect_text

    print(patch_effect_text(*effect_of(args, after)))
