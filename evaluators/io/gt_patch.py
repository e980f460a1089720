"""Ground-truth patches: reviewed corrections of a dataset's GT, kept as data beside it (never an edit of it).

A patch is JSONL, one correction per line, format :data:`PATCH_FORMAT`; review sessions write version
:data:`KEYED_VERSION`, keyed by the record and its GT::

    {"format": "evalboard.gt_patch", "version": 3, "gt_key": "<record_key(record_id, old)>",
     "record_id": "5a7a5672...", "op": "add_answer", "old": ["flotilla"], "answer": "a flotilla",
     "who": "ann", "why": "acceptable variant", "session": "hotpot-review"}

and versions 1 and 2 (still read, and applied as before) are bound to one GT file:
``"version": 1, "gt_digest": "<SHA-256 of the GT file>"`` in place of ``gt_key``.

- ``op`` is ``add_answer`` (an acceptable variant: ``answer`` becomes one more accepted answer of
  the record), ``replace`` (a GT error: the record's answers become ``new``, a list of strings) or,
  from version 2, ``remove`` (a GT error whose GT value should not be there: the record's answers
  become empty, no ``new``; only tasks that say so take it, the narrative task: a GT character,
  relationship, label or span removed, which the missing-GT policy then treats as empty GT; the
  others report such a line and skip it);
- ``old`` is the record's answers when the decision was made (for ``replace``, applying it
  checks that the GT still holds them);
- ``gt_digest`` (versions 1 and 2) is the SHA-256 of the bytes of the GT file the patch was made
  for (:func:`file_sha256`, what ``sha256sum`` prints): such a line is refused for any other file
  (:class:`GTPatchMismatch`);
- ``gt_key`` (version 3, what review sessions write now) replaces it: the SHA-256 of the record's
  identity in the dataset, its id and its GT answers (:func:`record_key`), not of a file.  The
  correction belongs to the dataset: it applies to every file that holds the record with that GT
  (a run file with other predictions, both sides of a comparison, the next run, a file of several
  systems), and to no record whose GT is another one (reported, skipped).  A patch none of whose
  version 3 lines is for a record of the files given (and with no version 1 or 2 line for them) is
  refused (:class:`GTPatchMismatch`);
- ``who``, ``why`` and ``session`` say who decided, why, and in which review session.

Applying (:func:`apply_gt_patch`) works on the answers of each record id, in the order of the
entries (several patches: concatenated in order).  A record with several decisions:

- its GT is the *corrected* answers (the last ``replace`` applied; the GT file's answers when none)
  followed by every *accepted* answer (``add_answer``), whatever their order in the patch: a GT
  correction and an accepted variant of one question both take effect (the variant stays accepted
  after the GT is corrected, and an answer accepted after the correction is added to it);
- a ``replace`` applies when the corrected answers are still its ``old`` ones (a version 3 line:
  when no other correction of the record applied first); a ``replace`` that finds the record
  corrected to *other* answers is a **conflict** (two different corrected answers): reported with
  its patch line and skipped, the first correction stands.  Accepted variants never conflict.  (A
  version 1 or 2 ``replace`` whose ``old`` answers are the record's answers *with* the ones accepted
  before it replaces those too, as these versions always did.)

It is idempotent: an answer already accepted is not added twice, and a ``replace`` whose ``new``
answers are already in place changes nothing, so applying the same patch twice gives the same
ground truth as applying it once.  A bad patch line (invalid JSON, missing or wrongly
typed field, unknown op or version) is reported with its file and line and skipped; the good
lines still apply.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from evaluators.io.decode import decode_bytes
from evaluators.io.errors import InputError, InputIssue
from evaluators.io.readers import loads_json_line
from evaluators.results import DictMixin

PATCH_FORMAT = "evalboard.gt_patch"
#: Version written for ``add_answer`` and ``replace`` lines bound to a GT file (readers of version 1 read them).
PATCH_VERSION = 1
#: Version of the lines keyed by record identity (``gt_key``, :func:`record_key`) instead of a file digest.
KEYED_VERSION = 3
#: Highest version read; ``remove`` lines bound to a file are written with version 2 (a version 1 reader
#: refuses them, located), keyed lines with version 3.
LATEST_VERSION = 3
OP_ADD = "add_answer"
OP_REPLACE = "replace"
OP_REMOVE = "remove"
OPS = (OP_ADD, OP_REPLACE, OP_REMOVE)
#: Largest patch file read (bytes): a patch holds one line per reviewed record.
MAX_PATCH_BYTES = 32 * 1024 * 1024
_HEX = set("0123456789abcdef")


class GTPatchMismatch(ValueError):
    """A patch (or one of its lines) was made for another GT file than the one given."""


def file_sha256(source: str | Path | bytes | bytearray | memoryview | BinaryIO) -> str:
    """SHA-256 (hex) of a file's bytes: the ``gt_digest`` a patch for that file carries.

    Parameters
    ----------
    source : path, bytes-like or binary file object
        A file object (an upload) is read from its start, in 1 MiB chunks, and left where it was.

    Returns
    -------
    str
        64 lowercase hex digits, as ``sha256sum`` prints.
    """
    h = hashlib.sha256()
    if isinstance(source, (bytes, bytearray, memoryview)):
        h.update(source)
    elif hasattr(source, "read"):
        position = source.tell()
        source.seek(0)
        for chunk in iter(lambda: source.read(1 << 20), b""):
            h.update(chunk)
        source.seek(position)
    else:
        with open(source, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _canonical_answer(text: str) -> str:
    return unicodedata.normalize("NFC", str(text)).strip()


def record_key(record_id: str, answers: Sequence[str]) -> str:
    """The identity of a record's ground truth in its dataset: the ``gt_key`` of a version 3 patch line.

    SHA-256 (hex) of the canonical JSON of ``[record id, sorted answers]`` (each NFC-normalized, surrounding
    blanks removed): the same for every file that holds the record with the same GT (another run's
    predictions, other systems, other fields or record order), different once its id or its GT answers
    differ.

    Parameters
    ----------
    record_id : str
    answers : sequence of str
        The record's GT answers as the GT file has them (one for a single-reference task; empty for none).

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    text = json.dumps([str(record_id).strip(), sorted(_canonical_answer(a) for a in answers)], ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PatchEntry(DictMixin):
    """One correction of one record's ground truth.

    Attributes
    ----------
    record_id : str
        The record's id in the GT file.
    gt_digest : str
        SHA-256 (64 hex digits) of the GT file it was made for (versions 1 and 2); ``""`` for a keyed
        entry (version 3).
    op : {"add_answer", "replace", "remove"}
    old : tuple of str
        The record's answers when the decision was made.
    new : tuple of str
        ``replace``: the corrected answers (at least one); ``add_answer``: the added answer (one);
        ``remove``: empty.
    who : str
        Who decided (the adjudicator, or the annotators when they agreed).
    why : str
        The decision and its comment.
    session : str or None
        The review session.
    version : int
        Format version of the line.
    file, line : str or None, int or None
        Where the entry was read (not written back).
    gt_key : str or None
        Version 3: :func:`record_key` of the record and its GT answers when the decision was made
        (``old``); the entry applies to any file holding that record with that GT.  ``None``: bound to
        the file ``gt_digest``.
    """

    record_id: str
    gt_digest: str
    op: str
    old: tuple[str, ...]
    new: tuple[str, ...]
    who: str
    why: str = ""
    session: str | None = None
    version: int = 0
    file: str | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)
    gt_key: str | None = None

    def __post_init__(self) -> None:
        if not self.version:  # the lowest version that holds the op
            object.__setattr__(self, "version", KEYED_VERSION if self.gt_key else 2 if self.op == OP_REMOVE
                               else PATCH_VERSION)
        if self.op not in OPS:
            raise ValueError(f"op must be one of {', '.join(OPS)}, not {self.op!r}")
        if self.gt_key is not None:
            if not _is_digest(self.gt_key) or self.version < KEYED_VERSION:
                raise ValueError(f"gt_key must be a SHA-256 in 64 lowercase hex digits (version 3), not "
                                 f"{self.gt_key!r:.80}")
            if self.gt_digest and not _is_digest(self.gt_digest):
                raise ValueError(f"gt_digest must be a SHA-256 in 64 lowercase hex digits, not {self.gt_digest!r}")
        elif self.version >= KEYED_VERSION:
            raise ValueError("a version 3 correction needs its gt_key")
        elif not _is_digest(self.gt_digest):
            raise ValueError(f"gt_digest must be a SHA-256 in 64 lowercase hex digits, not {self.gt_digest!r}")
        if not str(self.record_id).strip():
            raise ValueError("record_id must not be empty")
        if self.op == OP_ADD and (len(self.new) != 1 or not self.new[0].strip()):
            raise ValueError("add_answer adds exactly one non-empty answer")
        if self.op == OP_REPLACE and (not self.new or any(not a.strip() for a in self.new)):
            raise ValueError("replace needs at least one non-empty answer in 'new'")
        if self.op == OP_REMOVE and (self.new or self.version < 2):
            raise ValueError("remove takes no 'new' answers and needs version 2")

    def where(self) -> str:
        """``file:line`` of the entry (or its record id when it was not read from a file)."""
        return f"{self.file}:{self.line}" if self.file else f"record {self.record_id}"

    @property
    def keyed(self) -> bool:
        """Whether the entry belongs to the record's GT (version 3, ``gt_key``) rather than to one file."""
        return self.gt_key is not None

    def to_json(self) -> dict[str, Any]:
        """The JSONL object of this entry (the format of the module docstring)."""
        out: dict[str, Any] = {"format": PATCH_FORMAT, "version": self.version}
        if self.gt_key is not None:
            out["gt_key"] = self.gt_key
        if self.gt_digest:
            out["gt_digest"] = self.gt_digest
        out.update(record_id=self.record_id, op=self.op, old=list(self.old))
        if self.op == OP_ADD:
            out["answer"] = self.new[0]
        elif self.op == OP_REPLACE:
            out["new"] = list(self.new)
        out.update(who=self.who, why=self.why, session=self.session)
        return out


def _is_digest(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def write_gt_patch(entries: Iterable[PatchEntry]) -> str:
    """JSONL text of ``entries`` (UTF-8 text, one object per line, keys in a fixed order).

    Parameters
    ----------
    entries : iterable of PatchEntry
        In the order they are to be applied.

    Returns
    -------
    str
        One JSON object per line (non-ASCII kept), each ending with a newline; ``""`` for none.
        :func:`read_gt_patch` reads it back.
    """
    return "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in entries)


@dataclass(frozen=True)
class GTPatch(DictMixin):
    """A read patch file: its good entries in file order and the problems of its bad lines.

    Attributes
    ----------
    file : str
    entries : tuple of PatchEntry
    issues : tuple of InputIssue
        One per skipped line (``kind="gt_patch"``), with its line number.
    """

    file: str
    entries: tuple[PatchEntry, ...]
    issues: tuple[InputIssue, ...] = ()

    @property
    def digests(self) -> set[str]:
        """The GT digests the entries were made for."""
        return {e.gt_digest for e in self.entries}


def _answers(value: Any, name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"'{name}' must be a string or a list of strings")


def _entry(obj: Any, file: str, line: int) -> PatchEntry:
    """One patch line's entry; ``ValueError`` with what was expected."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object per line")
    if obj.get("format") != PATCH_FORMAT:
        raise ValueError(f"expected \"format\": \"{PATCH_FORMAT}\" (got {obj.get('format')!r})")
    version = obj.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= LATEST_VERSION:
        raise ValueError(f"unsupported patch version {version!r} (this EvalBoard reads version 1 to {LATEST_VERSION})")
    for key in ("gt_key" if version >= KEYED_VERSION else "gt_digest", "record_id", "op", "who"):
        if key not in obj:
            raise ValueError(f"missing field '{key}'")
    record_id = obj["record_id"]
    if isinstance(record_id, int) and not isinstance(record_id, bool):
        record_id = str(record_id)
    if not isinstance(record_id, str) or not record_id.strip():
        raise ValueError("'record_id' must be a non-empty string")
    op = obj["op"]
    if op not in OPS:
        raise ValueError(f"'op' must be one of {', '.join(OPS)} (got {op!r})")
    if op == OP_ADD:
        if not isinstance(obj.get("answer"), str):
            raise ValueError("add_answer needs 'answer', a string")
        new = (obj["answer"],)
    elif op == OP_REMOVE:
        if version < 2:
            raise ValueError("'remove' needs \"version\": 2")
        new = ()
    else:
        if "new" not in obj:
            raise ValueError("replace needs 'new', a string or a list of strings")
        new = _answers(obj["new"], "new")
    old = _answers(obj.get("old", []), "old")
    who, why, session = obj["who"], obj.get("why") or "", obj.get("session")
    if not isinstance(who, str) or not who.strip():
        raise ValueError("'who' must be a non-empty string")
    if not isinstance(why, str) or (session is not None and not isinstance(session, str)):
        raise ValueError("'why' and 'session' must be strings")
    gt_key = obj.get("gt_key") if version >= KEYED_VERSION else None
    digest = obj.get("gt_digest") or ""
    if gt_key is not None and not isinstance(gt_key, str) or not isinstance(digest, str):
        raise ValueError("'gt_key' and 'gt_digest' must be strings")
    if gt_key is not None and gt_key != record_key(record_id.strip(), old):
        raise ValueError("'gt_key' is not the key of the record id and its 'old' answers (an edited line?)")
    return PatchEntry(record_id.strip(), digest, op, old, new, who, why, session, version, file, line, gt_key)


def read_gt_patch(data: bytes | bytearray | memoryview, file: str = "<patch>") -> GTPatch:
    """Read a GT patch (JSONL); bad lines are reported with their line and skipped.

    Parameters
    ----------
    data : bytes-like
        The patch file (UTF-8, UTF-8 with BOM or GB18030).
    file : str
        Its name, for messages.

    Returns
    -------
    GTPatch

    Raises
    ------
    InputError
        Over :data:`MAX_PATCH_BYTES`, or bytes that cannot be decoded.
    """
    if len(data) > MAX_PATCH_BYTES:
        raise InputError(InputIssue(file, f"{len(data):,} bytes is over the GT patch limit of {MAX_PATCH_BYTES:,}",
                                    kind="gt_patch"))
    text = decode_bytes(bytes(data), file).text
    entries: list[PatchEntry] = []
    issues: list[InputIssue] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:  # the project's JSON line reader: nesting limit, lone surrogates read as U+FFFD
            obj = loads_json_line(raw, file, n)
        except json.JSONDecodeError as exc:
            issues.append(InputIssue(file, f"invalid JSON: {exc.msg}", line=n, column=exc.colno, kind="gt_patch"))
            continue
        except InputError as exc:
            issues.append(dataclasses.replace(exc.issue, line=n, kind="gt_patch"))
            continue
        try:
            entries.append(_entry(obj, file, n))
        except ValueError as exc:
            issues.append(InputIssue(file, str(exc), line=n, kind="gt_patch"))
    return GTPatch(file, tuple(entries), tuple(issues))


def read_gt_patch_file(path: str | Path) -> GTPatch:
    """:func:`read_gt_patch` of a file on disk (its size checked before it is read).

    Parameters
    ----------
    path : str or Path
        A GT patch file (JSONL).

    Returns
    -------
    GTPatch
        Its good entries and the located problems of its bad lines.

    Raises
    ------
    OSError
        When the file cannot be read.
    InputError
        As :func:`read_gt_patch`.
    """
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_PATCH_BYTES:
        raise InputError(InputIssue(str(path), f"{size:,} bytes is over the GT patch limit of {MAX_PATCH_BYTES:,}",
                                    kind="gt_patch"))
    return read_gt_patch(path.read_bytes(), str(path))


def check_digest(entries: Iterable[PatchEntry], digests: Mapping[str, str]) -> None:
    """Refuse entries made for none of the given GT files (entries bound to a file; a keyed entry,
    version 3, is checked against the records when applied: :func:`apply_gt_patch`).

    Parameters
    ----------
    entries : iterable of PatchEntry
    digests : mapping of str to str
        GT file name -> its :func:`file_sha256`.

    Raises
    ------
    GTPatchMismatch
        Naming the first such entry (file and line), the digest it was made for and the files'.
    """
    known = set(digests.values())
    for e in entries:
        if e.gt_key is None and e.gt_digest not in known:
            files = ", ".join(f"{name} (sha256 {d[:12]}...)" for name, d in digests.items())
            raise GTPatchMismatch(f"{e.where()}: this correction was made for the GT file with sha256 "
                                  f"{e.gt_digest[:12]}..., not for {files}; a patch applies only to the GT file "
                                  "it was made for")


@dataclass(frozen=True)
class AppliedChange(DictMixin):
    """What one patch entry did.

    Attributes
    ----------
    record_id : str
    op : str
    status : {"applied", "unchanged", "conflict", "unknown_record", "other_gt", "unsupported"}
        ``unchanged``: already in place (idempotence); ``conflict``: a ``replace`` (or ``remove``)
        that finds the record corrected to other answers (or, bound to a file, whose ``old`` answers
        are not the record's); ``unknown_record``: no such id in the GT; ``other_gt``: a keyed entry
        (version 3) made for another GT of that record; ``unsupported``: an op the task does not take
        there.
    before, after : tuple of str
        The record's answers before and after this entry.
    who, why, session : str, str, str or None
    where : str
        The entry's ``file:line``.
    """

    record_id: str
    op: str
    status: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    who: str
    why: str
    session: str | None
    where: str


@dataclass(frozen=True)
class PatchApplication(DictMixin):
    """The ground truth after a patch.

    Attributes
    ----------
    answers : dict of str to tuple of str
        Record id -> answers after every entry, for the ids some entry changed.
    changes : tuple of AppliedChange
        One per entry, in order.
    issues : tuple of InputIssue
        Conflicts (errors) and unknown ids (warnings), located at the patch line.
    """

    answers: dict[str, tuple[str, ...]]
    changes: tuple[AppliedChange, ...]
    issues: tuple[InputIssue, ...]

    @property
    def n_applied(self) -> int:
        return sum(1 for c in self.changes if c.status == "applied")

    def patched(self, record_id: str, answers: Sequence[str]) -> tuple[str, ...]:
        """A record's answers after the patch (``answers`` when no entry changed it).

        Parameters
        ----------
        record_id : str
        answers : sequence of str
            The record's answers in the GT file.

        Returns
        -------
        tuple of str
        """
        return self.answers.get(record_id, tuple(answers))

    def corrected_and_accepted(self, record_id: str) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
        """``(corrected, accepted)`` of a record: the answers its last applied ``replace`` set (``None``
        when none did: the GT file's answers stand) and the answers added after it (``add_answer``), in order.

        Tasks whose ground truth is one reference (a memory answer, a test-set expected answer, a persona
        reply) read a patch this way: ``corrected`` replaces the reference, ``accepted`` are further
        acceptable answers.

        Parameters
        ----------
        record_id : str

        Returns
        -------
        (corrected, accepted) : (tuple of str or None, tuple of str)
            ``(None, ())`` for a record no applied entry changed.
        """
        return self._corrected_and_accepted.get(record_id, (None, ()))

    def one_reference(self, record_id: str, reference: str) -> tuple[str | None, tuple[str, ...]]:
        """For a task whose ground truth is one reference: ``(corrected, further)`` of a record whose
        reference is ``reference`` now.

        ``corrected`` is the reference a ``replace`` set (``None``: ``reference`` stands); ``further``
        are the other acceptable answers (the rest of a replacement's answers, then those added by
        ``add_answer``), without the reference that stands.

        Parameters
        ----------
        record_id : str
        reference : str
            The record's reference in the GT file.

        Returns
        -------
        (corrected, further) : (str or None, tuple of str)
        """
        corrected, accepted = self.corrected_and_accepted(record_id)
        new = corrected[0] if corrected else None
        stands = reference if new is None else new
        return new, tuple(a for a in (*(corrected or ())[1:], *accepted) if a != stands)

    @functools.cached_property
    def _corrected_and_accepted(self) -> dict[str, tuple[tuple[str, ...] | None, tuple[str, ...]]]:
        """:meth:`corrected_and_accepted` of every record an applied entry changed, from one pass over the
        changes (a task asks for each of its changed records: a pass per record would be quadratic).
        :func:`apply_gt_patch` sets it as it applies; this pass is for an application put together
        otherwise (a correction that overlaps an accepted answer is then read as accepted)."""
        state: dict[str, tuple[tuple[str, ...] | None, list[str]]] = {}
        for c in self.changes:
            if c.status != "applied":
                continue
            accepted = state.get(c.record_id, (None, []))[1]
            if c.op in (OP_REPLACE, OP_REMOVE):  # remove: corrected to nothing (empty GT)
                state[c.record_id] = (tuple(a for a in c.after if a not in accepted), accepted)
            else:
                state.setdefault(c.record_id, (None, []))[1].append(c.after[-1])
        return {rid: (corrected, tuple(accepted)) for rid, (corrected, accepted) in state.items()}

    def matched(self) -> int:
        """How many entries were for records of this GT (applied, unchanged or in conflict)."""
        return sum(1 for c in self.changes if c.status in ("applied", "unchanged", "conflict"))

    def with_more(self, changes: Sequence[AppliedChange], issues: Sequence[InputIssue]) -> PatchApplication:
        """This application with more (refused) changes and issues; the answers stay.

        Parameters
        ----------
        changes : sequence of AppliedChange
            Appended after the existing ones.
        issues : sequence of InputIssue
            Appended after the existing ones.

        Returns
        -------
        PatchApplication
            A new application.
        """
        out = PatchApplication(self.answers, self.changes + tuple(changes), self.issues + tuple(issues))
        out.__dict__["_corrected_and_accepted"] = self._corrected_and_accepted
        return out


def apply_gt_patch(gold: Mapping[str, Sequence[str]], entries: Iterable[PatchEntry], gt_digest: str, *,
                   allow_remove: bool = False, refuse_unmatched: bool = True) -> PatchApplication:
    """Apply patch entries, in order, to the answers of a GT file's records (rules: the module docstring).

    Parameters
    ----------
    gold : mapping of str to sequence of str
        Record id -> its GT answers (a single-answer GT is a 1-tuple).  Not modified.
    entries : iterable of PatchEntry
        Applied in order (several patches: one after the other).
    gt_digest : str
        :func:`file_sha256` of the GT file ``gold`` was read from (checked for the entries bound to a
        file; keyed entries are checked against ``gold``'s records: :func:`record_key`).
    allow_remove : bool
        Whether the task takes ``remove`` entries (the narrative task); otherwise each is reported
        (status ``unsupported``, a warning at its patch line) and skipped.
    refuse_unmatched : bool
        Raise :class:`GTPatchMismatch` when there are keyed entries, none of them is for a record of
        ``gold``, and no entry is bound to this file.  A caller that applies one patch to several
        files passes ``False`` and checks over all of them (:func:`check_matched`).

    Returns
    -------
    PatchApplication
        Applying the same entries again to its answers changes nothing (idempotent).

    Raises
    ------
    GTPatchMismatch
        An entry bound to another GT file, or keyed entries none of which is for this GT (nothing is
        applied).
    """
    entries = list(entries)
    check_digest(entries, {"the GT file given": gt_digest})
    keys: dict[str, str] = {}

    def key_of(rid: str) -> str:
        if rid not in keys:
            keys[rid] = record_key(rid, gold[rid])
        return keys[rid]

    corrected: dict[str, tuple[str, ...]] = {}
    accepted: dict[str, list[str]] = {}

    def answers(rid: str) -> tuple[str, ...]:
        base = corrected.get(rid, tuple(gold[rid]))
        return base + tuple(a for a in accepted.get(rid, ()) if a not in base)

    changes: list[AppliedChange] = []
    issues: list[InputIssue] = []

    def skip(e: PatchEntry, status: str, message: str, severity: str = "warning") -> None:
        changes.append(AppliedChange(e.record_id, e.op, status, (), (), e.who, e.why, e.session, e.where()))
        issues.append(InputIssue(e.file or "<patch>", message, line=e.line, severity=severity, kind="gt_patch"))

    for e in entries:
        if e.op == OP_REMOVE and not allow_remove:
            skip(e, "unsupported", f"record {e.record_id!r}: this task takes no 'remove' correction (its GT value "
                                   "cannot be left empty): skipped")
            continue
        if e.record_id not in gold:
            skip(e, "unknown_record", f"record id {e.record_id!r} is not in the GT file: skipped")
            continue
        if e.keyed and e.gt_key != key_of(e.record_id):
            skip(e, "other_gt", f"record {e.record_id!r}: this correction was made for another GT of the record "
                                f"({list(e.old)}, not {list(gold[e.record_id])}): skipped")
            continue
        before = answers(e.record_id)
        status = "applied"
        if e.op == OP_ADD:
            if e.new[0] in before:
                status = "unchanged"
            else:
                accepted.setdefault(e.record_id, []).append(e.new[0])
        else:  # replace or remove: the corrected answers
            base = corrected.get(e.record_id, tuple(gold[e.record_id]))
            if base == e.new:
                status = "unchanged"
            elif (e.record_id not in corrected) if e.keyed else base == e.old:
                corrected[e.record_id] = e.new
            elif not e.keyed and before == e.old:  # a file-bound line made after accepting: replaces those too
                corrected[e.record_id] = e.new
                accepted.pop(e.record_id, None)
            else:
                status = "conflict"
                issues.append(InputIssue(e.file or "<patch>", f"record {e.record_id!r}: the GT is corrected to "
                                         f"{list(base)}, this correction gives {list(e.new)} (expected "
                                         f"{list(e.old)}): two different corrections, the first stands; skipped",
                                         line=e.line, kind="gt_patch"))
        changes.append(AppliedChange(e.record_id, e.op, status, before, answers(e.record_id), e.who, e.why,
                                     e.session, e.where()))
    # the changed records in the order their first entry came (a set's order would follow the hash seed: the JSON
    # of the same patch would differ from one process to the next)
    touched = list(dict.fromkeys(c.record_id for c in changes if c.record_id in corrected or c.record_id in accepted))
    final = {rid: answers(rid) for rid in touched}
    app = PatchApplication({k: v for k, v in final.items() if v != tuple(gold[k])}, tuple(changes), tuple(issues))
    app.__dict__["_corrected_and_accepted"] = {
        rid: (corrected.get(rid), tuple(a for a in accepted.get(rid, ()) if a not in corrected.get(rid, ())))
        for rid in touched}
    if refuse_unmatched:
        check_matched(entries, [app])
    return app


def check_matched(entries: Sequence[PatchEntry], applications: Iterable[PatchApplication]) -> None:
    """Refuse a patch whose keyed entries are for none of the records it was applied to.

    Parameters
    ----------
    entries : sequence of PatchEntry
        The entries applied.
    applications : iterable of PatchApplication
        What they did to each GT (file) they were applied to.

    Raises
    ------
    GTPatchMismatch
        ``entries`` has keyed entries (version 3), no entry bound to a file, and no keyed entry was
        for a record (id and GT answers) of any of ``applications``.
    """
    keyed = [e for e in entries if e.keyed]
    if not keyed or len(keyed) < len(entries):
        return
    if not any(app.matched() for app in applications):
        e = keyed[0]
        raise GTPatchMismatch(f"{e.where()}: none of the {len(keyed)} correction(s) is for a record of the GT given "
                              f"(record {e.record_id!r} with GT {list(e.old)} is not there): a correction applies "
                              "to the records with the id and the GT it was made for")


@dataclass(frozen=True)
class GTPatchSet(DictMixin):
    """GT patches as a run's configuration holds them (the ``gt_patch`` of a task's config).

    Attributes
    ----------
    entries : tuple of PatchEntry
        The good entries of every patch file, in the order the files were given (applied in order).
    files : tuple of str
        The patch files' names.
    issues : tuple of InputIssue
        Their skipped lines (located).
    """

    entries: tuple[PatchEntry, ...] = ()
    files: tuple[str, ...] = ()
    issues: tuple[InputIssue, ...] = ()

    @classmethod
    def read(cls, patches: Iterable[tuple[str, bytes]]) -> GTPatchSet:
        """Read ``(name, bytes)`` patch files (:func:`read_gt_patch` each), concatenated in order.

        Parameters
        ----------
        patches : iterable of (str, bytes)
            File name and contents of each patch.

        Returns
        -------
        GTPatchSet

        Raises
        ------
        InputError
            A file over :data:`MAX_PATCH_BYTES` or that cannot be decoded; a file with lines and not
            one usable correction; or an empty file (see :meth:`of`).
        """
        return cls.of([read_gt_patch(data, name) for name, data in patches])

    @classmethod
    def read_files(cls, paths: Iterable[str | Path]) -> GTPatchSet:
        """:meth:`read` of files on disk (sizes checked before reading; ``OSError`` when one cannot be read).

        Parameters
        ----------
        paths : iterable of str or Path

        Returns
        -------
        GTPatchSet

        Raises
        ------
        OSError
            A file cannot be read.
        InputError
            As :meth:`read`.
        """
        return cls.of([read_gt_patch_file(p) for p in paths])

    @classmethod
    def of(cls, patches: Sequence[GTPatch]) -> GTPatchSet:
        """Patches already read, in order (``InputError`` for one with bad lines and no usable one, and for
        an empty one: a patch file with no correction is refused by its name, not applied as nothing).

        Parameters
        ----------
        patches : sequence of GTPatch

        Returns
        -------
        GTPatchSet
            Entries, file names and skipped lines of all patches, concatenated in order.

        Raises
        ------
        InputError
            A patch with no usable entry.
        """
        for p in patches:
            if not p.entries and not p.issues:
                raise InputError(InputIssue(p.file, "empty GT patch: the file holds no correction (nothing to "
                                            "apply; was it written by 'review patch' from a session with decisions?)",
                                            kind="gt_patch"))
            if not p.entries and p.issues:
                raise InputError(InputIssue(p.file, f"no usable correction in this GT patch ({len(p.issues)} bad "
                                            f"line(s); the first: line {p.issues[0].line}: {p.issues[0].message})",
                                            kind="gt_patch"))
        return cls(tuple(e for p in patches for e in p.entries), tuple(p.file for p in patches),
                   tuple(i for p in patches for i in p.issues))

    def __bool__(self) -> bool:
        return bool(self.entries)

    def for_file(self, gt_file: str, gt_digest: str) -> list[PatchEntry]:
        """The entries, checked to be made for the GT file ``gt_file`` (SHA-256 ``gt_digest``).

        Parameters
        ----------
        gt_file : str
            The GT file's name (for messages).
        gt_digest : str
            Its SHA-256 (:func:`file_sha256`); entries bound to a file must carry it. Keyed
            entries (version 3) are not bound to a file and always pass.

        Returns
        -------
        list of PatchEntry
            All entries, in order.

        Raises
        ------
        GTPatchMismatch
            An entry made for another file (named with its patch file and line).
        """
        check_digest(self.entries, {gt_file: gt_digest})
        return list(self.entries)
