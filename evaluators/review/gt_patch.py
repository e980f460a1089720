"""From review decisions to a GT patch (:mod:`evaluators.io.gt_patch`) and to human labels.

The final label of an item is its adjudication when there is one, else the label every
submitted decision agrees on (at least one).  Items whose submitted labels disagree and are
not adjudicated have no final label yet.  From the final labels:

- ``acceptable_variant`` and ``correct`` (the prediction is right, in other words than the GT or as
  it stands): the prediction becomes one more accepted answer of the record (``add_answer``; nothing
  changes when it is one of the GT answers already), so every run that gives it is scored right;
- ``gt_error`` with a corrected answer (typed at adjudication,
  :meth:`~evaluators.review.store.ReviewStore.adjudicate`): the record's answers become the
  corrected one (``replace``); without one the item is listed as skipped;
- ``model_error``: the GT stands, nothing to patch.

These corrections belong to the dataset, not to the file the session was made from: each entry
is keyed by its record's id and GT answers (patch version 3, :func:`evaluators.io.gt_patch.record_key`),
so the patch applies to every run file holding that record with that GT (both sides of ``compare``
and ``review gate``, the next run of the same questions) and to no record whose GT differs.

Several decisions on one question (items of several systems, or of several sessions) all take
effect: a GT error's corrected answer becomes the record's GT and every acceptable variant is one more
accepted answer beside it, whatever the order of the items.  Only two *different* corrected answers
of one record conflict (the first stands; see :mod:`evaluators.io.gt_patch`).

Narrative sessions (one item per mismatch, :func:`~evaluators.review.items.narrative_items`)
are made into patches by :func:`build_narrative_patch`: each item names its story's GT file
(``gt_digest``) and the place in it (``gt_path``); an acceptable variant accepts the prediction's
value there, a GT error with a corrected value replaces the GT value, and a GT error without one
on a character, a relationship or a span removes it from the GT (a label needs its corrected
value).  See :mod:`evaluators.narrative.patch` for what each changes in the scores.

The ground truth itself is never edited: the patch is applied when scoring (``--gt-patch``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluators.io.gt_patch import (KEYED_VERSION, OP_ADD, OP_REMOVE, OP_REPLACE, GTPatchSet, PatchEntry, file_sha256,
                                    record_key)
from evaluators.results import DictMixin
from evaluators.review.store import LABELS, Item, ReviewStore

#: Item kinds whose payload has a record ``id``, a ``ground_truth`` and a ``prediction`` (one side).  A task
#: plugged in through :mod:`evaluators.tasks` marks its items ``"patchable": true`` instead
#: (:func:`evaluators.tasks.review_items`).
PATCHABLE_KINDS = ("qa", "testsets", "memory", "dialogue")


@dataclass(frozen=True)
class FinalLabel(DictMixin):
    """The final human label of one item.

    Attributes
    ----------
    item : Item
    label : str
        One of :data:`~evaluators.review.store.LABELS`.
    who : str
        The adjudicator, or the agreeing annotators (comma-separated).
    source : {"adjudicated", "agreed"}
    comment : str
    corrected_answer : str or None
        For ``gt_error`` (adjudicated only).
    """

    item: Item
    label: str
    who: str
    source: str
    comment: str = ""
    corrected_answer: str | None = None

    def why(self) -> str:
        """The ``why`` of a patch entry: the label, its comment, and "(agreed)" for an agreed label."""
        return self.label + (f": {self.comment}" if self.comment else "") + (" (agreed)" if self.source == "agreed"
                                                                           else "")


def final_labels(store: ReviewStore, session_id: int) -> list[FinalLabel]:
    """The final label of every item that has one, in item order (see the module docstring).

    Parameters
    ----------
    store : ReviewStore
    session_id : int

    Returns
    -------
    list of FinalLabel
        The adjudicated label where there is one, else the label every submitted decision agrees
        on; items without either are left out, as are A/B labels.
    """
    adjudicated = {a["item_id"]: a for a in store.adjudications(session_id)}
    submitted: dict[int, list] = {}
    for d in store.decisions(session_id):
        if d.status == "submitted" and d.label is not None:
            submitted.setdefault(d.item_id, []).append(d)
    out = []
    for item in store.items(session_id):
        a = adjudicated.get(item.id)
        if a is not None:
            if a["label"] in LABELS:
                out.append(FinalLabel(item, a["label"], a["adjudicator"], "adjudicated", a["comment"] or "",
                                      a.get("corrected_answer")))
            continue
        ds = submitted.get(item.id, [])
        if ds and len({d.label for d in ds}) == 1 and ds[0].label in LABELS:
            comments = "; ".join(d.comment for d in ds if d.comment)
            out.append(FinalLabel(item, ds[0].label, ", ".join(sorted(d.annotator for d in ds)), "agreed", comments))
    return out


@dataclass(frozen=True)
class PatchBuild(DictMixin):
    """The patch made from a session's decisions.

    Attributes
    ----------
    entries : tuple of PatchEntry
        In item order; an answer accepted on several items of one record id (several systems gave
        it) is added once.
    skipped : tuple of (str, str)
        ``(record id or item position, why)`` for final labels that give no entry although
        they correct something (a GT error without corrected answer, an id not in the GT ...).
    """

    entries: tuple[PatchEntry, ...]
    skipped: tuple[tuple[str, str], ...]


def _payload_answers(payload: Mapping) -> tuple[str, ...]:
    gt = payload.get("ground_truth")
    if isinstance(gt, list):
        return tuple(str(g) for g in gt)
    if not isinstance(gt, str) or not gt.strip():
        return ()
    # QA items show several answers joined by " | " (evaluators.review.items.qa_items)
    return tuple(gt.split(" | ")) if payload.get("kind") == "qa" else (gt,)


def build_gt_patch(store: ReviewStore, session_id: int, gt_digest: str,
                   gold: Mapping[str, Sequence[str]] | None = None, *, keyed: bool = True) -> PatchBuild:
    """Turn a session's final labels into GT patch entries.

    Parameters
    ----------
    store : ReviewStore
    session_id : int
    gt_digest : str
        SHA-256 of the GT file the session's records come from
        (:func:`evaluators.io.gt_patch.file_sha256`).
    gold : mapping of str to sequence of str, optional
        Record id -> GT answers of that file: the entries' ``old`` values, and a check that each
        id is in the file.  Without it ``old`` is taken from the item as shown to the reviewers.
    keyed : bool
        ``True`` (the default): entries keyed by record and GT (version 3, applied to every file of
        the dataset); ``False``: entries bound to the file ``gt_digest`` (version 1).

    Returns
    -------
    PatchBuild
        In item order (keyed entries apply in any order: :mod:`evaluators.io.gt_patch`).
    """
    session = store.session(session_id)
    entries: list[PatchEntry] = []
    skipped: list[tuple[str, str]] = []
    added: set[tuple[str, str]] = set()

    def entry(rid: str, op: str, old: tuple[str, ...], new: tuple[str, ...], who: str, why: str) -> PatchEntry:
        if keyed:
            return PatchEntry(rid, "", op, old, new, who, why, session.name, KEYED_VERSION,
                              gt_key=record_key(rid, old))
        return PatchEntry(rid, gt_digest, op, old, new, who, why, session.name)

    for f in final_labels(store, session_id):
        p = f.item.payload
        if f.label == "model_error":
            continue
        rid = str(p.get("id") or "").strip()
        where = rid or f"item {f.item.position + 1}"
        if not (p.get("kind") in PATCHABLE_KINDS or p.get("patchable") is True) or not rid:
            skipped.append((where, f"a {p.get('kind')!r} item has no single record to correct"))
            continue
        if gold is not None and rid not in gold:
            skipped.append((rid, "record id not in the GT file"))
            continue
        old = tuple(gold[rid]) if gold is not None else _payload_answers(p)
        why = f.why()
        if f.label in ("acceptable_variant", "correct"):
            prediction = str(p.get("prediction") or "").strip()
            if not prediction:
                skipped.append((rid, f"{f.label.replace('_', ' ')} of an empty prediction"))
                continue
            if (rid, prediction) in added:
                continue  # the same answer accepted for another system's record of this question: once
            added.add((rid, prediction))
            entries.append(entry(rid, OP_ADD, old, (prediction,), f.who, why))
        elif f.label == "gt_error":
            if not (f.corrected_answer or "").strip():
                skipped.append((rid, "GT error without a corrected answer (type it when adjudicating)"))
                continue
            entries.append(entry(rid, OP_REPLACE, old, (f.corrected_answer.strip(),), f.who, why))
    return PatchBuild(tuple(entries), tuple(skipped))


def dataset_patch(store: ReviewStore, gold: Mapping[str, Sequence[str]], *, kind: str = "qa") -> PatchBuild:
    """Every session's corrections of the records of one GT: the dataset's patch (keyed, version 3).

    The final labels of every session of ``kind`` in the store, newest session first, for the items
    whose record is in ``gold`` with the GT the item showed (an item made from another GT of the record
    is skipped): one patch for every run of the dataset.  An answer accepted in several sessions is
    added once; a record corrected to different answers in two sessions keeps the newest session's
    correction (the older one is listed in ``skipped``).

    Parameters
    ----------
    store : ReviewStore
    gold : mapping of str to sequence of str
        Record id -> GT answers of a file of the dataset (:func:`gold_of`).
    kind : str
        The sessions' kind (``qa``, ``testsets``, ``memory``, ``dialogue``).

    Returns
    -------
    PatchBuild
    """
    entries: list[PatchEntry] = []
    skipped: list[tuple[str, str]] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    corrected: dict[str, tuple[tuple[str, ...], str]] = {}
    for session in store.sessions():  # newest first
        if session.kind != kind:
            continue
        shown = {item.id: item.payload for item in store.items(session.id)}
        ok_items = {iid for iid, p in shown.items()
                    if str(p.get("id") or "").strip() in gold
                    and record_key(str(p["id"]).strip(), _payload_answers(p))
                    == record_key(str(p["id"]).strip(), gold[str(p["id"]).strip()])}
        built = build_gt_patch(store, session.id, "", gold)
        for where, why in built.skipped:
            if where in gold:
                skipped.append((where, f"{why} (session {session.name})"))
        for e in built.entries:
            items = [iid for iid, p in shown.items() if str(p.get("id") or "").strip() == e.record_id]
            if not any(iid in ok_items for iid in items):
                skipped.append((e.record_id, f"session {session.name} reviewed it with another GT: skipped"))
                continue
            key = (e.record_id, e.op, e.new)
            if key in seen:
                continue
            if e.op == OP_REPLACE and e.record_id in corrected and corrected[e.record_id][0] != e.new:
                skipped.append((e.record_id, f"corrected to {list(e.new)} in session {session.name}, superseded by "
                                             f"{list(corrected[e.record_id][0])} in {corrected[e.record_id][1]}"))
                continue
            if e.op == OP_REPLACE:
                corrected[e.record_id] = (e.new, session.name)
            seen.add(key)
            entries.append(e)
    return PatchBuild(tuple(entries), tuple(skipped))


def gold_of(kind: str, name: str, data: bytes) -> dict[str, tuple[str, ...]] | None:
    """Record id -> GT answers of the GT file a session of ``kind`` was made from (``None`` for a kind
    whose file is not read here: the items' own ground truth is the entries' ``old``, and ids not in
    the file are reported when the patch is applied).

    Parameters
    ----------
    kind : str
        The session's kind (``qa``, ``testsets``, ``memory``, ``dialogue`` ...).
    name : str
        The GT file's name.
    data : bytes
        Its bytes.

    Returns
    -------
    dict of str to tuple of str, or None

    A memory session's file is not read here: its question ids may come from another file (mem0
    results take the ids of the LoCoMo question file given with them), so its items' ids and ground
    truth are used as they were shown.

    =========  ===========================================================  ==============================
    kind       GT file                                                      record id
    =========  ===========================================================  ==============================
    qa         the QA / fact-check file                                     the record ``id``
    testsets   the test set (single turn)                                   the item ``id``
    memory     not read (see below)                                         ``question_id``
    dialogue   the persona cases file                                       ``scene#dialogue_index#occurrence``
    =========  ===========================================================  ==============================

    Raises
    ------
    InputError
        The file cannot be read as that kind's GT.
    ValueError
        A multi-turn test set (no answer per item to correct).
    """
    if kind == "qa":
        from evaluators.qa.evaluate import QAConfig, evaluate_qa
        from evaluators.qa.patch import gold_answers

        return gold_answers(evaluate_qa(data, name, QAConfig(ci_resamples=0)).records)
    if kind == "testsets":
        from evaluators.testsets import load_test_set
        from evaluators.testsets.patch import gold_answers as testset_gold

        return testset_gold(load_test_set(data, name))
    if kind == "dialogue":
        from evaluators.dialogue.inputs import load_cases
        from evaluators.dialogue.patch import gold_answers as dialogue_gold

        return dialogue_gold(load_cases(data, name).cases)
    return None


@dataclass(frozen=True)
class SessionPatch(DictMixin):
    """A session's decisions as a GT patch for the file being scored (what the pages apply).

    Attributes
    ----------
    patch : GTPatchSet
        Made for the GT file the session records (its kept upload), else for the file given.
    skipped : tuple of (str, str)
        As :attr:`PatchBuild.skipped`.
    note : str
        Said when the session does not record its GT file, or records another one.
    """

    patch: GTPatchSet
    skipped: tuple[tuple[str, str], ...]
    note: str = ""


def session_patch(store: ReviewStore, session_id: int, gt_file: str, gt_data: bytes) -> SessionPatch:
    """The GT patch of a session's final labels, for the GT file ``gt_file`` (bytes ``gt_data``).

    The entries are keyed by record and GT (:func:`build_gt_patch`): they correct the records of
    ``gt_data`` that have the id and the GT the session's items showed, whichever file of the dataset
    the session was made from (another run of the same questions included); a file with none of those
    records refuses the patch (:class:`~evaluators.io.gt_patch.GTPatchMismatch`).  ``note`` says when the
    session was made from another file, or kept none.

    Parameters
    ----------
    store : ReviewStore
    session_id : int
    gt_file : str
        The GT file the page scores.
    gt_data : bytes
        Its bytes.

    Returns
    -------
    SessionPatch

    Raises
    ------
    KeyError
        No such session.
    InputError
        The GT file cannot be read as the session kind's GT (:func:`gold_of`).
    """
    session = store.session(session_id)
    digest = file_sha256(gt_data)
    note = ""
    if session.uploads and digest not in session.uploads:
        kept = store.get_upload(session.uploads[0])
        made_for = kept[0] if kept else "another file"
        note = (f"session {session.name!r} was made from {made_for}, not from {gt_file}: its corrections apply to "
                "the records of this file with the same id and GT")
        digest = session.uploads[0]
        gold = None
    elif not session.uploads:
        note = f"session {session.name!r} does not record its GT file: its corrections are applied to {gt_file} by id"
        gold = gold_of(session.kind, gt_file, gt_data)
    else:
        gold = gold_of(session.kind, gt_file, gt_data)
    built = build_gt_patch(store, session_id, digest, gold)
    return SessionPatch(GTPatchSet(built.entries, (f"review session {session.name}",)), built.skipped, note)


def narrative_gold(files: Sequence[tuple[str, bytes]]) -> tuple[dict[str, dict[str, tuple[str, ...]]], list[str]]:
    """GT digest -> (place -> GT value) of narrative GT files (:func:`evaluators.narrative.locate.gold_values`).

    Parameters
    ----------
    files : sequence of (str, bytes)
        GT files, name and bytes.

    Returns
    -------
    (dict, list of str)
        The values by file digest, and one message per file that could not be read (left out).
    """
    from evaluators.io import InputError
    from evaluators.narrative.loader import load_document
    from evaluators.narrative.locate import gold_values

    gold, problems = {}, []
    for name, data in files:
        try:
            gold[file_sha256(data)] = gold_values(load_document(data, name).doc)
        except InputError as exc:
            problems.append(f"{name}: {exc.issue.message}")
    return gold, problems


def build_narrative_patch(store: ReviewStore, session_id: int,
                          gold: Mapping[str, Mapping[str, Sequence[str]]]) -> PatchBuild:
    """A narrative session's final labels as GT patch entries (rules in the module docstring).

    Parameters
    ----------
    store : ReviewStore
    session_id : int
    gold : mapping of str to (mapping of str to sequence of str)
        GT file digest -> place -> GT value, of the story files given (:func:`narrative_gold`):
        the entries' ``old`` values, and a check that each item's file and place are there.

    Returns
    -------
    PatchBuild
        Items of a story whose GT file is not given, without a GT place (only in the prediction,
        or made before items carried one), or whose place is not in the file are ``skipped``.
    """
    from evaluators.narrative.patch import place_kind

    session = store.session(session_id)
    entries: list[PatchEntry] = []
    skipped: list[tuple[str, str]] = []
    seen: set[tuple[str, str, str, str]] = set()
    for f in final_labels(store, session_id):
        p = f.item.payload
        if f.label == "model_error":
            continue
        where = str(p.get("id") or f"item {f.item.position + 1}")
        path, digest = p.get("gt_path"), p.get("gt_digest")
        if p.get("kind") != "narrative":
            skipped.append((where, f"a {p.get('kind')!r} item in a narrative session"))
            continue
        if not isinstance(path, str) or not path:
            skipped.append((where, "this mismatch has no place in the GT (only in the prediction, or an item made "
                                   "before items carried their GT place)"))
            continue
        if not isinstance(digest, str) or digest not in gold:
            skipped.append((where, f"its story's GT file ({p.get('gt_file') or 'unknown'}) is not among the files "
                                   "given"))
            continue
        if path not in gold[digest]:
            skipped.append((where, f"{path} is not in the GT file {p.get('gt_file') or ''}".rstrip()))
            continue
        old = tuple(gold[digest][path])
        why = f.why()
        if f.label in ("acceptable_variant", "correct"):
            value = str(p.get("prediction") or "").strip()
            if not value:
                skipped.append((where, "acceptable variant of an empty prediction (a missed GT value)"))
                continue
            op, new = OP_ADD, (value,)
        else:  # gt_error
            value = (f.corrected_answer or "").strip()
            if value:
                op, new = OP_REPLACE, (value,)
            elif place_kind(path) != "label":
                op, new = OP_REMOVE, ()
            else:
                skipped.append((where, "GT error of a label without its corrected value (type it when "
                                       "adjudicating)"))
                continue
        key = (digest, path, op, new[0] if new else "")
        if key in seen:
            continue  # the same correction from another mismatch of the place: once
        seen.add(key)
        entries.append(PatchEntry(path, digest, op, old, new, f.who, why, session.name))
    return PatchBuild(tuple(entries), tuple(skipped))


def narrative_session_patch(store: ReviewStore, session_id: int, gt_files: Sequence[tuple[str, bytes]]
                            ) -> SessionPatch:
    """A narrative session's corrections for the GT files of a run (what the Narrative page applies).

    Items of stories whose GT file is not among ``gt_files`` are listed in ``skipped``; ``note`` says
    when no GT file of the run is one the session was made from.

    Parameters
    ----------
    store : ReviewStore
    session_id : int
        A narrative session.
    gt_files : sequence of (str, bytes)
        The run's GT files, name and bytes.

    Returns
    -------
    SessionPatch

    Raises
    ------
    KeyError
        No such session.
    """
    session = store.session(session_id)
    gold, problems = narrative_gold(gt_files)
    note = ""
    if session.uploads and not set(session.uploads) & set(gold):
        note = (f"session {session.name!r} was made from other GT files than this run's: its corrections are for "
                "those files")
    if problems:
        note = "; ".join(filter(None, [note, *problems]))
    built = build_narrative_patch(store, session_id, gold)
    return SessionPatch(GTPatchSet(built.entries, (f"review session {session.name}",)), built.skipped, note)
