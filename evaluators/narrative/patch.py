"""Narrative scores after review corrections (a GT patch, :mod:`evaluators.io.gt_patch`).

Decisions (issue 19, narrative):

- **One GT file per story.**  A patch line carries the SHA-256 of its story's GT file
  (``gt_digest``) and names a place in it (``record_id``, a key of :mod:`evaluators.narrative.locate`:
  a character by name, an event by id, a relationship by agent and target).  Applied to a run over
  many GT files, each line goes to the file with its digest; a line whose digest is none of the
  run's files is reported (a warning at its patch line) and skipped, so a patch made for a whole
  collection applies to the stories a run scores; a patch none of whose lines is for a file of the
  run is refused as a whole (:class:`~evaluators.io.gt_patch.GTPatchMismatch`), as for every task.
- **The GT file stays untouched**: each patched story is a corrected copy in memory, scored by the
  same scorer; the missing-GT policy of DESIGN.md applies to it, so a GT value removed by a patch
  is *empty GT* (not counted, not in the denominators).
- **Ops and what they change** (the scorer honours each exactly; ``replace`` is a GT error with
  its corrected value, ``add_answer`` an acceptable variant: the prediction's value, ``remove`` a GT
  error without a value):

  - a character ``characters[N]``: ``replace`` renames it (and the GT relationships, agents and
    targets written with N); ``add_answer`` makes the value an alias of the character (alias
    matching: a predicted name equal to it matches); ``remove`` drops it from the GT list;
  - a label (archetype, relationship level 1 / 2, sentiment, action-layer field): ``replace`` sets
    the GT label; ``add_answer`` accepts the label there (a prediction with that label, in its
    canonical form, is correct; sentiment counts it under the GT label); ``remove`` empties it
    (skipped by the missing-GT policy);
  - a relationship ``...relationships[A -> T]``: ``replace`` sets agent and target to the
    corrected ``A' -> T'``; ``remove`` drops it; ``add_answer`` is not taken;
  - a span ``...text_span``: ``replace`` sets the corrected ``[start, end)``; ``add_answer`` makes
    the prediction's span the GT span (accepted as matching: a segmentation has one span per
    event); ``remove`` leaves the event without a span (skipped).

  A line with an op a place does not take, or a value that cannot be read (a span that is not
  ``[start, end)``, a relationship that is not ``agent -> target``), is reported and skipped.
- **Before and after**: the run is scored without and with the corrections; the overall score
  and each component score are compared document by document
  (:func:`evaluators.metrics.before_after.score_effect`: means with percentile bootstrap
  intervals, documents resampled, and the paired bootstrap of after minus before).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evaluators.io.errors import InputError, InputIssue
from evaluators.io.gt_patch import (OP_ADD, OP_REMOVE, OP_REPLACE, AppliedChange, GTPatchMismatch, GTPatchSet,
                                    PatchApplication, PatchEntry, apply_gt_patch, file_sha256)
from evaluators.io.sources import InputFile
from evaluators.metrics.before_after import CorrectionsAdapter, PatchedInputs, per_run
from evaluators.narrative.loader import LoadedDocument, load_document
from evaluators.narrative.locate import (RELATIONSHIP_FIELDS, action_key, character_key, event_ids, gold_values,
                                         relationship_key, scored_name, span_key,
                                         usable_relationship)
from evaluators.schema.narrative import ACTION_FIELDS, ActionLayer, TextSpan

#: Ops each kind of place takes (see the module docstring).
PLACE_OPS = {"character": (OP_REPLACE, OP_ADD, OP_REMOVE), "label": (OP_REPLACE, OP_ADD, OP_REMOVE),
             "relationship": (OP_REPLACE, OP_REMOVE), "span": (OP_REPLACE, OP_ADD, OP_REMOVE)}
_SPAN = re.compile(r"^\s*\[\s*(\d+)\s*,\s*(\d+)\s*\)\s*$")
#: The before / after metrics: the overall score, then each component's score.
EFFECT_METRICS = ("overall_score", "characters", "relationships", "sentiment", "action_layer", "text_span")
#: Bootstrap resamples of the before / after intervals and paired tests.
EFFECT_RESAMPLES = 10_000


def place_kind(record_id: str) -> str:
    """``character``, ``label``, ``relationship`` or ``span``: what kind of GT place a record id names.

    Parameters
    ----------
    record_id : str
        A place as :mod:`evaluators.narrative.locate` names it.

    Returns
    -------
    str

    Examples
    --------
    >>> place_kind("characters[狐狸].archetype"), place_kind("narrative_events[e1].text_span")
    ('label', 'span')
    """
    if record_id.startswith("characters["):
        return "label" if record_id.endswith("].archetype") else "character"
    if record_id.endswith(".text_span"):
        return "span"
    if ".action_layer." in record_id or record_id.endswith(tuple(f"].{f}" for f in RELATIONSHIP_FIELDS)):
        return "label"
    return "relationship"


def parse_span(text: str) -> tuple[int, int] | None:
    """``"[start, end)"`` -> ``(start, end)`` with ``0 <= start < end``; ``None`` otherwise.

    Parameters
    ----------
    text : str
        A span as :func:`evaluators.narrative.locate.span_text` writes it.

    Returns
    -------
    (int, int) or None
        Character offsets of a half-open span.

    Examples
    --------
    >>> parse_span("[3, 10)"), parse_span("[10, 3)")
    ((3, 10), None)
    """
    m = _SPAN.match(text or "")
    if not m or int(m.group(1)) >= int(m.group(2)):
        return None
    return int(m.group(1)), int(m.group(2))


def parse_relationship(text: str) -> tuple[str, str] | None:
    """``"agent -> target"`` (``∅``: empty target) -> ``(agent, target)``; ``None`` when it has no arrow or names.

    Parameters
    ----------
    text : str
        A relationship as :func:`evaluators.narrative.locate.relationship_text` writes it.

    Returns
    -------
    (str, str) or None

    Examples
    --------
    >>> parse_relationship("狐狸 -> ∅")
    ('狐狸', '')
    """
    agent, arrow, target = (text or "").partition("->")
    agent, target = agent.strip(), target.strip()
    target = "" if target == "∅" else target
    return (agent, target) if arrow and (agent or target) else None


def _refusal(e: PatchEntry) -> str | None:
    """Why the narrative task cannot take entry ``e`` at its place (``None`` when it can)."""
    kind = place_kind(e.record_id)
    if e.op not in PLACE_OPS[kind]:
        return f"a {kind} takes no {e.op!r} correction"
    if kind == "span" and e.op != OP_REMOVE and parse_span(e.new[-1]) is None:
        return f"{e.new[-1]!r} is not a span [start, end)"
    if kind == "relationship" and e.op == OP_REPLACE and parse_relationship(e.new[0]) is None:
        return f"{e.new[0]!r} is not a relationship 'agent -> target'"
    return None


@dataclass(frozen=True)
class DocumentPatch:
    """What the corrections change in one story's GT (picklable: sent with the file to a worker).

    Attributes
    ----------
    changes : tuple of (str, tuple of str or None, tuple of str)
        ``(record id, corrected, accepted)`` per changed place
        (:meth:`~evaluators.io.gt_patch.PatchApplication.corrected_and_accepted`): ``corrected``
        ``None`` when the GT value stands, ``()`` when removed.
    """

    changes: tuple[tuple[str, tuple[str, ...] | None, tuple[str, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changes)


@dataclass(frozen=True)
class PatchedFile(InputFile):
    """A GT file with the corrections to apply once it is read (its bytes are the file's, unchanged)."""

    patch: DocumentPatch | None = None


def patch_story(loaded: LoadedDocument, entries: Sequence[PatchEntry], digest: str
                ) -> tuple[DocumentPatch, PatchApplication]:
    """Apply a story's patch entries to the values of its GT places.

    Parameters
    ----------
    loaded : LoadedDocument
        The story's GT as read.
    entries : sequence of PatchEntry
        Made for this file (``gt_digest == digest``), in order.
    digest : str
        SHA-256 of the GT file.

    Returns
    -------
    (DocumentPatch, PatchApplication)
        What to change when the story is scored, and what each entry did (entries a place does not
        take: status ``unsupported`` and a located warning).
    """
    taken, refused, issues = [], [], []
    for e in entries:
        why = _refusal(e)
        if why is None:
            taken.append(e)
            continue
        refused.append(AppliedChange(e.record_id, e.op, "unsupported", (), (), e.who, e.why, e.session, e.where()))
        issues.append(InputIssue(e.file or "<patch>", f"record {e.record_id!r}: {why}: skipped", line=e.line,
                                 severity="warning", kind="gt_patch"))
    app = apply_gt_patch(gold_values(loaded.doc), taken, digest, allow_remove=True)
    if refused:
        app = app.with_more(refused, issues)
    changes = tuple((rid, *app.corrected_and_accepted(rid)) for rid in app.answers)
    return DocumentPatch(changes), app


def apply_document_patch(loaded: LoadedDocument, patch: DocumentPatch | None) -> LoadedDocument:
    """The story's GT with the corrections (a copy; ``loaded`` is not modified); rules in the module docstring.

    Acceptable labels go to :attr:`~evaluators.narrative.loader.LoadedDocument.accepted`, keyed by
    the place as the scorer names it after the corrections (a renamed character's new name).

    Parameters
    ----------
    loaded : LoadedDocument
        The story's GT as read.
    patch : DocumentPatch or None
        Its corrections (:func:`patch_story`); ``None`` or empty returns ``loaded`` itself.

    Returns
    -------
    LoadedDocument
    """
    if not patch:
        return loaded
    changes = {rid: (corrected, accepted) for rid, corrected, accepted in patch.changes}
    doc = loaded.doc.model_copy(deep=True)
    accepted: dict[str, tuple[str, ...]] = {}

    def label(key: str, current: str, after_key: str | None = None) -> str:
        """The corrected value of a label place (``current`` when none); its accepted labels noted."""
        corrected, more = changes.get(key, (None, ()))
        if more:
            accepted[after_key or key] = more
        return current if corrected is None else (corrected[0] if corrected else "")

    renames: dict[str, str] = {}
    characters = []
    for c in doc.characters:
        name = scored_name(c.name, c.alias)
        key = character_key(name)
        corrected, aliases = changes.get(key, (None, ())) if name else (None, ())
        if corrected == ():
            continue
        if corrected:
            renames[name] = c.name = corrected[0]
        c.alias = list(c.alias) + [a for a in aliases if a not in c.alias]
        c.archetype = label(key + ".archetype", c.archetype, character_key(scored_name(c.name, c.alias)) + ".archetype")
        characters.append(c)
    doc.characters = characters
    seen: set[str] = set()
    for gid, e in zip(event_ids(doc), doc.narrative_events):
        first = gid not in seen
        seen.add(gid)
        rels = []
        for r in e.relationships:
            if first and usable_relationship(r):
                key = relationship_key(gid, r.agent, r.target)
                corrected, _ = changes.get(key, (None, ()))
                if corrected == ():
                    continue
                if corrected:
                    r.agent, r.target = parse_relationship(corrected[0])
                after = relationship_key(gid, renames.get(r.agent, r.agent), renames.get(r.target, r.target))
                for f in RELATIONSHIP_FIELDS:
                    setattr(r, f, label(f"{key}.{f}", getattr(r, f), f"{after}.{f}"))
            r.agent, r.target = renames.get(r.agent, r.agent), renames.get(r.target, r.target)
            rels.append(r)
        e.relationships = rels
        e.agents = [renames.get(a, a) for a in e.agents]
        e.targets = [renames.get(t, t) for t in e.targets]
        if not first:
            continue
        values = {f: label(action_key(gid, f), getattr(e.action_layer, f) if e.action_layer else "")
                  for f in ACTION_FIELDS}
        if e.action_layer is not None or any(values.values()):
            e.action_layer = ActionLayer(**values)
        corrected, spans = changes.get(span_key(gid), (None, ()))
        if corrected == () and not spans:
            e.text_span = None
        elif corrected or spans:
            start, end = parse_span((spans or corrected)[-1])
            e.text_span = TextSpan(start=start, end=end, text=doc.text[start:end])
    return replace(loaded, doc=doc, accepted=accepted)


def accepted_labels(loaded: LoadedDocument, key: str, canon: Mapping[str, str]) -> frozenset[str]:
    """The canonical labels accepted at place ``key`` of a patched GT (empty without a patch).

    Parameters
    ----------
    loaded : LoadedDocument
    key : str
        A label place (:mod:`evaluators.narrative.locate`).
    canon : mapping
        Raw label -> canonical label of the field (the taxonomy's ``values``).
    """
    more = loaded.accepted.get(key) if loaded.accepted else None
    return frozenset(v for v in (canon[a] for a in more) if v) if more else frozenset()


@dataclass(frozen=True)
class PatchedGT:
    """A run's GT files with the corrections attached, and what the patch did to each.

    Attributes
    ----------
    files : tuple of InputFile
        The run's GT files in order; a corrected story's is a :class:`PatchedFile`.
    applications : tuple of (str, PatchApplication)
        Per GT file a patch line was made for.
    issues : tuple of InputIssue
        Lines for no GT file of the run (warnings, located), GT files that could not be read.
    """

    files: tuple[InputFile, ...]
    applications: tuple[tuple[str, PatchApplication], ...]
    issues: tuple[InputIssue, ...] = ()


def gt_digests(gt_files: Sequence[InputFile]) -> dict[str, str]:
    """``{file name: SHA-256}`` of a run's readable GT files (``issue`` is None): what a patch's lines and a
    review item's story digest name (:func:`evaluators.io.gt_patch.file_sha256`).

    Parameters
    ----------
    gt_files : sequence of InputFile

    Returns
    -------
    dict of str to str
        64-hex-digit digests.
    """
    return {f.name: file_sha256(f.data) for f in gt_files if f.issue is None}


def patch_gt_files(gt_files: Sequence[InputFile], patches: GTPatchSet) -> PatchedGT:
    """Attach each patch line to the GT file it was made for (by digest).

    Parameters
    ----------
    gt_files : sequence of InputFile
    patches : GTPatchSet
        In order (several files: one after the other).

    Returns
    -------
    PatchedGT

    Raises
    ------
    GTPatchMismatch
        When no line of the patches was made for a GT file of the run.
    """
    digests = gt_digests(gt_files)
    known = set(digests.values())
    entries = list(patches.entries)
    if entries and not any(e.gt_digest in known for e in entries):
        e = entries[0]
        files = ", ".join(f"{n} (sha256 {d[:12]}...)" for n, d in list(digests.items())[:5])
        more = f" and {len(digests) - 5} more" if len(digests) > 5 else ""
        raise GTPatchMismatch(f"{e.where()}: no correction of this patch was made for a GT file of this run (the "
                              f"first is for the GT file with sha256 {e.gt_digest[:12]}..., the run's are {files}"
                              f"{more}); a patch applies only to the GT files it was made for")
    issues = [InputIssue(e.file or "<patch>", f"record {e.record_id!r}: made for a GT file that is not in this run "
                         f"(sha256 {e.gt_digest[:12]}...): skipped", line=e.line, severity="warning", kind="gt_patch")
              for e in entries if e.gt_digest not in known]
    files, applications = [], []
    for f in gt_files:
        digest = digests.get(f.name)
        mine = [e for e in entries if e.gt_digest == digest] if digest else []
        if not mine:
            files.append(f)
            continue
        try:
            loaded = load_document(f.data, f.name)
        except InputError as exc:  # the pair reports the file as unusable; its corrections cannot apply
            issues.append(InputIssue(f.name, f"{len(mine)} correction(s) not applied: {exc.issue.message}",
                                     severity="warning", kind="gt_patch"))
            files.append(f)
            continue
        doc_patch, app = patch_story(loaded, mine, digest)
        files.append(PatchedFile(f.name, f.data, f.issue, patch=doc_patch))
        applications.append((f.name, app))
    return PatchedGT(tuple(files), tuple(applications), tuple(issues))


def adapter(run: Callable[[Any], Any], run_after: Callable[[Any], Any] | None = None) -> CorrectionsAdapter:
    """The narrative task's :class:`~evaluators.metrics.before_after.CorrectionsAdapter`: each patch line
    attached to the GT file it was made for (:func:`patch_gt_files`; lines for no file of the run are the
    issues), the overall and component scores (:data:`EFFECT_METRICS`) compared document by document.

    Parameters
    ----------
    run : callable
        ``run(inputs) -> NarrativeReport`` of inputs without a patch
        (:func:`~evaluators.narrative.run.run_narrative` with the run's config).
    run_after : callable, optional
        The same for the run after the corrections, when it differs (progress and streamed writes).

    Returns
    -------
    CorrectionsAdapter
        For :func:`~evaluators.metrics.before_after.run_before_after` of ``NarrativeInputs`` and their patch.
    """
    def patch(inputs, patches: GTPatchSet) -> PatchedInputs:
        patched = patch_gt_files(inputs.gt, patches)
        return PatchedInputs(replace(inputs, gt=patched.files, gt_patch=None), patched.applications, patched.issues)

    return CorrectionsAdapter(patch=patch, run=lambda x: run(replace(x, gt_patch=None)),
                              values=per_run(lambda r: {"predictions": effect_values(r)}), metrics=EFFECT_METRICS,
                              run_after=(lambda p: run_after(p.inputs)) if run_after is not None else None,
                              unit="document", n_resamples=EFFECT_RESAMPLES, seed=0)


def effect_values(report: Any) -> dict[str, list[float | None]]:
    """Metric -> one value per document pair (in the report's order, ``None`` for a pair not scored).

    Parameters
    ----------
    report : NarrativeReport
        A scored run.

    Returns
    -------
    dict of str to list of (float or None)
        Keys :data:`EFFECT_METRICS`; each list has one value in [0, 1] per document pair.
    """
    out: dict[str, list[float | None]] = {m: [] for m in EFFECT_METRICS}
    for d in report.documents:
        r = d.result
        out["overall_score"].append(r.overall_score if r is not None else None)
        for c in EFFECT_METRICS[1:]:
            out[c].append(r.component_scores.get(c) if r is not None else None)
    return out
