"""Self-contained HTML reports: one file, no script, no request leaves the page.

A report is built from headings, paragraphs, metric cards, tables and static SVG charts
(:mod:`evaluators.reports.svg`: drawn from the numbers with explicit colours, so a file never
carries the page's theme state, and a few kilobytes instead of 4.8 MB of plotly.js); every
string from the data goes through :func:`evaluators.reports.escape.html_text`, and the page
carries a Content-Security-Policy that forbids loading anything (no ``src``/``href`` to another
origin, no fetch), so it opens offline and cannot call home even if a label held markup.

:func:`qa_report` and :func:`comparison_report` write the QA / fact-check report and the
side-by-side comparison of several runs (``python -m evaluators report`` and the QA page's
download).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Sequence
from typing import Any

from evaluators import __version__
from evaluators.reports.escape import html_text
from evaluators.reports.format import fixed, p_value, points, points_interval, signed, small_sample_note

#: No network, no frames, no objects, no script; inline style only (the charts are inline SVG).
CSP = ("default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; "
       "img-src data:; font-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'")

_STYLE = """
body{font-family:"Noto Sans CJK SC","Noto Sans",system-ui,sans-serif;margin:24px auto;max-width:1200px;
padding:0 16px;color:#1f2328}
h1{font-size:1.6em;margin-bottom:0;overflow-wrap:anywhere}p,h2,h3,h4,summary,figcaption{overflow-wrap:anywhere}.sub{color:#57606a;margin-top:4px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.card{border:1px solid #d0d7de;border-radius:8px;padding:10px 14px;min-width:150px}
.card .label{color:#57606a;font-size:.85em}.card .value{font-size:1.5em;font-weight:600}
.card .help{color:#57606a;font-size:.75em}
.tablewrap{overflow-x:auto;margin:8px 0 16px}
table{border-collapse:collapse;font-size:.9em}th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}
th{overflow-wrap:anywhere}td{overflow-wrap:break-word}
details{margin:8px 0 16px}summary{cursor:pointer;font-weight:600;padding:4px 0}
figure.chart{margin:12px 0 20px}figure.chart figcaption{font-weight:600;margin-bottom:4px}
table.sig td{font-family:ui-monospace,monospace;font-size:.85em}
@media (max-width:600px){body{margin:12px auto;padding:0 8px}.card{min-width:0;flex:1 1 40%}
th,td{padding:3px 4px}}
th{background:#f6f8fa;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.none{color:#8c959f}caption{caption-side:bottom;text-align:left;color:#57606a;font-size:.85em;padding-top:4px}
footer{color:#57606a;font-size:.8em;margin-top:32px;border-top:1px solid #d0d7de;padding-top:8px}
"""


def _cell(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<td class="none" title="no value">—</td>'
    if isinstance(value, bool):
        return f"<td>{value}</td>"
    if isinstance(value, int):
        return f'<td class="num">{value:,}</td>'
    if isinstance(value, float):
        return f'<td class="num">{fixed(value, digits)}</td>'
    return f"<td>{html_text(value)}</td>"


def table_html(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, caption: str | None = None,
               digits: int = 3, max_rows: int | None = None, css_class: str | None = None) -> str:
    """One static ``<table>``: the reports' tables and the pages' light summary tables
    (:func:`components.tables.static_table`).

    Parameters
    ----------
    columns : sequence of str, length k
        Header cells (escaped).
    rows : sequence of rows, each a sequence of k values
        ``None`` (and a float NaN) shows as "—" with class ``none``; an int with thousands
        separators and a float with ``digits`` decimals, both with class ``num``; anything else
        as escaped text (:func:`evaluators.reports.escape.html_text`).
    caption : str, optional
        A line under the table (escaped).
    max_rows : int, optional
        Only the first ``max_rows`` rows; the caption then says "first n of N rows".
    css_class : str, optional
        A class of the ``<table>`` element (a fixed name, not user text).

    Returns
    -------
    str
        ``<table>…</table>``: no script, no style attribute, no link.
    """
    shown = rows if max_rows is None else rows[:max_rows]
    head = "".join(f"<th>{html_text(c, breaks=False)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(v, digits) for v in row) + "</tr>" for row in shown)
    notes = [caption] if caption else []
    if len(shown) < len(rows):
        notes.append(f"first {len(shown):,} of {len(rows):,} rows")
    cap = f"<caption>{html_text(' · '.join(notes))}</caption>" if notes else ""
    klass = f' class="{css_class}"' if css_class else ""
    return f"<table{klass}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class HtmlReport:
    """Builder of one self-contained HTML page.

    Parameters
    ----------
    title : str
    subtitle : str, optional
        Shown under the title (escaped).

    Methods append blocks in order; :meth:`render` returns the page as text (UTF-8 when written).
    """

    def __init__(self, title: str, subtitle: str | None = None):
        self.title = title
        self.subtitle = subtitle
        self._blocks: list[str] = []
        self._figures = 0

    def heading(self, text: str, level: int = 2) -> None:
        """A section heading (``level`` 2 to 4)."""
        level = min(4, max(2, level))
        self._blocks.append(f"<h{level}>{html_text(text, breaks=False)}</h{level}>")

    def paragraph(self, text: str) -> None:
        """A paragraph of plain text (newlines kept)."""
        self._blocks.append(f"<p>{html_text(text)}</p>")

    def cards(self, items: Sequence[tuple[str, Any, str | None]], digits: int = 3) -> None:
        """Metric cards: ``(label, value, help)``; floats with ``digits`` decimals, ``None`` as —."""
        out = []
        for label, value, help_text in items:
            shown = ("—" if value is None else fixed(value, digits) if isinstance(value, float)
                     else f"{value:,}" if isinstance(value, int) else str(value))
            out.append(f'<div class="card"><div class="label">{html_text(label, breaks=False)}</div>'
                       f'<div class="value">{html_text(shown, breaks=False)}</div>'
                       + (f'<div class="help">{html_text(help_text)}</div>' if help_text else "") + "</div>")
        self._blocks.append(f'<div class="cards">{"".join(out)}</div>')

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, caption: str | None = None,
              digits: int = 3, max_rows: int | None = None, collapsed: str | None = None,
              css_class: str | None = None) -> None:
        """A table; ``None`` cells show —, floats ``digits`` decimals; past ``max_rows`` rows a caption says so.

        With ``collapsed`` (the summary line) the table sits in a closed ``<details>`` block: record
        tables are opened on demand instead of making the page tens of thousands of pixels tall.
        """
        table = table_html(columns, rows, caption=caption, digits=digits, max_rows=max_rows, css_class=css_class)
        block = f'<div class="tablewrap">{table}</div>'
        if collapsed:
            block = f"<details><summary>{html_text(collapsed, breaks=False)}</summary>{block}</details>"
        self._blocks.append(block)

    def chart(self, svg: str) -> None:
        """A static chart from :mod:`evaluators.reports.svg` (already escaped; drawn without script)."""
        self._figures += 1
        self._blocks.append(svg)

    def render(self) -> str:
        """The whole page: ``<!DOCTYPE html>`` with the CSP, styles and blocks (no script)."""
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        sub = f'<p class="sub">{html_text(self.subtitle)}</p>' if self.subtitle else ""
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                f"<title>{html_text(self.title, breaks=False)}</title><style>{_STYLE}</style></head>"
                f"<body><h1>{html_text(self.title, breaks=False)}</h1>{sub}{''.join(self._blocks)}"
                f"<footer>EvalBoard {html_text(__version__)} · written {stamp}</footer></body></html>\n")


def _ci(lo: float | None, hi: float | None) -> str | None:
    return None if lo is None or hi is None else f"{fixed(lo)} – {fixed(hi)}"


def qa_group_chart(report) -> str:
    """EM and token F1 by group (``report.by_group``) with their 95% intervals: one SVG chart
    (:func:`evaluators.reports.svg.grouped_bars`), in the HTML report and on the QA page's overview."""
    from evaluators.reports.svg import grouped_bars

    groups = list(report.by_group.values())
    return grouped_bars(
        list(report.by_group),
        {"exact_match": [g.exact_match for g in groups], "token_f1": [g.token_f1 for g in groups]},
        {"exact_match": [g.exact_match_ci_low for g in groups], "token_f1": [g.token_f1_ci_low for g in groups]},
        {"exact_match": [g.exact_match_ci_high for g in groups], "token_f1": [g.token_f1_ci_high for g in groups]},
        title=f"EM and F1 by {report.group_field} (95% CI)")


def qa_confusion_chart(report) -> str:
    """The fact-check confusion matrix (true labels on rows, as scikit-learn) as one SVG chart
    (:func:`evaluators.reports.svg.heatmap`), in the HTML report and on the QA page's overview."""
    from evaluators.reports.svg import heatmap

    cls = report.classification
    labels = [str(x) for x in cls.labels]
    return heatmap(labels, labels, [list(r) for r in cls.counts], row_title="true", col_title="predicted")


def qa_report(report, *, title: str | None = None, max_rows: int = 2000, corrections=None) -> str:
    """The self-contained HTML report of one QA / fact-check :class:`~evaluators.qa.evaluate.QAReport`.

    Cards (EM, F1 with their intervals, records), the breakdown by language / group with a
    chart by group, the confusion matrix and per-class table for fact-check, and the first
    ``max_rows`` records.  ``corrections``: ``(PatchEffect, applications)`` of a GT patch, shown
    before and after (:func:`evaluators.reports.corrections.add_html_section`).
    """
    from evaluators.reports.qa import rows_of

    page = HtmlReport(title or f"QA report: {report.file}", f"task: {report.task} ({report.task_reason})")
    o = report.overall
    page.cards([("Exact match", o.exact_match, _ci(o.exact_match_ci_low, o.exact_match_ci_high) and
                 f"95% CI {_ci(o.exact_match_ci_low, o.exact_match_ci_high)}"),
                ("Token F1", o.token_f1, _ci(o.token_f1_ci_low, o.token_f1_ci_high) and
                 f"95% CI {_ci(o.token_f1_ci_low, o.token_f1_ci_high)}"),
                ("Records scored", o.n, f"of {report.n_records:,} read"),
                ("Missing prediction", len(report.missing_prediction), "scored 0"),
                ("Missing ground truth", len(report.missing_gt), "not scored")])
    if corrections is not None:
        from evaluators.reports.corrections import add_html_section
        add_html_section(page, *corrections)
    subsets = [(f"lang={k}", v) for k, v in report.by_lang.items()]
    subsets += [(f"{report.group_field}={k}", v) for k, v in report.by_group.items()]
    if len(subsets) > 1:
        page.heading("Breakdown")
        page.table(["subset", "n", "exact_match", "EM 95% CI", "token_f1", "F1 95% CI"],
                   [[name, v.n, v.exact_match, _ci(v.exact_match_ci_low, v.exact_match_ci_high), v.token_f1,
                     _ci(v.token_f1_ci_low, v.token_f1_ci_high)] for name, v in subsets])
    if report.by_group:
        page.chart(qa_group_chart(report))
    cls = report.classification
    if cls is not None:
        page.heading("Confusion matrix")
        page.chart(qa_confusion_chart(report))
        page.table(["class", "precision", "recall", "f1", "support"],
                   [[c.label, c.precision, c.recall, c.f1, c.support] for c in cls.per_class],
                   caption=f"accuracy {fixed(cls.accuracy)} ({cls.correct} of {cls.n})" if cls.accuracy is not None
                   else None)
    page.heading("Records")
    rows = rows_of(report.records[i] for i in range(min(len(report.records), max_rows)))
    cols = ["id", "group", "status", "lang", "exact_match", "token_f1", "question", "gold_answers", "prediction",
            "gold_verdict", "predicted_verdict"]
    cols = [c for c in cols if any(r.get(c) is not None for r in rows)]
    page.table(cols, [[r.get(c) for c in cols] for r in rows],
               caption=None if len(report.records) <= max_rows
               else f"first {max_rows:,} of {len(report.records):,} records; the CSV download has all",
               collapsed=f"Show the {len(rows):,} records")
    page.paragraph(f"signature: {report.signature}")
    return page.render()


def comparison_report(view, comparison=None, signature: str = "", *, title: str = "Comparison",
                      max_rows: int = 2000, corrections=None) -> str:
    """The self-contained HTML report of runs side by side (:class:`~evaluators.qa.compare.SideBySide`).

    A chart of EM and F1 by system with 95% intervals, the systems table, agreement counts,
    the paired comparison of two systems when ``comparison`` is given
    (:class:`~evaluators.qa.compare.RunComparison`) with its won / lost records, and the
    records x systems matrix (first ``max_rows`` rows).  ``corrections``: ``(PatchEffect,
    applications)`` of a GT patch, shown before and after (:mod:`evaluators.reports.corrections`).
    """
    from evaluators.reports.qa import matrix_rows
    from evaluators.reports.svg import grouped_bars

    page = HtmlReport(title, f"{len(view.systems)} systems · {len(view.rows):,} record ids")
    common = view.common
    if common.same:
        s, on = view.scores, ""
    else:  # systems scored on different records: compared on the common ones, each own n beside them
        page.paragraph(common.warning())
        s = view.common_scores or view.scores
        on = (f" on the {common.units(common.n_common)} every system scored, n common = {common.n_common:,}"
              if common.n_common else ", each over its own records (n common = 0: not comparable)")
    page.chart(grouped_bars(
        list(view.systems), {"exact_match": [x.exact_match for x in s], "token_f1": [x.token_f1 for x in s]},
        {"exact_match": [x.exact_match_ci_low for x in s], "token_f1": [x.token_f1_ci_low for x in s]},
        {"exact_match": [x.exact_match_ci_high for x in s], "token_f1": [x.token_f1_ci_high for x in s]},
        title=f"EM and F1 by system{on} (95% CI)"))
    if common.same:
        page.table(["system", "n", "exact_match", "EM 95% CI", "token_f1", "F1 95% CI"],
                   [[x.system, x.n, x.exact_match, _ci(x.exact_match_ci_low, x.exact_match_ci_high), x.token_f1,
                     _ci(x.token_f1_ci_low, x.token_f1_ci_high)] for x in s], caption=s[0].ci if s else None)
    else:
        page.table(["system", "n", "n common", "exact_match", "EM 95% CI", "token_f1", "F1 95% CI",
                    "exact_match (own records)", "token_f1 (own records)"],
                   [[own.system, own.n, common.n_common, x.exact_match,
                     _ci(x.exact_match_ci_low, x.exact_match_ci_high), x.token_f1,
                     _ci(x.token_f1_ci_low, x.token_f1_ci_high), own.exact_match, own.token_f1]
                    for x, own in zip(s, view.scores)], caption=s[0].ci if s else None)
    page.paragraph("Agreement by exact match: " + ", ".join(f"{k.replace('_', ' ')} {v}"
                                                             for k, v in view.counts.items()))
    if corrections is not None:
        from evaluators.reports.corrections import add_html_section
        add_html_section(page, *corrections)
    if comparison is not None:
        c = comparison
        f1, em, ar, mc = (c.token_f1_bootstrap, c.exact_match_bootstrap, c.token_f1_randomization,
                          c.exact_match_mcnemar)
        page.heading(f"{c.name_b} against {c.name_a}")
        if not f1.computed:
            page.paragraph("No interval or p-value was computed for the paired bootstrap and the approximate "
                           "randomization test: the report was made with 0 resamples.")

        def p_card(x):
            if not x.computed:
                return "not computed"
            return p_value(x.p_value, True) if x.p_value_is_bound else x.p_value

        # Differences of EM / F1 in percentage points, as on the QA page and in `compare`'s output.
        page.cards([("F1 delta (B − A)", points(f1.delta), points_interval(f1.ci_low, f1.ci_high)),
                    ("p, paired bootstrap (F1)", p_card(f1), small_sample_note(f1) or None),
                    ("p, exact sign-flip (F1)" if ar.exact else "p, approximate randomization (F1)", p_card(ar), None),
                    ("EM delta (B − A)", points(em.delta), points_interval(em.ci_low, em.ci_high)),
                    ("p, McNemar exact (EM)", mc.p_value, f"right in A only {mc.only_a}, in B only {mc.only_b}"),
                    ("Records won / lost / tied", f"{f1.won} / {f1.lost} / {f1.tied}", f"of {c.n_paired} paired")],
                   digits=4)
        changed = [r for r in c.records if r.outcome != "tied"]
        page.table(["id", "outcome", "F1 A", "F1 B", "prediction A", "prediction B", "question"],
                   [[r.id, r.outcome, r.token_f1_a, r.token_f1_b, r.prediction_a, r.prediction_b, r.question]
                    for r in changed], caption="records whose F1 changed", max_rows=max_rows,
                   collapsed=f"Show the {len(changed):,} records whose F1 changed")
    page.heading("Records x systems")
    rows = matrix_rows(view)
    cols = list(rows[0]) if rows else ["id"]
    page.table(cols, [[r[c] for c in cols] for r in rows], max_rows=max_rows,
               collapsed=f"Show the {len(rows):,} records")
    if signature:
        page.paragraph(f"signature: {signature}")
    return page.render()


def narrative_documents_chart(scored) -> str:
    """Every component's score by document (the scored :class:`~evaluators.narrative.NarrativeResult` s),
    one colour per component, as one SVG chart (:func:`evaluators.reports.svg.grouped_bars`): in the HTML
    report and on the Narrative page's overview."""
    from evaluators.narrative import COMPONENT_TITLES, COMPONENTS
    from evaluators.reports.svg import grouped_bars

    return grouped_bars([r.story_id for r in scored],
                        {COMPONENT_TITLES[c]: [r.component_scores[c] for r in scored] for c in COMPONENTS},
                        title="Component scores by document")


def narrative_report(batch, *, title: str = "Narrative annotation report", max_rows: int = 2000) -> str:
    """The self-contained HTML report of a narrative batch (:class:`~evaluators.narrative.batch.BatchResult`).

    Micro and macro overall scores (macro with its 95% interval over documents), the component
    scores by document (chart and table), the problem counts and the signature.
    """
    from evaluators.narrative import COMPONENT_TITLES, COMPONENTS
    from evaluators.reports.svg import grouped_bars

    scored = batch.scored
    page = HtmlReport(title, f"{len(scored)} document(s) scored of {len(batch.documents)} paired")
    macro, micro = batch.macro or {}, batch.micro or {}
    counts = batch.problem_counts()
    page.cards([("Overall (micro)", micro.get("overall_score"), "pooled counts over documents"),
                ("Overall (macro)", macro.get("overall_score"),
                 _ci(macro.get("overall_score_ci_low"), macro.get("overall_score_ci_high")) and
                 f"95% CI {_ci(macro.get('overall_score_ci_low'), macro.get('overall_score_ci_high'))}"),
                ("Pairs not scored", counts["pairs_not_scored"], None),
                ("Input problems", counts["input_errors"] + counts["input_warnings"], None),
                ("Scoring notes", counts["scoring_notes"], None)])
    if scored:
        comps = [COMPONENT_TITLES[c] for c in COMPONENTS]
        page.chart(grouped_bars(
            comps, {"macro": [macro.get("component_scores", {}).get(c) for c in COMPONENTS]},
            {"macro": [macro.get("component_ci_low", {}).get(c) for c in COMPONENTS]},
            {"macro": [macro.get("component_ci_high", {}).get(c) for c in COMPONENTS]},
            title="Component scores, macro over documents (95% CI)"))
        page.chart(narrative_documents_chart(scored))
        page.heading("Documents")
        page.table(["document", "overall", *comps, "scoring notes"],
                   [[r.story_id, r.overall_score, *[r.component_scores[c] for c in COMPONENTS], len(r.warnings)]
                    for r in scored], max_rows=max_rows)
    errors = [d for d in batch.documents if d.result is None]
    if errors:
        page.heading("Pairs not scored")
        page.table(["document", "problem"], [[d.story_id, d.error.message if d.error else "unreadable"]
                                             for d in errors], max_rows=max_rows)
    corrections = getattr(batch, "corrections", None)
    if corrections is not None and corrections.effect is not None:  # review corrections (--gt-patch)
        from evaluators.reports.corrections import add_html_section
        add_html_section(page, corrections.effect, corrections.applications)
    page.paragraph(f"signature: {batch.signature}")
    return page.render()


def memory_type_chart(metrics: dict, names: Sequence[str], labels: dict[str, str] | None = None) -> str:
    """Every metric in ``names`` by question type with its 95% interval, as one SVG chart
    (:func:`evaluators.reports.svg.grouped_bars`): in the HTML report and on the Long Memory page's overview.

    ``metrics`` is a memory run's metrics block (``by_type`` -> type -> ``name``, ``name_ci_low``,
    ``name_ci_high``); ``labels`` names the series (default: the metric keys).
    """
    from evaluators.reports.svg import grouped_bars

    types = sorted(metrics["by_type"])
    by_type = metrics["by_type"]
    name = (labels or {}).get
    return grouped_bars(types, {name(n, n): [by_type[t].get(n) for t in types] for n in names},
                        {name(n, n): [by_type[t].get(f"{n}_ci_low") for t in types] for n in names},
                        {name(n, n): [by_type[t].get(f"{n}_ci_high") for t in types] for n in names},
                        title="Metrics by question type (95% CI)")


def memory_report(report: dict, *, title: str = "Long-term memory report", corrections=None) -> str:
    """The self-contained HTML report of a memory run (the ``memory`` command's JSON-ready report).

    Overall cards with 95% intervals, the by-type table and a chart of every metric by question
    type with its intervals, and the signature of each metric.  ``corrections``: the run's
    :class:`~evaluators.metrics.before_after.Corrections` (a GT patch), shown before and after
    (:func:`evaluators.reports.corrections.add_html_section`).
    """
    m = report["metrics"]
    names = list(m["metrics"])
    overall = m["overall"]
    page = HtmlReport(title, f"{overall.get('count', 0)} question(s)")
    page.cards([(n, overall.get(n), _ci(overall.get(f"{n}_ci_low"), overall.get(f"{n}_ci_high")) and
                 f"95% CI {_ci(overall.get(f'{n}_ci_low'), overall.get(f'{n}_ci_high'))}") for n in names])
    types = sorted(m["by_type"])
    if corrections is not None and corrections.effect is not None:
        from evaluators.reports.corrections import add_html_section
        add_html_section(page, corrections.effect, corrections.applications)
    page.chart(memory_type_chart(m, names))
    page.heading("By question type")
    page.table(["type", "count", *names], [["overall", overall.get("count"), *[overall.get(n) for n in names]]] +
               [[t, m["by_type"][t].get("count"), *[m["by_type"][t].get(n) for n in names]] for t in types])
    for note in report.get("input", {}).get("notes") or []:
        page.paragraph(f"Note: {note}")
    signature = m.get("signature", {})
    if isinstance(signature, dict):
        page.heading("Signature")
        page.table(["part", "signature"], [[k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)]
                                           for k, v in signature.items()], css_class="sig")
    else:
        page.paragraph(f"signature: {signature}")
    return page.render()


def narrative_comparison_report(batches: dict, paired=None, *, title: str = "Narrative systems compared",
                                max_rows: int = 2000) -> str:
    """The self-contained HTML report of several systems' predictions of the same stories.

    Parameters
    ----------
    batches : dict of str -> :class:`~evaluators.narrative.batch.BatchResult`
        System name -> its batch against the same ground truth (the page's Compare view).
    paired : :class:`~evaluators.metrics.statistics.PairedScores`, optional
        The paired test of two of them (:func:`evaluators.narrative.batch.compare_two_systems`).

    Macro scores by system and component with their 95% intervals (chart and table), the
    documents x systems overall scores (collapsed), the paired test when given, the signature.
    Scores are in [0, 1] with three decimals, differences signed, as on the page.
    """
    from evaluators.narrative import COMPONENT_TITLES, COMPONENTS
    from evaluators.narrative.batch import systems_common, systems_macro, systems_matrix
    from evaluators.reports.svg import grouped_bars

    names = list(batches)
    page = HtmlReport(title, f"{len(names)} systems · " + ", ".join(names))
    common = systems_common(batches)
    if common.same:
        macro, on = {n: b.macro or {} for n, b in batches.items()}, ""
    else:  # systems scored on different stories: compared on the common ones, each own n beside them
        page.paragraph(common.warning())
        macro = systems_macro(batches, common) if common.n_common else {n: b.macro or {} for n, b in batches.items()}
        on = (f" on the {common.units(common.n_common)} every system scored, n common = {common.n_common:,}"
              if common.n_common else ", each over its own stories (n common = 0: not comparable)")
    keys = ["overall", *COMPONENTS]
    labels = {"overall": "Overall", **{c: COMPONENT_TITLES[c] for c in COMPONENTS}}

    def value(n, k, suffix=""):
        m = macro[n]
        return m.get(f"overall_score{suffix}") if k == "overall" else m.get(f"component{suffix or '_scores'}", {}).get(k)

    page.chart(grouped_bars([labels[k] for k in keys], {n: [value(n, k) for k in keys] for n in names},
                            {n: [value(n, k, "_ci_low") for k in keys] for n in names},
                            {n: [value(n, k, "_ci_high") for k in keys] for n in names},
                            title=f"Macro scores by system{on} (mean over documents; 95% CI)"))
    page.table(["system", "documents scored", *([] if common.same else ["n common"]), "overall (macro)", "95% CI",
                *[labels[c] for c in COMPONENTS], *([] if common.same else ["overall (own stories)"])],
               [[n, len(batches[n].scored), *([] if common.same else [common.n_common]), value(n, "overall"),
                 _ci(value(n, "overall", "_ci_low"), value(n, "overall", "_ci_high")),
                 *[value(n, c) for c in COMPONENTS],
                 *([] if common.same else [(batches[n].macro or {}).get("overall_score")])] for n in names])
    if paired is not None:
        bs, ar = paired.bootstrap, paired.randomization
        page.heading(f"{paired.name_b} against {paired.name_a}")
        page.cards([("Overall delta (B − A)", signed(bs.delta),
                     f"95% CI {signed(bs.ci_low)} to {signed(bs.ci_high)}" if bs.ci_low is not None else None),
                    ("p, paired bootstrap", bs.p_value, small_sample_note(bs) or None),
                    ("p, exact sign-flip" if ar.exact else "p, approximate randomization", ar.p_value, None),
                    ("Stories higher / lower / tied", f"{bs.won} / {bs.lost} / {bs.tied}",
                     f"of {paired.n_paired} paired")], digits=4)
    page.heading("Documents x systems")
    matrix = systems_matrix(batches)
    cols = ["story_id", *[f"{n}: overall_score" for n in names], "spread"]
    page.table(cols, [[r.get(c) for c in cols] for r in matrix], max_rows=max_rows,
               collapsed=f"Show the {len(matrix):,} stories")
    signatures = {n: b.signature for n, b in batches.items()}
    if len(set(signatures.values())) == 1:
        page.paragraph(f"signature: {next(iter(signatures.values()))}")
    else:
        page.table(["system", "signature"], [[n, s] for n, s in signatures.items()], css_class="sig")
    return page.render()
