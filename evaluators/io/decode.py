"""Decode bytes as UTF-8, UTF-8 with BOM or GB18030, saying which was used."""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.io.errors import InputError, InputIssue

#: Encodings tried, in order.  GB18030 is a superset of GBK/GB2312 and decodes any
#: byte string that is valid in those, so it comes last.
ENCODINGS = ("utf-8", "gb18030")


@dataclass(frozen=True)
class DecodedText:
    """Text decoded from bytes.

    Attributes
    ----------
    text : str
        The decoded text, without a byte-order mark.
    encoding : str
        ``"utf-8"``, ``"utf-8-sig"`` (UTF-8 with a BOM) or ``"gb18030"``.
    """

    text: str
    encoding: str

    @property
    def is_plain_utf8(self) -> bool:
        """True when the input was UTF-8 without a BOM (the UI mentions other encodings)."""
        return self.encoding == "utf-8"


def decode_bytes(data: bytes | memoryview, file: str = "<input>") -> DecodedText:
    """Decode ``data`` trying UTF-8 (with or without BOM), then GB18030.

    Parameters
    ----------
    data : bytes or memoryview
        Raw file content.
    file : str
        Name used in error messages.

    Returns
    -------
    DecodedText

    Raises
    ------
    InputError
        If no supported encoding decodes the bytes; the issue names the first bad
        byte offset under UTF-8.
    """
    if bytes(data[:3]) == b"\xef\xbb\xbf":  # ``str(..., encoding)``: bytes or a memoryview, decoded without a copy
        try:
            return DecodedText(str(data[3:], "utf-8"), "utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(
                InputIssue(file, f"starts with a UTF-8 BOM but byte {exc.start + 3} is not valid UTF-8", kind="decode")
            ) from exc
    try:
        return DecodedText(str(data, "utf-8"), "utf-8")
    except UnicodeDecodeError as utf8_error:
        try:
            return DecodedText(str(data, "gb18030"), "gb18030")
        except UnicodeDecodeError:
            raise InputError(
                InputIssue(
                    file,
                    f"cannot be decoded as UTF-8 (bad byte at offset {utf8_error.start}) or GB18030; "
                    "save it as UTF-8",
                    kind="decode",
                )
            ) from utf8_error
