"""Narrative reports: JSON and Markdown for one document or a batch, CSV of every mismatch.

The same writers serve the CLI and the dashboard's downloads.  Every report carries the
signature of the settings that produced it.  The CSV goes through
:mod:`evaluators.reports.csv_writer` (formula-like cells made inert), Markdown text through
:func:`evaluators.reports.escape.md`.
"""

from __future__ import annotations

import json
from typing import Any

from evaluators.io.json_text import dumps_pretty
from evaluators.narrative.base import COMPONENT_TITLES, COMPONENTS
from evaluators.narrative.batch import BatchResult, DocumentOutcome
from evaluators.narrative.composite import NarrativeResult
from evaluators.reports.csv_writer import write_csv
from evaluators.reports.escape import md
from evaluators.reports.format import fixed, number as fmt, signed

MISMATCH_COLUMNS = ("document", "component", "gt_event", "pred_event", "field", "gt_value", "pred_value", "note")


def to_json(result: NarrativeResult | BatchResult, *, indent: int = 2) -> str:
    """JSON text of a document or batch result (UTF-8 text, CJK kept, never NaN: ``to_dict`` writes None)."""
    if indent == 2:
        return dumps_pretty(result.to_dict())
    return json.dumps(result.to_dict(), ensure_ascii=False, indent=indent, allow_nan=False)


#: Indentation of a document inside a batch report's ``documents`` list (``to_json``'s indent 2, depth 2).
_ENTRY_INDENT = "    "


def document_entry_json(outcome: DocumentOutcome) -> str:
    """One ``documents`` entry of a batch's :func:`to_json`, exactly as it appears there.

    A module-level function, so that worker processes can write the entries of the documents
    they score (``run_narrative(..., render=document_entry_json)``).
    """
    text = dumps_pretty(outcome.to_dict())
    return _ENTRY_INDENT + text.replace("\n", "\n" + _ENTRY_INDENT)  # JSON strings hold no raw newline


def document_json(outcome: DocumentOutcome) -> str:
    """:func:`to_json` of a scored document's result, also when only its rendered entry came back."""
    if outcome.rendered is None:
        return to_json(outcome.result)
    return dumps_pretty(outcome.to_dict()["result"])


class BatchJsonWriter:
    """Writes a batch's :func:`to_json` while it is scored: each document as it comes, then the totals.

    The bytes equal ``to_json(report)``.  Use ``on_document=writer.document`` (with
    ``render=document_entry_json``, so the entries are written by the workers) and call
    :meth:`finish` with the report.

    Parameters
    ----------
    fh : text file
        Open for writing (UTF-8).
    """

    def __init__(self, fh):
        self.fh = fh
        self.n = 0

    def document(self, outcome: DocumentOutcome) -> None:
        """Write one ``documents`` entry (``outcome.rendered`` when the worker wrote it)."""
        self.fh.write('{\n  "documents": [\n' if self.n == 0 else ",\n")
        self.fh.write(outcome.rendered if outcome.rendered is not None else document_entry_json(outcome))
        self.n += 1

    def finish(self, report: BatchResult) -> None:
        """Write the keys after ``documents`` (pairing, issues, micro, macro, counts, signature)."""
        tail = dumps_pretty(report.tail_dict())
        self.fh.write('{\n  "documents": [],\n' if self.n == 0 else "\n  ],\n")
        self.fh.write(tail[2:])  # without its opening "{\n"


def batch_json(report: BatchResult) -> str:
    """:func:`to_json` of a batch, using the entries its workers already wrote (``outcome.rendered``)."""
    import io

    buf = io.StringIO()
    writer = BatchJsonWriter(buf)
    for outcome in report.documents:
        writer.document(outcome)
    writer.finish(report)
    return buf.getvalue()


def mismatches_csv(results: NarrativeResult | BatchResult | list[NarrativeResult]) -> str:
    """CSV of every mismatch: document, component, gt_event, pred_event, field, gt_value, pred_value, note."""
    if isinstance(results, NarrativeResult):
        results = [results]
    elif isinstance(results, BatchResult):
        results = results.scored
    rows = ([r.story_id, m.component, m.gt_event, m.pred_event, m.field, _text(m.gt_value), _text(m.pred_value),
             m.note] for r in results for m in r.mismatches())
    return write_csv(MISMATCH_COLUMNS, rows, lineterminator="\n")


def _text(value: Any) -> Any:
    """Values of a mismatch as text (a list or number of the GT is shown as written)."""
    return value if value is None or isinstance(value, str) else str(value)


def _component_lines(r: NarrativeResult) -> list[str]:
    c, rel, s, a, t = r.characters, r.relationships, r.sentiment, r.action_layer, r.text_span
    return [
        "### Characters",
        "",
        f"- Precision / recall / F1: {fmt(c.character_precision)} / {fmt(c.character_recall)} / "
        f"{fmt(c.character_f1)} ({c.n_matched} matched of {c.n_ground_truth} GT, {c.n_predicted} predicted)",
        f"- Archetype accuracy: {fmt(c.character_archetype_accuracy)} ({c.archetype_correct}/{c.archetype_total})",
        f"- Missing characters ({c.n_missing}): {md(', '.join(c.missing_characters)) or '—'}",
        f"- Extra characters ({c.n_extra}): {md(', '.join(c.extra_characters)) or '—'}",
        "",
        "### Relationships",
        "",
        f"- Precision / recall / F1: {fmt(rel.relationship_precision)} / {fmt(rel.relationship_recall)} / "
        f"{fmt(rel.relationship_f1)} ({rel.total_relationships_correct} matched; {rel.total_relationships_gt} GT, "
        f"{rel.total_relationships_pred} predicted)",
        f"- Strict F1 (agent, target, level 1, level 2): {fmt(rel.relationship_strict_f1)}",
        f"- Level 1 / level 2 accuracy: {fmt(rel.level1_accuracy)} / {fmt(rel.level2_accuracy)}",
        f"- Pair coverage: {fmt(rel.relationship_pair_coverage)} ({rel.pairs_covered}/{rel.pairs_total})",
        f"- Events evaluated / skipped (GT empty): {rel.n_events_evaluated} / {rel.n_events_skipped}; "
        f"extra predicted (not counted): {rel.n_pred_extra}; schema errors: {rel.n_invalid_pred}",
        "",
        "### Sentiment",
        "",
        f"- Micro precision / recall / F1: {fmt(s.sentiment_precision)} / {fmt(s.sentiment_recall)} / "
        f"{fmt(s.sentiment_f1)}; macro F1 {fmt(s.sentiment_macro_f1)}",
        f"- Polarity accuracy: {fmt(s.sentiment_polarity_accuracy)} ({s.polarity_correct}/{s.polarity_total})",
        "",
        "### Action layer",
        "",
        f"- Field accuracy (micro): {fmt(a.action_layer_field_accuracy)}",
        f"- Category / type / context / status / function: {fmt(a.action_category_accuracy)} / "
        f"{fmt(a.action_type_accuracy)} / {fmt(a.action_context_accuracy)} / {fmt(a.action_status_accuracy)} / "
        f"{fmt(a.action_function_accuracy)}",
        f"- Complete / partial match: {fmt(a.action_layer_complete_match)} / {fmt(a.action_layer_partial_match)} "
        f"({a.n_events_evaluated} events evaluated, {a.n_events_skipped} skipped)",
        "",
        "### Text spans",
        "",
        f"- Boundary similarity B: {fmt(t.boundary_score)}; Pk {fmt(t.pk)}; WindowDiff {fmt(t.window_diff)}",
        f"- Boundaries: {t.exact_matches} exact, {t.near_misses} near misses, {t.insertions} insertions, "
        f"{t.deletions} deletions ({t.n_sentences} sentences)",
        f"- Mean IoU of aligned spans: {fmt(t.overlap_ratio)}; spans "
        + ", ".join(f"{k} {v}" for k, v in t.span_categories.items()),
    ]


def document_markdown(r: NarrativeResult) -> str:
    """Markdown report of one document."""
    lines = [
        f"# Evaluation report: {md(r.story_id)}",
        "",
        f"GT {md(r.gt_file)} · prediction {md(r.pred_file)}",
        "",
        f"## Overall score: {fmt(r.overall_score)}",
        "",
        "| Component | Score | GT incomplete | Note |",
        "|---|---|---|---|",
    ]
    for comp in COMPONENTS:
        det = r.detailed_results[comp]
        note = r.left_out.get(comp) or det.reason or ""
        lines.append(f"| {COMPONENT_TITLES[comp]} | {fmt(r.component_scores[comp])} | "
                     f"{'yes' if det.gt_incomplete else 'no'} | {md(note)} |")
    s = r.summary
    lines += [
        "",
        f"Events: {s.total_events_ground_truth} GT, {s.total_events_predicted} predicted, {s.events_aligned} aligned "
        f"({', '.join(f'{k} {v}' for k, v in s.alignment_methods.items() if v)}), {s.events_missed} missed, "
        f"{s.events_spurious} spurious.",
        "",
        "## Details",
        "",
        *_component_lines(r),
    ]
    if r.warnings:
        lines += ["", "## Warnings", ""] + [f"- {md(w)}" for w in r.warnings]
    if r.issues:
        lines += ["", "## Input issues", ""] + [f"- {md(i.location())}: {md(i.message)}"
                                                 for i in r.issues]
    lines += ["", f"<sub>{md(r.signature)}</sub>", ""]
    return "\n".join(lines)


def batch_markdown(b: BatchResult) -> str:
    """Markdown report of a batch: per-document table, micro and macro totals, unusable files."""
    head = "| Document | Overall | " + " | ".join(COMPONENT_TITLES[c] for c in COMPONENTS) + " |"
    lines = [f"# Batch evaluation report ({len(b.scored)} of {len(b.documents)} pairs scored)", "", head,
             "|" + "---|" * (len(COMPONENTS) + 2)]
    for d in b.documents:
        if d.result is None:
            lines.append(f"| {md(d.story_id)} | error: {md(d.error.message if d.error else '')} |"
                         + " |" * len(COMPONENTS))
            continue
        r = d.result
        lines.append(f"| {md(d.story_id)} | {fmt(r.overall_score)} | "
                     + " | ".join(fmt(r.component_scores[c]) for c in COMPONENTS) + " |")
    if b.micro:
        lines.append("| **micro** (pooled counts) | " + fmt(b.micro["overall_score"]) + " | "
                     + " | ".join(fmt(b.micro["component_scores"][c]) for c in COMPONENTS) + " |")
        lines.append("| **macro** (mean of documents) | " + fmt(b.macro["overall_score"]) + " | "
                     + " | ".join(fmt(b.macro["component_scores"][c]) for c in COMPONENTS) + " |")
    if b.unpaired_gt or b.unpaired_pred or b.issues:
        lines += ["", "## Files not scored", ""]
        lines += [f"- GT without prediction: {md(n)}" for n in b.unpaired_gt]
        lines += [f"- Prediction without GT: {md(n)}" for n in b.unpaired_pred]
        lines += [f"- {md(i.location())}: {md(i.message)}" for i in b.issues
                  if i.kind != "pairing" or "ignored" in i.message]
    if b.corrections is not None:
        lines += corrections_markdown(b.corrections)
    lines += ["", f"<sub>{md(b.signature)}</sub>", ""]
    return "\n".join(lines)


def corrections_markdown(corrections) -> list[str]:
    """Markdown lines of a narrative run's review corrections: what each patch did per story file, then the
    overall and component scores before and after (bootstrap intervals, paired bootstrap of the change)."""
    from evaluators.reports.corrections import applications_rows, effect_rows, randomization_p_text

    lines = ["", "## Review corrections (GT patch)", "",
             "| GT file | corrections | applied | already in place | conflicts | unknown places |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {md(r['gt_file'])} | {r['corrections']} | {r['applied']} | {r['already_in_place']} "
              f"| {r['conflicts']} | {r['unknown_ids']} |" for r in applications_rows(corrections.applications)]
    if corrections.effect is None:
        return lines + ["", md(corrections.note)]
    lines += ["", "| score | documents | before [95% CI] | after [95% CI] | change [95% CI] | p (paired bootstrap) "
              "| p (sign-flip) |", "|---|---|---|---|---|---|---|"]
    for r in effect_rows(corrections.effect):
        lines.append(f"| {md(r['metric'])} | {r['n']} | {fmt(r['before'])} [{fmt(r['before_ci_low'])}, "
                     f"{fmt(r['before_ci_high'])}] | {fmt(r['after'])} [{fmt(r['after_ci_low'])}, "
                     f"{fmt(r['after_ci_high'])}] | {signed(r['delta'])} [{signed(r['delta_ci_low'])}, "
                     f"{signed(r['delta_ci_high'])}] | {fixed(r['p_paired_bootstrap'], 4)}"
                     f"{' [!]' if r['small_sample'] else ''} | {randomization_p_text(r, 4) or ''} |")
    flagged = [r for r in effect_rows(corrections.effect) if r["small_sample"]]
    lines += ["", *(f"[!] {md(r['metric'])}: the paired bootstrap p-value is not trustworthy ({md(r['small_sample'])}); "
                     f"read the sign-flip test's" for r in flagged)] if flagged else []
    return lines


def to_markdown(result: NarrativeResult | BatchResult) -> str:
    """Markdown for a document (:func:`document_markdown`) or a batch (:func:`batch_markdown`)."""
    if isinstance(result, BatchResult):
        return batch_markdown(result)
    return document_markdown(result)


def systems_csv(matrix: list[dict[str, Any]], signature: str = "") -> str:
    """The documents x systems rows of :func:`evaluators.narrative.batch.systems_matrix` as CSV (one writer).

    Columns: ``story_id``, every ``<system>: <score>`` column in first-seen order, ``spread`` and
    ``signature`` (the scoring settings).
    """
    from evaluators.reports.csv_writer import write_dict_csv

    columns = list(dict.fromkeys(k for row in matrix for k in row if k not in ("spread",)))
    rows = [{**row, "signature": signature} for row in matrix]
    return write_dict_csv([*columns, "spread", "signature"], rows)
