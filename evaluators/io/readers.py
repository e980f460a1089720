"""Readers for JSON, JSONL and CSV with located errors.

A broken JSONL/CSV line is reported (file and line) and skipped; the good lines are
kept.  A JSON document that does not parse is reported with its line and column.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, BinaryIO

from evaluators.io.decode import decode_bytes

try:  # a faster parser with the same results; optional
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is in requirements.txt
    _orjson = None
from evaluators.io.errors import InputError, InputIssue
from evaluators.results import DictMixin


#: Deepest nesting of arrays and objects read (orjson's own limit; the standard library is held to it too).
MAX_JSON_DEPTH = 1024
#: Largest text (bytes or characters) parsed with orjson; longer ones go to the standard library.
#: orjson reserves about 12 bytes of working memory per input byte (a 20 MB line peaks near 270 MB,
#: also when the text fails to parse after its first line), the standard library about the size of
#: the result: above this size the standard library keeps a read within 3x the input.
ORJSON_MAX_BYTES = 4 << 20

# A \uD800-\uDFFF escape that is not half of a surrogate pair (an even number of backslashes before it).
_LONE_SURROGATE = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    r"|(?<!\\)((?:\\\\)*)\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def replace_lone_surrogates(text: str) -> tuple[str, int, int | None]:
    """Replace ``\\uD800``-``\\uDFFF`` escapes that are not surrogate pairs by ``\\uFFFD`` in JSON text.

    A lone surrogate is not a Unicode character: Python would read it into a string that no
    UTF-8 output (report, CSV, the page's Arrow tables) can encode.

    Parameters
    ----------
    text : str
        JSON text (escapes as written, not yet parsed).

    Examples
    --------
    >>> replace_lone_surrogates('{"a": "\\\\ud83d\\\\ude00"}')[1:], replace_lone_surrogates('["x",\\n "\\\\ud800"]')[1:]
    ((0, None), (1, 2))

    Returns
    -------
    (text, count, line)
        The text, how many escapes were replaced, and the 1-based line of the first one
        (``None`` when there was none).
    """
    found: list[int] = []  # start offsets of the replaced escapes

    def fix(m: re.Match) -> str:
        if m.group(2) is not None and m.group(3) is not None:
            return m.group(0)  # a valid pair
        found.append(m.start())
        return (m.group(1) if m.group(2) is not None else m.group(4)) + "\\ufffd"

    if "\\u" not in text:
        return text, 0, None
    out = _LONE_SURROGATE.sub(fix, text)
    if not found:
        return text, 0, None
    return out, len(found), text.count("\n", 0, found[0]) + 1


def _too_deep(file: str, line: int | None = None, exc: Exception | None = None) -> InputError:
    """The located error of too deep nesting: orjson's line and column where it gave up, else the path ``$``."""
    column = getattr(exc, "colno", None)
    if line is None:
        line = getattr(exc, "lineno", None)
    elif column is not None and getattr(exc, "lineno", 1) != 1:
        column = None  # a JSONL line: orjson counts within the line only when it is line 1 of the text
    return InputError(InputIssue(file, f"JSON nested too deeply (at most {MAX_JSON_DEPTH} levels of arrays and objects)",
                                 line=line, column=column, path=None if line is not None else "$", kind="json"))


def _stdlib_loads(text: str | bytes, file: str, line: int | None) -> tuple[Any, int, int | None]:
    """``json.loads`` after lone-surrogate repair; ``(value, replaced, first_line)``.

    Raises json.JSONDecodeError for invalid JSON and :class:`InputError` for too deep nesting.
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8")
    text, replaced, first = replace_lone_surrogates(text)
    try:
        return json.loads(text), replaced, first
    except RecursionError as exc:
        raise _too_deep(file, line) from exc


def parse_json_text(text: str | bytes, file: str = "<input>", issues: list[InputIssue] | None = None) -> Any:
    """Parse a JSON document (orjson when installed, else the standard library; same result).

    ``NaN``/``Infinity`` tokens, which orjson rejects, are read by the standard library as
    floats, as before.  A lone surrogate escape (``"\\ud800"``) is read as U+FFFD, with a
    warning appended to ``issues`` when given.

    Parameters
    ----------
    text : str or bytes
        The whole document (bytes: UTF-8).
    file : str
        The input's name, for located problems.
    issues : list of InputIssue, optional
        Where the lone-surrogate warning goes.

    Returns
    -------
    object
        The parsed value (dict, list, str, number, bool or None).

    Raises
    ------
    InputError
        With the 1-based line and column of the syntax error and the parser's message
        (the standard library's wording), or when arrays and objects nest deeper than
        :data:`MAX_JSON_DEPTH`.
    """
    if _orjson is not None and len(text) <= ORJSON_MAX_BYTES:
        try:
            return _orjson.loads(text)
        except _orjson.JSONDecodeError as exc:
            if str(exc).startswith("depth limit exceeded"):
                raise _too_deep(file, None, exc) from exc
            # fall through for NaN tokens and lone surrogates, and for the standard library's error message
    try:
        value, replaced, first = _stdlib_loads(text, file, None)
    except json.JSONDecodeError as exc:
        raise InputError(
            InputIssue(file, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno, kind="json")
        ) from exc
    if replaced and issues is not None:
        issues.append(surrogate_warning(file, replaced, line=first))
    return value


def surrogate_warning(file: str, count: int, **where) -> InputIssue:
    """The warning given when lone surrogate escapes were replaced by U+FFFD.

    Parameters
    ----------
    file : str
        The input's name, for located problems.
    count : int
        Escapes replaced.
    **where
        ``line``, ``column`` or ``path`` of the first one.

    Returns
    -------
    InputIssue
        Severity ``warning``, kind ``decode``.
    """
    return InputIssue(file, f"{count} lone surrogate escape(s) (\\ud800-\\udfff, not a character) read as U+FFFD",
                      severity="warning", kind="decode", **where)


def loads_json_line(line: str | bytes, file: str = "<input>", lineno: int | None = None) -> Any:
    """Parse one JSON value (orjson when installed, else the standard library; same result).

    Used for JSONL lines, when they are read and when they are read again, so both agree:
    ``NaN``/``Infinity`` tokens (which orjson rejects) are read as floats and lone surrogate
    escapes as U+FFFD (see :func:`replace_lone_surrogates`).

    Parameters
    ----------
    line : str or bytes
        One JSON value (bytes: UTF-8).
    file : str
        The input's name, for located problems.
    lineno : int, optional
        Its 1-based line, for the too-deep error.

    Returns
    -------
    object

    Examples
    --------
    >>> loads_json_line('{"q": "北京", "score": NaN}')
    {'q': '北京', 'score': nan}

    Raises
    ------
    json.JSONDecodeError
        When the text is not valid JSON (the standard library's message and column).
    InputError
        When it nests deeper than :data:`MAX_JSON_DEPTH`.
    """
    return _loads_line(line, file, lineno)[0]


def _loads_line(line: str | bytes, file: str, lineno: int | None) -> tuple[Any, int]:
    """:func:`loads_json_line` and the number of lone surrogate escapes replaced."""
    if _orjson is not None and len(line) <= ORJSON_MAX_BYTES:
        try:
            return _orjson.loads(line), 0
        except _orjson.JSONDecodeError as exc:
            if str(exc).startswith("depth limit exceeded"):
                raise _too_deep(file, lineno, exc) from exc
    value, replaced, _ = _stdlib_loads(line, file, lineno)
    return value, replaced


def load_json_bytes(data: bytes, file: str = "<input>", issues: list[InputIssue] | None = None) -> tuple[Any, str]:
    """Decode and parse a JSON file.

    UTF-8 (with or without BOM) is parsed straight from the bytes; anything else is decoded
    first (GB18030), so the text is never decoded twice.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    file : str
        The input's name, for located problems.
    issues : list of InputIssue, optional
        Where warnings (lone surrogates) go.

    Returns
    -------
    (value, encoding)
        The parsed value and the encoding used (see :func:`evaluators.io.decode.decode_bytes`).

    Raises
    ------
    InputError
        Undecodable bytes, or invalid JSON (with line and column).
    """
    if _orjson is not None and len(data) <= ORJSON_MAX_BYTES:
        bom = data[:3] == b"\xef\xbb\xbf"
        try:
            return _orjson.loads(memoryview(data)[3:] if bom else data), ("utf-8-sig" if bom else "utf-8")
        except _orjson.JSONDecodeError:
            pass  # not UTF-8, NaN tokens or invalid JSON: the path below decides and locates errors
    decoded = decode_bytes(data, file)
    return parse_json_text(decoded.text, file, issues), decoded.encoding


@dataclass(frozen=True)
class Record(DictMixin):
    """One input record and where it came from.

    Attributes
    ----------
    data : dict
        The record's fields.  CSV cells that are empty stay ``""``; float NaN read from
        JSON is kept as is (callers treat both as absent via :func:`evaluators.policy.is_empty`).
    line : int or None
        1-based line (JSONL, CSV: the line where the row starts) or ``None``.
    index : int
        0-based position among the records of the file.
    raw : bytes or None
        The record's JSON line as UTF-8 (streamed JSONL only), so a consumer can keep the
        compact bytes instead of the parsed dict; parse it with :func:`loads_json_line`.
    offset : int or None
        Byte offset of that line in the input (streamed UTF-8 JSONL only): with the input
        kept elsewhere, the line can be read again from ``offset`` and ``len(raw)``.  ``None``
        for GB18030 input, whose lines are re-encoded (so ``raw`` is the only copy).
    path : str or None
        JSON path of the record in a JSON document (``[3]``, ``data[3]``); ``None`` otherwise.
    """

    data: dict[str, Any]
    line: int | None
    index: int
    raw: bytes | None = field(default=None, repr=False, compare=False)
    offset: int | None = field(default=None, repr=False, compare=False)
    path: str | None = field(default=None, compare=False)

    def where(self) -> dict[str, Any]:
        """Where the record is, as keyword arguments of :class:`InputIssue`: its line, else its JSON path."""
        if self.line is not None:
            return {"line": self.line}
        return {"path": self.path if self.path is not None else f"[{self.index}]"}


@dataclass
class RecordSet(DictMixin):
    """Records read from one file, with the problems found while reading."""

    file: str
    format: str
    encoding: str
    records: list[Record] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)

    @property
    def errors(self) -> list[InputIssue]:
        """The issues of severity ``error`` (warnings left out)."""
        return [i for i in self.issues if i.severity == "error"]


_HEAD = 65536


#: Lines of the head looked at to tell JSONL from a JSON document.
_SNIFF_LINES = 20


def sniff_format(file: str, head: str) -> str:
    """Guess ``json``, ``jsonl`` or ``csv`` from the file suffix, then from the first characters.

    ``head`` is the beginning of the text (the first 64 KiB is plenty).  Text starting with
    ``{`` is JSONL when it has at least two non-empty lines and most of its first
    :data:`_SNIFF_LINES` complete lines are JSON objects on their own (so one broken line
    does not turn a JSONL file into one invalid JSON document); otherwise it is JSON.

    Parameters
    ----------
    file : str
        The file's name (its suffix decides first: ``.jsonl``/``.ndjson``, ``.json``, ``.csv``).
    head : str
        The beginning of its text.

    Returns
    -------
    str
        ``"json"``, ``"jsonl"`` or ``"csv"``.

    Examples
    --------
    >>> sniff_format("upload", '{"id": 1}\\n{"id": 2}\\n'), sniff_format("upload", '[{"id": 1}]')
    ('jsonl', 'json')
    """
    suffix = PurePath(file).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    stripped = head.lstrip()
    if stripped.startswith("{"):
        lines = stripped.split("\n", _SNIFF_LINES + 1)
        if len(lines) > _SNIFF_LINES or not stripped.endswith("\n"):
            lines = lines[:-1] or lines  # the last piece may be cut short by the head
        lines = [ln for ln in lines[:_SNIFF_LINES] if ln.strip()]
        if len(lines) >= 2:
            objects = 0
            for ln in lines:
                try:
                    objects += isinstance(loads_json_line(ln), dict)
                except (json.JSONDecodeError, InputError):
                    pass
            if 2 * objects > len(lines):
                return "jsonl"
        return "json"
    if suffix == ".json" or stripped.startswith("["):
        return "json"
    return "csv"


def _chunks(data: bytes | memoryview | BinaryIO, step: int = 1 << 20) -> Iterator[bytes | memoryview]:
    """The input in ``step``-byte pieces (from the current position of a file)."""
    if hasattr(data, "read"):
        yield from iter(lambda: data.read(step), b"")
        return
    view = memoryview(data)
    for i in range(0, len(view), step):
        yield view[i:i + step]


def _first_bad_byte(data: bytes | memoryview | BinaryIO, codec: str, skip: int = 0) -> int | None:
    """Offset of the first byte that ``codec`` cannot decode (``None``: it all decodes).

    Decodes incrementally in 1 MiB chunks (a character split between chunks is handled),
    after skipping ``skip`` bytes; no decoded copy of the input is kept.
    """
    decoder = codecs.getincrementaldecoder(codec)()
    done = 0  # bytes handed to the decoder so far (plus the skipped ones)
    pending = 0  # of which still buffered (an unfinished character)
    try:
        for chunk in _chunks(data):
            if skip:
                cut = min(skip, len(chunk))
                chunk, skip, done = chunk[cut:], skip - cut, done + cut
            pending = len(decoder.getstate()[0])
            decoder.decode(chunk)
            done += len(chunk)
        pending = len(decoder.getstate()[0])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:  # exc.start counts from the buffered bytes
        return done - pending + exc.start
    return None


def _detect_encoding(data: bytes | memoryview | BinaryIO, file: str) -> tuple[str, int]:
    """Encoding of ``data`` (bytes or a seekable binary file) and the length of its BOM.

    The whole input is checked, incrementally (no decoded copy is made); a file is rewound
    afterwards.  UTF-8 is tried first (a BOM commits to UTF-8), then GB18030.

    Raises
    ------
    InputError
        (kind ``decode``) naming the offset of the first bad byte.
    """
    start_pos = data.tell() if hasattr(data, "read") else 0

    def rewind() -> None:
        if hasattr(data, "read"):
            data.seek(start_pos)

    first = data.read(3) if hasattr(data, "read") else bytes(memoryview(data)[:3])
    rewind()
    bom = 3 if first == b"\xef\xbb\xbf" else 0
    bad = _first_bad_byte(data, "utf-8", skip=bom)
    rewind()
    if bad is None:
        return ("utf-8-sig" if bom else "utf-8"), bom
    if bom:
        raise InputError(InputIssue(file, f"starts with a UTF-8 BOM but byte {bad} is not valid UTF-8",
                                    kind="decode"))
    bad_gb = _first_bad_byte(data, "gb18030")
    rewind()
    if bad_gb is not None:
        raise InputError(InputIssue(
            file, f"cannot be decoded as UTF-8 (bad byte at offset {bad}) or GB18030; save it as UTF-8",
            kind="decode"))
    return "gb18030", 0


def _lines(data: bytes | memoryview | BinaryIO, start: int) -> Iterator[tuple[int, bytes | memoryview]]:
    """``(offset, line)`` pairs (lines without the newline) of a buffer from ``start``, or of a binary file."""
    if hasattr(data, "read"):
        pos = data.tell()
        if start:
            data.read(start)
            pos += start
        for line in data:
            yield pos, (line[:-1] if line.endswith(b"\n") else line)
            pos += len(line)
        return
    view = memoryview(data)
    raw = data if isinstance(data, bytes) else bytes(view)
    n = len(view)
    pos = start
    while pos < n:
        end = raw.find(b"\n", pos)
        if end == -1:
            end = n
        yield pos, view[pos:end]
        pos = end + 1


def iter_jsonl(data: bytes | memoryview | BinaryIO, file: str = "<input>", *, encoding: str | None = None,
               keep_raw: bool = True) -> Iterator[Record | InputIssue]:
    """Stream the records of a JSONL buffer or binary file one line at a time.

    Yields a :class:`Record` per good line and an :class:`InputIssue` per bad line (invalid
    JSON, not an object), so a caller can score as it reads and keep only what it needs.
    Given an open file, only one line is in memory at a time.

    Parameters
    ----------
    data : bytes, memoryview or binary file (seekable)
    file : str
        Name used in issues.
    encoding : str, optional
        ``utf-8``, ``utf-8-sig`` or ``gb18030`` when already known (else detected).
    keep_raw : bool
        Give each record its line (``raw``, ``offset``); without it only the parsed data.

    Raises
    ------
    InputError
        If the bytes are neither UTF-8 nor GB18030.
    """
    for item in iter_jsonl_values(data, file, encoding=encoding, keep_raw=keep_raw):
        yield item if type(item) is not tuple else Record(*item)


def detect_encoding(data: bytes | memoryview | BinaryIO, file: str = "<input>") -> tuple[str, int]:
    """Encoding of a whole input (``utf-8``, ``utf-8-sig`` or ``gb18030``) and the length of its BOM.

    The input is checked incrementally, without a decoded copy; a file is rewound.  Pass the
    encoding on to :func:`iter_jsonl_values` / :func:`jsonl_block` so the check runs once.

    Parameters
    ----------
    data : bytes, memoryview or binary file
        The whole input (a file is read from its start and rewound).
    file : str
        The input's name, for located problems.

    Returns
    -------
    (encoding, bom_length) : (str, int)
        ``bom_length`` is 3 for ``utf-8-sig``, else 0.

    Examples
    --------
    >>> detect_encoding("北京".encode("utf-8")), detect_encoding("北京".encode("gb18030"))
    (('utf-8', 0), ('gb18030', 0))

    Raises
    ------
    InputError
        (kind ``decode``) when it is neither, naming the offset of the first bad byte.
    """
    return _detect_encoding(data, file)


def _slow_line(raw_line: bytes | memoryview, codec: str, encoding: str, file: str, lineno: int, offset: int,
               issues: list[InputIssue]) -> dict | None:
    """A JSONL line the fast parser did not give as an object: its record, or ``None`` with the reason in ``issues``.

    Blank lines are skipped silently; undecodable, invalid, too deep and non-object lines are
    located issues; lone surrogate escapes are read as U+FFFD with a warning (the record is kept).
    """
    try:
        line = str(raw_line, codec)
    except UnicodeDecodeError as exc:  # only when a wrong ``encoding`` was passed in
        issues.append(InputIssue(file, f"byte {offset + exc.start} is not valid {encoding}; line skipped",
                                 line=lineno, kind="decode"))
        return None
    return _text_line(line, file, lineno, issues)


def _text_line(line: str, file: str, lineno: int, issues: list[InputIssue]) -> dict | None:
    """:func:`_slow_line` of a decoded line."""
    if not line.strip():
        return None
    try:
        value, replaced = _loads_line(line, file, lineno)
    except json.JSONDecodeError as exc:
        issues.append(InputIssue(file, f"invalid JSON on this line: {exc.msg}", line=lineno, column=exc.colno,
                                 kind="json"))
        return None
    except InputError as exc:
        issues.append(exc.issue)
        return None
    if replaced:
        issues.append(surrogate_warning(file, replaced, line=lineno))
    if not isinstance(value, dict):
        issues.append(InputIssue(file, f"expected a JSON object, found {type(value).__name__}", line=lineno,
                                 kind="schema"))
        return None
    return value


def iter_jsonl_values(data: bytes | memoryview | BinaryIO, file: str = "<input>", *, encoding: str | None = None,
                      keep_raw: bool = True) -> Iterator[tuple | InputIssue]:
    """:func:`iter_jsonl` without the record objects: ``(data, line, index, raw, offset)`` tuples per good line.

    For callers that handle millions of lines (the tuple is the arguments of :class:`Record`);
    bad lines are :class:`InputIssue` items, exactly as :func:`iter_jsonl` gives them.

    Parameters
    ----------
    data : bytes, memoryview or binary file
        The JSONL input.
    file : str
        The input's name, for located problems.
    encoding : str, optional
        ``utf-8``, ``utf-8-sig`` or ``gb18030`` when already known (:func:`detect_encoding`);
        ``None``: detected first.
    keep_raw : bool
        Give each line's raw bytes (``raw``), else ``None``.

    Yields
    ------
    tuple or InputIssue
        ``(data, line, index, raw, offset)``: the object, its 1-based line, its 0-based index
        among the good lines, its bytes and their offset in the input; or a located problem.

    Raises
    ------
    InputError
        The input is neither UTF-8 nor GB18030 (when ``encoding`` is not given).
    """
    if encoding is None:
        encoding, bom = _detect_encoding(data, file)
    else:
        bom = 3 if encoding == "utf-8-sig" else 0
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    utf8 = codec == "utf-8"
    fast = _orjson.loads if _orjson is not None and utf8 else None
    fast_error = _orjson.JSONDecodeError if fast is not None else ()
    index = 0
    issues: list[InputIssue] = []
    for lineno, (offset, raw_line) in enumerate(_lines(data, bom), start=1):
        if fast is not None and len(raw_line) <= ORJSON_MAX_BYTES:  # valid UTF-8 (checked above): orjson reads
            # the bytes, the same value as from the text (a longer line goes below, to the standard library)
            try:
                value = fast(raw_line)
            except fast_error:
                pass  # blank, invalid, NaN tokens, too deep, lone surrogates: the path below decides
            else:
                if type(value) is dict:
                    if not keep_raw:
                        yield value, lineno, index, None, None
                    else:
                        yield value, lineno, index, bytes(raw_line), offset
                    index += 1
                    continue
        value = _slow_line(raw_line, codec, encoding, file, lineno, offset, issues)
        if issues:
            yield from issues
            issues.clear()
        if value is None:
            continue
        if not keep_raw:
            yield value, lineno, index, None, None
        elif utf8:
            yield value, lineno, index, bytes(raw_line), offset
        else:
            yield value, lineno, index, str(raw_line, codec).encode("utf-8"), None
        index += 1


def jsonl_block(block: bytes, file: str = "<input>", *, first_line: int = 1, base: int = 0
                ) -> tuple[list[dict], list[int], list[int], list[int], list[InputIssue]]:
    """The records of a block of whole lines of a UTF-8 JSONL input, as columns: what :func:`iter_jsonl_values`
    gives for those lines, without a generator step or a tuple per line.

    Parameters
    ----------
    block : bytes
        Whole lines of a UTF-8 input (no BOM): it ends at a line end or at the end of the input.
    file : str
        Name used in issues.
    first_line : int
        1-based number of the block's first line in the input.
    base : int
        Byte offset of the block in the input.

    Returns
    -------
    (records, lines, offsets, lengths, issues)
        Per good line (an object): the parsed object, its line number, the byte offset of the line
        in the input and its length in bytes (without the line end); and the located issues of the
        other lines, in order.  Blank lines are skipped silently.

    Raises
    ------
    UnicodeDecodeError
        When a line is not UTF-8 (the input is then not UTF-8 as a whole: see :func:`detect_encoding`).
    """
    records: list[dict] = []
    lines: list[int] = []
    offsets: list[int] = []
    lengths: list[int] = []
    issues: list[InputIssue] = []
    parts = block.split(b"\n")
    if parts and not parts[-1]:
        parts.pop()  # the block ends at a line end
    fast = _orjson.loads if _orjson is not None else None
    fast_error = _orjson.JSONDecodeError if fast is not None else ()
    offset = base
    lineno = first_line
    for raw_line in parts:
        size = len(raw_line)
        value = None
        if fast is not None and size <= ORJSON_MAX_BYTES:
            try:
                value = fast(raw_line)
            except fast_error:
                pass
        if type(value) is not dict:  # (orjson checks that the whole line is UTF-8)
            value = _text_line(str(raw_line, "utf-8"), file, lineno, issues)
        if value is not None:
            records.append(value)
            lines.append(lineno)
            offsets.append(offset)
            lengths.append(size)
        offset += size + 1
        lineno += 1
    return records, lines, offsets, lengths, issues


def read_json_document(data: bytes | memoryview, file: str = "<input>") -> tuple[Any, RecordSet]:
    """Decode and parse a JSON file once (see :func:`load_json_bytes`).

    Parameters
    ----------
    data : bytes or memoryview
        The file's bytes.
    file : str
        The input's name, for located problems.

    Returns
    -------
    (value, records)
        The parsed value (``None`` when it does not parse) and an empty ``RecordSet`` with
        the file's encoding, holding the located syntax error if there is one; fill it with
        :func:`add_json_records`.

    Raises
    ------
    InputError
        Only when the bytes cannot be decoded.
    """
    warnings: list[InputIssue] = []
    data = bytes(data)
    if _orjson is not None and len(data) <= ORJSON_MAX_BYTES:
        bom = data[:3] == b"\xef\xbb\xbf"
        try:
            value = _orjson.loads(memoryview(data)[3:] if bom else data)
            return value, RecordSet(file=file, format="json", encoding="utf-8-sig" if bom else "utf-8")
        except _orjson.JSONDecodeError:
            pass  # not UTF-8, NaN tokens or invalid JSON: decoded once below, errors located
    decoded = decode_bytes(data, file)  # the one decode (its encoding is kept for the error case too)
    try:
        value = parse_json_text(decoded.text, file, warnings)
    except InputError as exc:
        if exc.issue.kind != "json":
            raise
        return None, RecordSet(file=file, format="json", encoding=decoded.encoding, issues=[exc.issue])
    return value, RecordSet(file=file, format="json", encoding=decoded.encoding, issues=warnings)


def add_json_records(value: Any, out: RecordSet) -> RecordSet:
    """Append the records of a parsed JSON value to ``out`` and return it.

    A list holds records; an object holding one (see :func:`records_field`) too; any other
    object is one record.  Each element that is not an object is an issue naming its path.

    Parameters
    ----------
    value : object
        A parsed JSON document.
    out : RecordSet
        Filled in place (records numbered after those it holds).

    Returns
    -------
    RecordSet
        ``out``; each record located by its JSON path (``data[3]``).
    """
    file = out.file
    items = value
    prefix = ""
    if isinstance(value, dict):
        container = records_field(value)
        if container is not None:
            prefix, items = container, value[container]
        else:
            items = [value]
    if not isinstance(items, list):
        out.issues.append(InputIssue(file, "expected a JSON array of objects", path="$", kind="schema"))
        return out
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.issues.append(InputIssue(file, f"expected an object, found {type(item).__name__}",
                                         path=f"{prefix}[{i}]", kind="schema"))
            continue
        out.records.append(Record(item, None, len(out.records), path=f"{prefix}[{i}]"))
    return out


def sniff_bytes(data: bytes | memoryview, file: str) -> str:
    """:func:`sniff_format` on the first 64 KiB of raw bytes (no full decode).

    Parameters
    ----------
    data : bytes or memoryview
        The input.
    file : str
        Its name.

    Returns
    -------
    str
        ``"json"``, ``"jsonl"`` or ``"csv"``.
    """
    head = bytes(data[:_HEAD])
    return sniff_format(file, head.decode("utf-8", "ignore") or head.decode("gb18030", "ignore"))


#: Names of the field that holds the records in a JSON object such as ``{"data": [...]}``.
CONTAINER_FIELDS = ("data", "records", "items", "examples", "instances", "samples", "rows", "results",
                    "questions", "entries", "predictions")


def records_field(value: dict) -> str | None:
    """The field of a JSON object that holds its records, or ``None`` (the object is a record).

    It is the object's only field whose value is a list, when that list holds objects (or is
    empty) and either the field is named like a container (:data:`CONTAINER_FIELDS`) or it is
    the object's only field.  So ``{"version": 1, "data": [...]}`` is a container, while a
    single record such as ``{"question": "...", "answers": [{"text": "..."}]}`` is not.

    Parameters
    ----------
    value : dict
        A parsed JSON object.

    Returns
    -------
    str or None

    Examples
    --------
    >>> records_field({"version": 1, "data": []}), records_field({"question": "?", "answers": [{"text": "x"}]})
    ('data', None)
    """
    lists = [k for k, v in value.items() if isinstance(v, list)]
    if len(lists) != 1:
        return None
    key = lists[0]
    if not all(isinstance(x, dict) for x in value[key]):
        return None
    if len(value) == 1 or str(key).strip().lower() in CONTAINER_FIELDS:
        return key
    return None


_UNDECODED = re.compile("[\udc80-\udcff]")  # bytes kept by errors="surrogateescape"


def read_records(data: bytes, file: str = "<input>", fmt: str | None = None, *,
                 line_by_line: bool = False) -> RecordSet:
    """Read a JSONL file, a JSON array (or an object holding one, see :func:`records_field`) or a CSV file.

    Parameters
    ----------
    data : bytes
        Raw content (UTF-8, UTF-8 with BOM or GB18030).
    file : str
        Name used in issues and for format sniffing.
    fmt : {"json", "jsonl", "csv"} or None
        Force a format; by default it is sniffed.
    line_by_line : bool
        When a JSONL or CSV file is neither UTF-8 nor GB18030 as a whole, read it as UTF-8
        line by line: each line (CSV: row) holding a byte that is not UTF-8 is skipped with a
        located issue (kind ``decode``) and the other lines are kept, instead of an error for
        the whole file.

    Returns
    -------
    RecordSet
        Good records in file order and one issue per skipped line or element.  A JSON
        value that is not a list of objects is reported as a single issue.

    Raises
    ------
    InputError
        Only when the bytes cannot be decoded at all (a JSON document, or without ``line_by_line``).
    """
    if not bytes(data[:_HEAD]).strip(b" \t\r\n\xef\xbb\xbf") and not bytes(data).strip(b" \t\r\n\xef\xbb\xbf"):
        return RecordSet(file=file, format=fmt or "unknown", encoding="utf-8",
                         issues=[InputIssue(file, "the file is empty (no records)", line=1, kind="empty")])
    if fmt is None:
        fmt = sniff_bytes(data, file)
    if fmt == "jsonl":
        try:
            encoding, _ = _detect_encoding(data, file)
        except InputError as exc:
            if not (line_by_line and exc.issue.kind == "decode"):
                raise
            encoding = "utf-8-sig" if bytes(data[:3]) == b"\xef\xbb\xbf" else "utf-8"  # bad lines: issues
        out = RecordSet(file=file, format=fmt, encoding=encoding)
        for item in iter_jsonl(data, file, encoding=encoding, keep_raw=False):
            (out.records if isinstance(item, Record) else out.issues).append(item)
        return out
    if fmt == "json":
        value, out = read_json_document(data, file)
        return out if out.errors else add_json_records(value, out)
    undecoded = False
    try:
        decoded = decode_bytes(bytes(data), file)
        text, encoding = decoded.text, decoded.encoding
    except InputError as exc:
        if not (line_by_line and fmt == "csv" and exc.issue.kind == "decode"):
            raise
        raw = bytes(data)
        bom = raw[:3] == b"\xef\xbb\xbf"
        text, encoding, undecoded = raw[3 if bom else 0:].decode("utf-8", "surrogateescape"), "utf-8", True
    out = RecordSet(file=file, format=fmt, encoding=encoding)
    if fmt == "csv":
        delimiter = "\t" if PurePath(file).suffix.lower() == ".tsv" else ","
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            out.issues.append(InputIssue(file, "empty CSV file (no header row)", line=1, kind="csv"))
            return out
        except csv.Error as exc:
            out.issues.append(InputIssue(file, f"unreadable CSV header: {exc}", line=1, kind="csv"))
            return out
        header = [h.strip() for h in header]
        if undecoded and any(_UNDECODED.search(h) for h in header):
            out.issues.append(InputIssue(file, "bytes that are not UTF-8 in the header row", line=1, kind="decode"))
            return out
        while True:
            start_line = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                out.issues.append(InputIssue(file, f"unreadable CSV row: {exc}", line=start_line, kind="csv"))
                continue
            if not any(cell.strip() for cell in row):
                continue
            if undecoded and any(_UNDECODED.search(cell) for cell in row):
                out.issues.append(InputIssue(file, "bytes that are not UTF-8 on this row; row skipped",
                                             line=start_line, kind="decode"))
                continue
            if len(row) != len(header):
                out.issues.append(
                    InputIssue(file, f"expected {len(header)} columns, found {len(row)}", line=start_line, kind="csv")
                )
                continue
            out.records.append(Record(dict(zip(header, row)), start_line, len(out.records)))
        return out
    raise ValueError(f"unknown format {fmt!r}; expected json, jsonl or csv")
