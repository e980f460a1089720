"""Input files from paths, folders, uploads and zip archives, and GT/prediction pairing."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path, PurePosixPath

from evaluators.io.errors import InputIssue
from evaluators.results import DictMixin


@dataclass(frozen=True)
class InputFile:
    """A named blob of bytes (an upload, a file on disk, or a zip member)."""

    name: str
    data: bytes


def collect_paths(path: str | Path, suffixes: tuple[str, ...] = (".json",)) -> list[InputFile]:
    """Read a file, or every file with one of ``suffixes`` in a folder (recursively), or a zip.

    Parameters
    ----------
    path : str or Path
        A file, a folder or a ``.zip`` archive.
    suffixes : tuple of str
        Lower-case suffixes kept from folders and archives.

    Returns
    -------
    list of InputFile
        Sorted by name.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.is_dir():
        files = [
            InputFile(str(f.relative_to(p)), f.read_bytes())
            for f in sorted(p.rglob("*"))
            if f.is_file() and f.suffix.lower() in suffixes
        ]
        return files
    return expand_archives([InputFile(p.name, p.read_bytes())], suffixes)


def expand_archives(files: list[InputFile], suffixes: tuple[str, ...] = (".json",)) -> list[InputFile]:
    """Replace every ``.zip`` in ``files`` by its members that have one of ``suffixes``.

    Members under ``__MACOSX/`` and hidden files are skipped.  A zip that cannot be
    opened is kept as is, so the caller reports it as an unreadable file.
    """
    out: list[InputFile] = []
    for f in files:
        if not f.name.lower().endswith(".zip"):
            out.append(f)
            continue
        try:
            with zipfile.ZipFile(BytesIO(f.data)) as zf:
                for info in zf.infolist():
                    member = PurePosixPath(info.filename)
                    if info.is_dir() or "__MACOSX" in member.parts or member.name.startswith("."):
                        continue
                    if member.suffix.lower() not in suffixes:
                        continue
                    out.append(InputFile(f"{f.name}/{info.filename}", zf.read(info)))
        except zipfile.BadZipFile:
            out.append(f)
    return out


#: Suffixes stripped from a file stem to get its story id, repeatedly, in this order.
STORY_ID_SUFFIXES = ("_prediction", "_pred", "_v3", "_v2")
_SUFFIX_RE = re.compile("(" + "|".join(re.escape(s) for s in STORY_ID_SUFFIXES) + r")$", re.IGNORECASE)


def story_id(file_name: str) -> str:
    """Story id of a GT or prediction file: the stem without ``_v2``, ``_v3``, ``_prediction``, ``_pred``.

    >>> story_id("CH_002_牛郎织女_v3_prediction.json")
    'CH_002_牛郎织女'
    >>> story_id("dir/CH_003_孟姜女哭长城_prediction.json")
    'CH_003_孟姜女哭长城'
    """
    stem = _stem(file_name)
    previous = None
    while previous != stem:
        previous = stem
        stem = _SUFFIX_RE.sub("", stem)
    return stem


def _stem(file_name: str) -> str:
    """The file name without folders (``/`` or ``\\``) and without its last suffix."""
    return PurePosixPath(file_name.replace("\\", "/")).name.rsplit(".", 1)[0]


_PRED_RE = re.compile(r"_(prediction|pred)$", re.IGNORECASE)
_V3_RE = re.compile(r"_v3(_prediction|_pred)?$", re.IGNORECASE)


def _is_v3(file_name: str) -> bool:
    stem = _stem(file_name)
    return bool(_V3_RE.search(stem))


def looks_like_prediction(file_name: str) -> bool:
    """True when the stem ends with ``_prediction`` or ``_pred`` (after any ``_v2``/``_v3``)."""
    stem = _stem(file_name)
    stem = re.sub(r"_v[23]$", "", stem, flags=re.IGNORECASE)
    return bool(_PRED_RE.search(stem))


@dataclass
class Pairing(DictMixin):
    """GT and prediction files matched by story id.

    Attributes
    ----------
    pairs : list of (story_id, gt_file, pred_file)
    unpaired_gt, unpaired_pred : list of file names without a partner
    issues : list of InputIssue (duplicates, unpaired files), severity ``warning``
    """

    pairs: list[tuple[str, InputFile, InputFile]] = field(default_factory=list)
    unpaired_gt: list[str] = field(default_factory=list)
    unpaired_pred: list[str] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)

    def to_dict(self):  # InputFile bytes are not serialised
        return {
            "pairs": [(sid, g.name, p.name) for sid, g, p in self.pairs],
            "unpaired_gt": list(self.unpaired_gt),
            "unpaired_pred": list(self.unpaired_pred),
            "issues": [i.to_dict() for i in self.issues],
        }


def pair_files(gt_files: list[InputFile], pred_files: list[InputFile]) -> Pairing:
    """Pair GT and prediction files by :func:`story_id`.

    Two files of one side with the same story id: the first (by name) is used and the
    other is reported.  Files without a partner are listed, never dropped silently.
    """
    result = Pairing()

    def index(files: list[InputFile], side: str) -> dict[str, InputFile]:
        by_id: dict[str, InputFile] = {}
        # When one folder holds both, prefer names that look like this side's files, and the
        # v3 file of a story over its v2 file.
        want_pred = side == "prediction"
        for f in sorted(files, key=lambda f: (looks_like_prediction(f.name) != want_pred, not _is_v3(f.name), f.name)):
            sid = story_id(f.name)
            if sid in by_id:
                result.issues.append(
                    InputIssue(f.name, f"second {side} file for story {sid!r} (already have {by_id[sid].name}); ignored",
                               severity="warning", kind="pairing")
                )
                continue
            by_id[sid] = f
        return by_id

    gts = index(gt_files, "ground-truth")
    preds = index(pred_files, "prediction")
    for sid in sorted(gts):
        if sid in preds:
            result.pairs.append((sid, gts[sid], preds[sid]))
        else:
            result.unpaired_gt.append(gts[sid].name)
            result.issues.append(InputIssue(gts[sid].name, f"no prediction file for story {sid!r}",
                                            severity="warning", kind="pairing"))
    for sid in sorted(preds):
        if sid not in gts:
            result.unpaired_pred.append(preds[sid].name)
            result.issues.append(InputIssue(preds[sid].name, f"no ground-truth file for story {sid!r}",
                                            severity="warning", kind="pairing"))
    return result
