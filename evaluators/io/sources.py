"""Input files from paths, folders, uploads and zip archives, and GT/prediction pairing."""

from __future__ import annotations

import errno
import hashlib
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from io import BytesIO
from pathlib import Path, PurePosixPath

from evaluators.io.errors import InputIssue
from evaluators.results import DictMixin

#: Largest file read from disk (CLI paths and folders), in bytes.  Above the 200 MB JSONL
#: that EvalBoard is sized for; larger files are reported, not read.
MAX_FILE_BYTES = 1024 ** 3
#: Most members of one zip archive looked at (directories and skipped names included).
MAX_ZIP_MEMBERS = 10_000
#: Largest zip member read, in bytes (uncompressed), whatever its header declares.
MAX_MEMBER_BYTES = 200 * 1024 ** 2
#: Largest total of the members read from one archive, in bytes (uncompressed).
MAX_ARCHIVE_BYTES = 512 * 1024 ** 2
#: Highest compression ratio (uncompressed / compressed) of a member over 1 MiB.  JSON and
#: text compress 3-20x; hundreds or thousands to one is a zip bomb.
MAX_COMPRESSION_RATIO = 200
_RATIO_FLOOR = 1024 ** 2


@dataclass(frozen=True)
class InputFile:
    """A named blob of bytes (an upload, a file on disk, or a zip member).

    ``issue`` is set (and ``data`` empty) for a file that could not be read safely (an
    archive or member over a limit, an unreadable member, a file too large): it is reported
    with that issue and never parsed.
    """

    name: str
    data: bytes
    issue: InputIssue | None = None

    @cached_property
    def digest(self) -> str:
        """:func:`bytes_digest` of ``data``, computed once per file object (a cache key)."""
        return bytes_digest(self.data)


def bytes_digest(data: bytes | memoryview) -> str:
    """BLAKE2b-128 of ``data`` as 32 hex characters: a cache key, not a security check.

    Parameters
    ----------
    data : bytes or memoryview

    Returns
    -------
    str
        32 lower-case hex digits.
    """
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _unread(name: str, message: str) -> InputFile:
    return InputFile(name, b"", InputIssue(name, message, kind="archive"))


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
        Sorted by name.  A file over :data:`MAX_FILE_BYTES`, or one reached through a link
        that leads out of the folder, is returned unread with its ``issue`` set.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.is_dir():
        root = p.resolve()
        files = []
        for f in sorted(p.rglob("*")):
            if not f.is_file() or f.suffix.lower() not in suffixes:
                continue
            name = str(f.relative_to(p))
            if not f.resolve().is_relative_to(root):
                files.append(_unread(name, f"a link out of {p} (to {f.resolve()}); not read"))
            else:
                files.append(_read_file(f, name))
        return files
    return expand_archives([_read_file(p, p.name)], suffixes)


def read_file_bytes(path: str | Path) -> bytes:
    """The bytes of one file from disk, refused above :data:`MAX_FILE_BYTES` before anything is read.

    Every command reads its input files through this (a folder's files through
    :func:`collect_paths`), so no read is unbounded.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    bytes
        Its whole content.

    Raises
    ------
    OSError
        The file cannot be read (``FileNotFoundError``, ``IsADirectoryError``, ...), or it is larger
        than :data:`MAX_FILE_BYTES`: then ``errno`` is ``EFBIG`` and ``strerror`` gives its size and
        the limit, so the callers' ``except OSError`` reports it like any unreadable file.
    """
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, f"{size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit of one input file",
                      str(p))
    return p.read_bytes()


def _read_file(f: Path, name: str) -> InputFile:
    size = f.stat().st_size
    if size > MAX_FILE_BYTES:
        return _unread(name, f"{size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit of one file; not read")
    return InputFile(name, f.read_bytes())


def safe_member_name(name: str) -> str:
    r"""A zip member's name as shown to users: ``/`` separators, no drive, root or ``..`` parts.

    Parameters
    ----------
    name : str
        The member's name as stored in the archive.

    Returns
    -------
    str
        A relative name; ``"_"`` when nothing is left.

    >>> safe_member_name("../../etc/x.json"), safe_member_name("C:\\a\\b.json"), safe_member_name("/abs/y.json")
    ('etc/x.json', 'a/b.json', 'abs/y.json')
    """
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".", "..")]
    if parts and len(parts[0]) == 2 and parts[0][1] == ":":
        parts = parts[1:]
    return "/".join(parts) or "_"


def expand_archives(files: list[InputFile], suffixes: tuple[str, ...] = (".json",)) -> list[InputFile]:
    """Replace every ``.zip`` in ``files`` by its members that have one of ``suffixes``.

    Members under ``__MACOSX/`` and hidden files are skipped, nested archives are not
    opened, and nothing is written to disk (member names are shown through
    :func:`safe_member_name`, so ``../`` and absolute names cannot point anywhere).

    Limits, checked on the declared sizes before anything is read, then again while each
    member is read through a capped stream (a header can lie): at most
    :data:`MAX_ZIP_MEMBERS` members, :data:`MAX_MEMBER_BYTES` per member,
    :data:`MAX_ARCHIVE_BYTES` in all, and a compression ratio of at most
    :data:`MAX_COMPRESSION_RATIO` for each member over 1 MiB and for the smaller members
    taken together.

    Parameters
    ----------
    files : list of InputFile
        Uploaded or collected files, archives among them.
    suffixes : tuple of str
        Member suffixes kept (lower case, with the dot).

    Returns
    -------
    list of InputFile
        Other files as given, then the members read.  An archive that breaks the member
        count, total size or overall ratio limit is returned unread with its ``issue`` set (nothing of it
        is read); a member over its own limit, encrypted, compressed with an unknown method
        or corrupt is returned unread with its ``issue`` set, and the other members are
        kept.  A zip that cannot be opened at all is kept as is, so the caller reports it as
        an unreadable file.
    """
    out: list[InputFile] = []
    for f in files:
        if not f.name.lower().endswith(".zip") or f.issue is not None:
            out.append(f)
            continue
        try:
            zf = zipfile.ZipFile(BytesIO(f.data))
        except (zipfile.BadZipFile, OSError, ValueError):
            out.append(f)
            continue
        with zf:
            out.extend(_members(f.name, zf, suffixes))
    return out


def _members(archive: str, zf: zipfile.ZipFile, suffixes: tuple[str, ...]) -> list[InputFile]:
    infos = zf.infolist()
    if len(infos) > MAX_ZIP_MEMBERS:
        return [_unread(archive, f"zip archive with {len(infos):,} members, over the limit of {MAX_ZIP_MEMBERS:,}; "
                                 "not read")]
    wanted = []
    for info in infos:
        member = PurePosixPath(info.filename.replace("\\", "/"))
        if info.is_dir() or "__MACOSX" in member.parts or member.name.startswith("."):
            continue
        if member.suffix.lower() in suffixes:
            wanted.append(info)
    declared = sum(i.file_size for i in wanted)
    if declared > MAX_ARCHIVE_BYTES:
        return [_unread(archive, f"zip archive whose members declare {declared:,} bytes uncompressed, over the "
                                 f"limit of {MAX_ARCHIVE_BYTES:,}; not read")]
    # Members under the per-member ratio floor can still inflate a lot together.
    small = [i for i in wanted if i.file_size <= _RATIO_FLOOR]
    unpacked, packed = sum(i.file_size for i in small), sum(i.compress_size for i in small)
    if unpacked > _RATIO_FLOOR and unpacked > MAX_COMPRESSION_RATIO * max(packed, 1):
        return [_unread(archive, f"zip archive whose small members compress {unpacked / max(packed, 1):,.0f} to 1 "
                                 f"({packed:,} -> {unpacked:,} bytes), over the limit of {MAX_COMPRESSION_RATIO} to 1 "
                                 "(a zip bomb?); not read")]
    out, total = [], 0
    for info in wanted:
        name = f"{archive}/{safe_member_name(info.filename)}"
        problem = _member_problem(info)
        if problem is None:
            try:
                data = _read_capped(zf, info, min(MAX_MEMBER_BYTES, MAX_ARCHIVE_BYTES - total))
            except _TooLarge:
                problem = (f"larger than its header says and over the limit "
                           f"({min(MAX_MEMBER_BYTES, MAX_ARCHIVE_BYTES - total):,} bytes left for it); not read")
            except RuntimeError as exc:  # encrypted (zipfile says so with a RuntimeError)
                problem = f"cannot be read: {exc}"
            except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, ValueError, zlib.error) as exc:
                problem = f"cannot be read ({type(exc).__name__}: {exc})"
        if problem is not None:
            out.append(_unread(name, f"zip member {problem}"))
            continue
        total += len(data)
        out.append(InputFile(name, data))
    return out


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    if info.file_size > MAX_MEMBER_BYTES:
        return f"declares {info.file_size:,} bytes uncompressed, over the limit of {MAX_MEMBER_BYTES:,}; not read"
    if info.file_size > _RATIO_FLOOR and info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1):
        ratio = info.file_size / max(info.compress_size, 1)
        return (f"compressed {ratio:,.0f} to 1 ({info.compress_size:,} -> {info.file_size:,} bytes), over the limit of "
                f"{MAX_COMPRESSION_RATIO} to 1 (a zip bomb?); not read")
    if info.flag_bits & 0x1:
        return "is encrypted; not read"
    return None


class _TooLarge(Exception):
    pass


def _read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """The member's bytes, read in 1 MiB pieces; :class:`_TooLarge` past ``cap`` bytes."""
    chunks, size = [], 0
    with zf.open(info) as stream:
        while True:
            chunk = stream.read(min(1 << 20, cap - size + 1))
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > cap:
                raise _TooLarge
            chunks.append(chunk)


#: Suffixes stripped from a file stem to get its story id, repeatedly, in this order.
STORY_ID_SUFFIXES = ("_prediction", "_pred", "_v3", "_v2")
_SUFFIX_RE = re.compile("(" + "|".join(re.escape(s) for s in STORY_ID_SUFFIXES) + r")$", re.IGNORECASE)


def story_id(file_name: str) -> str:
    """Story id of a GT or prediction file: the stem without ``_v2``, ``_v3``, ``_prediction``, ``_pred``.

    Parameters
    ----------
    file_name : str
        A file name, possibly with folders (``/`` or ``\\``).

    Returns
    -------
    str
        The stem with those suffixes removed (repeatedly, in any order, any case).

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


def system_name(file_names: list[str] | tuple[str, ...], default: str = "predictions") -> str:
    """The name of the system whose prediction files were given together, after what the files share.

    One file or zip: its name without the extension.  Several files in one folder: the folder's name.
    Several files: their longest common start, cut back to a whole word, when it is at least three
    characters.  Otherwise ``"<default> (<n> files)"``: never one story's file name, which would name the
    system after a story.  ``default`` when there is no file (the demo).

    Parameters
    ----------
    file_names : list or tuple of str
        The names of the files given together (with folders, if any).
    default : str
        The name when there is no file, and the start of the fallback name.

    Returns
    -------
    str

    >>> system_name(["gpt4o_preds.zip"]), system_name(["qwen_CH_002.json", "qwen_EN_001.json"])
    ('gpt4o_preds', 'qwen')
    >>> system_name(["CH_002_v3_prediction.json", "CH_003_prediction.json"])
    'predictions (2 files)'
    """
    import os

    names = [n.replace("\\", "/") for n in file_names]
    stems = [_stem(n) for n in names]
    if not stems:
        return default
    if len(stems) == 1:
        return stems[0] or default
    folders = {n.rsplit("/", 1)[0] if "/" in n else "" for n in names}
    if len(folders) == 1 and (folder := folders.pop().rstrip("/").rsplit("/", 1)[-1]) not in ("", ".", ".."):
        return folder
    prefix = os.path.commonprefix(stems)
    if any(stem != prefix for stem in stems):  # cut back to a whole word ("run_a_01", "run_a_02" -> "run_a")
        prefix = prefix[:max((prefix.rfind(sep) for sep in "_-. "), default=-1) + 1]
    prefix = prefix.rstrip("_-. ")
    return prefix if len(prefix) >= 3 else f"{default} ({len(stems)} files)"


def _stem(file_name: str) -> str:
    """The file name without folders (``/`` or ``\\``) and without its last suffix."""
    return PurePosixPath(file_name.replace("\\", "/")).name.rsplit(".", 1)[0]


_PRED_RE = re.compile(r"_(prediction|pred)$", re.IGNORECASE)
_V3_RE = re.compile(r"_v3(_prediction|_pred)?$", re.IGNORECASE)


def _is_v3(file_name: str) -> bool:
    stem = _stem(file_name)
    return bool(_V3_RE.search(stem))


def looks_like_prediction(file_name: str) -> bool:
    """True when the stem ends with ``_prediction`` or ``_pred`` (after any ``_v2``/``_v3``).

    Parameters
    ----------
    file_name : str

    Returns
    -------
    bool

    Examples
    --------
    >>> looks_like_prediction("EN_001_fox_v3_prediction.json"), looks_like_prediction("EN_001_fox_v3.json")
    (True, False)
    """
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

    Files that were not read (``InputFile.issue`` set) are left out and their issue reported.
    Two files of one side with the same story id: the first is used and the other is reported,
    the files taken in this order: names that look like that side's files first
    (:func:`looks_like_prediction`), then v3 files before others, then by name.  Files without a
    partner are listed, never dropped silently.

    Parameters
    ----------
    gt_files, pred_files : list of InputFile
        The two sides (archives already expanded).

    Returns
    -------
    Pairing
        Pairs sorted by story id, the unpaired file names of each side and the warnings.
    """
    result = Pairing()

    def index(files: list[InputFile], side: str) -> dict[str, InputFile]:
        by_id: dict[str, InputFile] = {}
        # When one folder holds both, prefer names that look like this side's files, and the
        # v3 file of a story over its v2 file.
        want_pred = side == "prediction"
        for f in sorted(files, key=lambda f: (looks_like_prediction(f.name) != want_pred, not _is_v3(f.name), f.name)):
            if f.issue is not None:  # not read (archive limits, unreadable member, too large)
                result.issues.append(f.issue)
                continue
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
