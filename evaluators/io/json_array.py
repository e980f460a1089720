"""A top-level JSON array read one element at a time, with located errors.

Tools such as Label Studio write a whole export as one JSON array (of tasks), pretty-printed or
on one line.  :func:`iter_json_array` reads such a file in chunks and yields each element as
soon as it is complete, so memory holds one chunk and one element, never the file.

A JSON syntax error cannot be skipped inside one document (where the broken element ends is
unknown), so it ends the reading with an issue that names its line and column; every element
before it has been yielded.  An element that is not complete within :data:`MAX_ELEMENT_CHARS`
characters ends it the same way.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import IO, Any

from evaluators.io.errors import InputIssue

#: Longest single element (characters) held while reading.
MAX_ELEMENT_CHARS = 16 << 20
#: Bytes read at a time.
CHUNK_BYTES = 1 << 20
_WHITESPACE = " \t\n\r"


class _Text:
    """The decoded text read so far from ``pos`` on, with the line and column of ``pos``."""

    def __init__(self, data: bytes | memoryview | IO[bytes], chunk_bytes: int):
        if isinstance(data, (bytes, bytearray, memoryview)):
            view = memoryview(data)
            self.chunks: Iterator[bytes] = (bytes(view[i:i + chunk_bytes]) for i in range(0, len(view), chunk_bytes))
        else:
            self.chunks = iter(lambda: data.read(chunk_bytes), b"")
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf, self.pos, self.eof = "", 0, False
        self.line, self.lead = 1, 0  # line of ``pos``; column (0-based) of ``buf[0]``

    def more(self) -> bool:
        """Append the next chunk (dropping what lies before ``pos``); False at the end of the input.

        Raises
        ------
        UnicodeDecodeError
        """
        if self.eof:
            return False
        raw = next(self.chunks, None)
        self.lead = self.column(self.pos) - 1
        if raw is None:
            self.eof = True
            self.buf, self.pos = self.buf[self.pos:] + self.decoder.decode(b"", final=True), 0
            return False
        self.buf, self.pos = self.buf[self.pos:] + self.decoder.decode(raw), 0
        return True

    def skip_space(self) -> bool:
        """Move past whitespace (counting lines); False when the input has ended."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _WHITESPACE:
                if buf[pos] == "\n":
                    self.line += 1
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return True
            if not self.more():
                return False

    def column(self, at: int) -> int:
        """1-based column of ``buf[at]``."""
        start = self.buf.rfind("\n", 0, at)
        return at - start if start >= 0 else at + self.lead + 1

    def advance(self, end: int) -> None:
        self.line += self.buf.count("\n", self.pos, end)
        self.pos = end


def iter_json_array(data: bytes | memoryview | IO[bytes], file: str = "<input>", *, allow_object: bool = False,
                    chunk_bytes: int = CHUNK_BYTES,
                    max_element_chars: int = MAX_ELEMENT_CHARS) -> Iterator[tuple[int, int, Any] | InputIssue]:
    """Stream the elements of a UTF-8 JSON array (a BOM is allowed).

    Parameters
    ----------
    data : bytes, memoryview or binary file
        The document; a file is read ``chunk_bytes`` at a time.
    file : str
        Name used in issues.
    allow_object : bool
        A document that is one JSON object (not an array) is read as an array of that one element.

    Yields
    ------
    (index, line, value) or InputIssue
        Each element with its 0-based index and the 1-based line where it starts; at the
        first problem (invalid UTF-8, invalid JSON, not an array, an element over
        ``max_element_chars``, nesting too deep for the parser) one :class:`InputIssue` with
        its line (and column), after which nothing more is read.  ``NaN`` and ``Infinity``
        are read as floats: the caller's validation decides about them.
    """
    text = _Text(data, chunk_bytes)
    scanner = json.JSONDecoder()
    index = 0

    def issue(message: str, at: int | None = None, line: int | None = None) -> InputIssue:
        return InputIssue(file, message, line=text.line if line is None else line,
                          column=None if at is None else text.column(at), kind="json")

    def element() -> Iterator[tuple[int, int, Any] | InputIssue]:
        """The element at ``pos``: yields it, or yields an issue and returns False."""
        while True:
            try:
                value, end = scanner.raw_decode(text.buf, text.pos)
            except json.JSONDecodeError as exc:
                if len(text.buf) - text.pos > max_element_chars:
                    yield issue(f"element {index} is longer than {max_element_chars:,} characters")
                    return
                if not text.eof:  # perhaps only incomplete: read on (the buffer moves), then decode again
                    text.more()
                    continue
                yield issue(f"invalid JSON in element {index}: {exc.msg}", exc.pos,
                            text.line + text.buf.count("\n", text.pos, exc.pos))
                return
            except RecursionError:
                yield issue(f"element {index} is nested too deeply to be read")
                return
            if end == len(text.buf) and not text.eof:  # a number may go on in the next chunk
                text.more()
                continue
            yield index, text.line, value
            text.advance(end)
            return

    try:
        if not text.skip_space():
            yield issue("the file is empty (expected a JSON array)")
            return
        if text.buf[text.pos] == "{" and allow_object:
            for got in element():
                yield got
                if isinstance(got, InputIssue):
                    return
            if text.skip_space():
                yield issue("text after the end of the JSON object", text.pos)
            return
        if text.buf[text.pos] != "[":
            yield issue(f"expected a JSON array ('['), found {text.buf[text.pos]!r}", text.pos)
            return
        text.pos += 1
        while True:
            if not text.skip_space():
                yield issue("the JSON array is not closed (the file ends inside it)")
                return
            if text.buf[text.pos] == "]":
                text.pos += 1
                if text.skip_space():
                    yield issue("text after the end of the JSON array", text.pos)
                return
            if index:
                if text.buf[text.pos] != ",":
                    yield issue(f"expected ',' or ']' after element {index - 1}, found {text.buf[text.pos]!r}",
                                text.pos)
                    return
                text.pos += 1
                if not text.skip_space():
                    yield issue("the JSON array is not closed (the file ends inside it)")
                    return
            for got in element():
                yield got
                if isinstance(got, InputIssue):
                    return
            index += 1
    except UnicodeDecodeError:
        yield InputIssue(file, f"not valid UTF-8 (at or after line {text.line}); reading stopped", line=text.line,
                         kind="decode")
