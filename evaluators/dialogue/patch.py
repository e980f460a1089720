"""Persona-dialogue scores after review corrections (a GT patch, :mod:`evaluators.io.gt_patch`).

The ground truth a patch corrects is the cases file; a patch's ``record_id`` is the case key
``scene#dialogue_index#occurrence`` (:func:`~evaluators.dialogue.scoring.case_key`, the id of
the Persona page's review items).  A case's reference reply belongs to the case, so a correction
changes every model's score on it.  What a correction means:

- ``replace`` (a *GT error* with the corrected reply typed at adjudication): the corrected reply
  becomes the case's expected response;
- ``add_answer`` (a reviewer's *acceptable variant*): the accepted reply becomes one more
  reference of the case.  A reply is scored against each reference of its case and the reference
  with the highest combined score counts (its metrics are reported with it): references are
  alternatives, and the metrics of one reference are kept together so the combined score stays
  the weighted mean of the metrics shown.
- Cases no entry changes keep their scores.

:func:`run_with_patch` is what :func:`~evaluators.dialogue.run.run_dialogue` does when its inputs
hold a patch: the run before and after, and each model's combined score (and exact match,
binary: McNemar's test) compared case by case, with the rank flips between models
(:func:`evaluators.metrics.before_after.score_effect`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evaluators.dialogue.inputs import CaseSet, DialogueCase
from evaluators.dialogue.scoring import (STATUS_COMPARED, CaseResult, DialogueConfig, DialogueReport, build_scorer,
                                         case_key, combine, with_results)
from evaluators.io.gt_patch import GTPatchSet, PatchApplication, apply_gt_patch
from evaluators.metrics.before_after import CorrectionsAdapter, PatchedInputs, run_before_after
from evaluators.text.tokenize import TextView

#: Bootstrap resamples of the before / after intervals and paired tests.
EFFECT_RESAMPLES = 10_000


def gold_answers(cases: Sequence[DialogueCase]) -> dict[str, tuple[str, ...]]:
    """Case id -> ``(expected_response,)`` (``()`` for a case without one)."""
    return {case_key(c): (c.expected_response,) if c.expected_response.strip() else () for c in cases}


def patch_cases(case_set: CaseSet, patches: GTPatchSet
                ) -> tuple[CaseSet, dict[str, tuple[str, ...]], PatchApplication]:
    """The cases with their corrected replies, and the further references of each case id.

    Raises
    ------
    GTPatchMismatch
        An entry bound to another file than the cases file, or keyed entries for none of its cases.
    """
    digest = case_set.digest or ""
    entries = patches.for_file(case_set.file, digest)
    app = apply_gt_patch(gold_answers(case_set.cases), entries, digest)
    references: dict[str, tuple[str, ...]] = {}
    cases = []
    for c in case_set.cases:
        rid = case_key(c)
        if rid in app.answers:
            corrected, refs = app.one_reference(rid, c.expected_response)
            if corrected is not None:
                c = dataclasses.replace(c, expected_response=corrected)
            if refs:
                references[rid] = refs
        cases.append(c)
    return dataclasses.replace(case_set, cases=cases), references, app


def best_reference(results: Sequence[CaseResult], references: dict[str, tuple[str, ...]], config: DialogueConfig
                   ) -> list[CaseResult]:
    """Each compared reply scored against its case's further references; the highest combined score counts.

    A reference that ties the current one leaves the result as it is (the case's expected
    response first).
    """
    if not references:
        return list(results)
    scorer, _, weights = build_scorer(config)
    out = []
    for r in results:
        refs = references.get(case_key(r), ())
        if r.status == STATUS_COMPARED and refs:
            pred = TextView(r.prediction)
            for ref in refs:
                scores = scorer.score_views(pred, TextView(ref))
                combined = combine(scores, weights)
                if combined is not None and (r.combined_score is None or combined > r.combined_score):
                    r = dataclasses.replace(r, expected_response=ref, metrics=scores, combined_score=combined)
        out.append(r)
    return out


def effect_values(report: DialogueReport, exact: str | None) -> dict[str, dict[str, list]]:
    """Model -> metric -> per-case values (cases in the results' order) of the compared metrics."""
    out: dict[str, dict[str, list]] = {}
    for r in report.results:
        values = out.setdefault(r.model, {"combined_score": []} | ({exact: []} if exact else {}))
        values["combined_score"].append(r.combined_score)
        if exact:
            values[exact].append(r.metrics.get(exact))
    return out


def _exact(report: DialogueReport) -> str | None:
    """The run's exact-match metric (the first whose name starts with ``exact_match``), ``None`` without one."""
    return next((n for n in (m["name"] for m in report.metric_info) if n.startswith("exact_match")), None)


def adapter(config: DialogueConfig, run, **kwargs) -> CorrectionsAdapter:
    """The persona task's :class:`~evaluators.metrics.before_after.CorrectionsAdapter` (rules in the module
    docstring): the cases patched (:func:`patch_cases`), ``run`` before and after, the further references
    scored after (:func:`best_reference`), each model's combined score and exact match (binary) compared
    case by case.

    Parameters
    ----------
    config : DialogueConfig
    run : callable
        :func:`~evaluators.dialogue.run.run_dialogue`, called without the patch.
    **kwargs
        ``progress``, ``workers``, ``predictions`` of ``run``.

    Returns
    -------
    CorrectionsAdapter
        For :func:`~evaluators.metrics.before_after.run_before_after` of
        :class:`~evaluators.dialogue.run.DialogueInputs` and their patch.
    """
    def patch(x, patches: GTPatchSet) -> PatchedInputs:
        cases, references, app = patch_cases(x.cases, patches)
        return PatchedInputs(dataclasses.replace(x, cases=cases, gt_patch=None), ((x.cases.file, app),),
                             tuple(app.issues), references)

    def run_after(patched: PatchedInputs) -> DialogueReport:
        after = run(patched.inputs, config, **kwargs)
        return with_results(after, best_reference(after.results, patched.extra, config)) if patched.extra else after

    def values(before, after):
        exact = _exact(after)
        return effect_values(before, exact), effect_values(after, exact)

    return CorrectionsAdapter(
        patch=patch, run=lambda x: run(dataclasses.replace(x, gt_patch=None), config, **kwargs), values=values,
        metrics=lambda before, after: ("combined_score",) + ((_exact(after),) if _exact(after) else ()),
        binary=lambda before, after: (_exact(after),) if _exact(after) else (), run_after=run_after,
        unit="case", n_resamples=EFFECT_RESAMPLES, seed=0)


def run_with_patch(inputs, config: DialogueConfig | None, run, **kwargs) -> DialogueReport:
    """``run(inputs, config)`` before and after ``inputs.gt_patch`` (rules in the module docstring), through
    :func:`evaluators.metrics.before_after.run_before_after` with :func:`adapter`.

    Parameters
    ----------
    inputs : DialogueInputs
        With ``gt_patch``.
    config : DialogueConfig or None
    run : callable
        :func:`~evaluators.dialogue.run.run_dialogue` (called twice, without the patch).
    **kwargs
        ``progress``, ``workers``, ``predictions`` of ``run``.

    Returns
    -------
    DialogueReport
        After the corrections, with ``before`` and ``corrections``.

    Raises
    ------
    GTPatchMismatch
        As :func:`patch_cases`; and whatever ``run`` raises.
    """
    config = config or DialogueConfig()
    before, after, corrections, issues = run_before_after(inputs, inputs.gt_patch,
                                                          adapter(config, run, **kwargs))
    return dataclasses.replace(after, issues=list(after.issues) + list(issues), before=before,
                               corrections=corrections)
