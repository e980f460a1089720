"""Review sessions written out: the persona human-annotation CSV (through the one CSV writer),
the GT corrections JSONL, the JSONL export (:mod:`evaluators.review.exchange`) and Label Studio's
tasks and labeling config (:mod:`evaluators.review.label_studio`), for the CLI and the Review page
alike."""

from __future__ import annotations

import json
from collections.abc import Iterator

from evaluators.reports.csv_writer import write_csv
from evaluators.reports.escape import html_text
from evaluators.review import label_studio
from evaluators.review.exchange import iter_export
from evaluators.review.service import LABEL_HELP
from evaluators.review.store import ReviewStore, human_verdict

#: The persona human-annotation layout (the earlier script's CSV), plus who decided.
CSV_COLUMNS = ["scene", "dialogue_index", "context", "expected_response", "prediction", "exact_match",
               "content_correct", "style_consistent", "notes", "annotator", "label", "status"]
#: Decisions per CSV chunk when streaming.
CHUNK = 2_000


def iter_csv(store: ReviewStore, session_id: int) -> Iterator[str]:
    """Decisions in the persona human-annotation layout, streamed in chunks (header first).

    ``content_correct`` is 1 for ``acceptable_variant`` and ``correct``, 0 for ``model_error`` and empty for
    ``gt_error`` (the reference is wrong, the reply is not judged); ``style_consistent`` is the
    1-5 score; ``notes`` the comment; ``exact_match`` the item's own, when it has one.
    """
    rows: list[list] = []
    header = True
    for d, p in store.iter_decisions_with_items(session_id):
        verdict = human_verdict(d.label)
        correct = "" if verdict is None else verdict
        rows.append([p.get("scene", ""), p.get("dialogue_index", p.get("id", "")),
                     p.get("context", p.get("question", "")),
                     p.get("ground_truth", ""), p.get("prediction", ""), p.get("exact_match", ""), correct,
                     "" if d.score is None else d.score, d.comment, d.annotator, d.label or "", d.status])
        if len(rows) >= CHUNK:
            yield _chunk(rows, header)
            rows, header = [], False
    if rows or header:
        yield _chunk(rows, header)


def _chunk(rows: list[list], header: bool) -> str:
    text = write_csv(CSV_COLUMNS, rows)
    return text if header else text.split("\r\n", 1)[1]


def export_csv(store: ReviewStore, session_id: int) -> str:
    """:func:`iter_csv` as one text."""
    return "".join(iter_csv(store, session_id))


def corrections_jsonl(store: ReviewStore, session_id: int) -> str:
    """The GT corrections of a session (items adjudicated ``gt_error``), one JSON object a line."""
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in store.gt_corrections(session_id))


#: The hint of each A/B label in the labeling config (one-sided labels: the Review page's help).
PAIR_HELP = {"a_better": "Reply A is better.", "b_better": "Reply B is better.", "tie": "Both replies are as good."}


def label_studio_config(store: ReviewStore, session_id: int) -> str:
    """The Label Studio labeling config (XML) of a session's tasks (:func:`~evaluators.review.label_studio.iter_tasks`).

    One ``<Text>`` per payload field every item has (:func:`~evaluators.review.label_studio.layout`),
    single-choice ``<Choices name="label">`` of the session's labels (the session's definition of
    each, else the Review page's help, as the hint), ``<Rating name="score">`` (1-5) and
    ``<TextArea name="comment">``: the names and values the exported results use.  Every user
    string is escaped (:func:`~evaluators.reports.escape.html_text`).
    """
    lay = label_studio.layout(store, session_id)

    def attr(text: object) -> str:
        return html_text(text, breaks=False)

    lines = ["<View>", f'  <Header value="{attr("EvalBoard review: " + lay.session)}"/>']
    for name, path, header in lay.shown:
        lines += [f'  <Header value="{attr(header)}" size="5"/>',
                  f'  <Text name="{name}" value="${".".join(path)}"/>']
    if not lay.shown:
        lines.append(f'  <Text name="item" value="${label_studio.META}.item_digest"/>')
    to = lay.to_name
    lines.append(f'  <Choices name="{label_studio.LABEL}" toName="{to}" choice="single" showInline="true">')
    for label in lay.labels:
        hint = lay.labels_help.get(label) or LABEL_HELP.get(label) or PAIR_HELP[label]
        lines.append(f'    <Choice value="{label}" hint="{attr(hint)}"/>')
    lines += ["  </Choices>", f'  <Rating name="{label_studio.SCORE}" toName="{to}" maxRating="5"/>',
              f'  <TextArea name="{label_studio.COMMENT}" toName="{to}" maxSubmissions="1" editable="true"/>',
              "</View>"]
    return "\n".join(lines) + "\n"


#: Export formats of :func:`export_text`.
FORMATS = ("jsonl", "csv", "corrections", "label-studio", "label-studio-config")


def export_text(store: ReviewStore, session_id: int, fmt: str) -> Iterator[str]:
    """The export of a session in ``fmt`` (one of :data:`FORMATS`), streamed."""
    if fmt == "csv":
        return iter_csv(store, session_id)
    if fmt == "corrections":
        return iter([corrections_jsonl(store, session_id)])
    if fmt == "label-studio":
        return label_studio.iter_tasks(store, session_id)
    if fmt == "label-studio-config":
        return iter([label_studio_config(store, session_id)])
    return iter_export(store, session_id)
