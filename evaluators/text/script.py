"""Traditional <-> Simplified Chinese conversion (OpenCC), optional, with offsets back to the original.

國家 and 国家 are the same words; without conversion every metric scores them as different
text.  Conversion is off by default; when asked for, the OpenCC configuration is named
(``t2s``, ``tw2s``, ``hk2s``, ``s2t``, ``s2tw``, ``s2twp``, ``tw2sp`` ...) and written into
every signature, because configurations disagree: ``t2s`` keeps 著 in 看著 while ``tw2s``
gives 看着 (OpenCC issue #555), and the phrase configurations (``s2twp``, ``tw2sp``) replace
words (软件 -> 軟體, U盘 -> 隨身碟), which can change the text's length.

Package: ``opencc`` (the official OpenCC bindings, BYVoid/OpenCC; manylinux/macOS/Windows
wheels with the dictionaries inside, no compiler or system library needed).
``opencc-python-reimplemented`` also installs (pure Python) but has had no release since
2022 and lags the dictionaries; the official package is maintained with OpenCC itself.

Offsets: :func:`convert_with_offsets` returns a :class:`Converted` with an exact offset map.
The text is converted in pieces cut at the given ``keep`` offsets (the span boundaries of a
narrative file), so no phrase conversion runs across a boundary and every boundary has an
exact image; inside a piece whose length changed, positions are aligned by comparing the
phrase conversion with character-by-character conversion (equal runs map one to one; a
replaced run maps its ends exactly).  ``to_original(to_converted(span)) == span`` for every
span whose ends are in ``keep`` (tested on 1,000 random spans).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Iterable

#: OpenCC configurations offered (the ``.json`` configs of OpenCC, without the suffix).
SCRIPT_CONFIGS: tuple[str, ...] = ("t2s", "tw2s", "hk2s", "tw2sp", "s2t", "s2tw", "s2hk", "s2twp", "t2tw", "t2hk",
                                   "tw2t", "hk2t")

_lock = threading.Lock()


class ScriptConversionUnavailable(ImportError):
    """OpenCC is not installed (``pip install opencc``)."""


def opencc_version() -> str:
    """Installed OpenCC package version (``"missing"`` if not installed)."""
    try:
        from importlib.metadata import version

        return version("opencc")
    except Exception:
        return "missing"


def check_config(config: str) -> str:
    """``config`` if it is a known OpenCC configuration (``.json`` suffix dropped).

    Parameters
    ----------
    config : str
        ``"t2s"``, ``"tw2s.json"`` ...

    Returns
    -------
    str

    Raises
    ------
    ValueError
        Unknown configuration; the message lists the known ones.
    """
    name = config[:-5] if config.endswith(".json") else config
    if name not in SCRIPT_CONFIGS:
        raise ValueError(f"unknown script conversion {config!r}; known: {', '.join(SCRIPT_CONFIGS)}")
    return name


@lru_cache(maxsize=None)
def _converter(config: str):
    try:
        import opencc
    except ImportError as exc:  # pragma: no cover - opencc is a requirement
        raise ScriptConversionUnavailable("script conversion needs OpenCC: pip install opencc") from exc
    return opencc.OpenCC(f"{check_config(config)}.json")


@lru_cache(maxsize=65536)
def _convert_cached(text: str, config: str) -> str:
    conv = _converter(config)
    with _lock:  # the bindings' converter is not documented as thread-safe
        return conv.convert(text)


def convert(text: str, config: str | None) -> str:
    """``text`` converted with OpenCC configuration ``config`` (``None`` or ``""``: unchanged).

    Examples
    --------
    >>> convert("國家", "t2s")
    '国家'
    >>> convert("看著", "t2s"), convert("看著", "tw2s")
    ('看著', '看着')
    """
    if not config or not text:
        return text
    return _convert_cached(text, check_config(config))


@dataclass(frozen=True)
class Converted:
    """A converted text and its exact offset map.

    Attributes
    ----------
    original, text : str
        The text before and after conversion.
    config : str
        OpenCC configuration.
    forward : tuple of int
        ``len(original) + 1`` values: the converted offset of each original offset (non-decreasing).
    backward : tuple of int
        ``len(text) + 1`` values: the original offset of each converted offset (non-decreasing).
    """

    original: str
    text: str
    config: str
    forward: tuple[int, ...]
    backward: tuple[int, ...]

    def to_converted(self, start: int, end: int) -> tuple[int, int]:
        """A half-open span of the original text in converted offsets.

        Parameters
        ----------
        start, end : int
            Offsets into :attr:`original`, ``0 <= start <= end <= len(original)``.

        Returns
        -------
        (int, int)
        """
        return self.forward[start], self.forward[end]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """A half-open span of the converted text in original offsets.

        Parameters
        ----------
        start, end : int
            Offsets into :attr:`text`, ``0 <= start <= end <= len(text)``.

        Returns
        -------
        (int, int)
        """
        return self.backward[start], self.backward[end]

    @property
    def changed(self) -> bool:
        return self.text != self.original


def _align(piece: str, out: str, config: str, fwd: list[int], bwd: list[int], i0: int, j0: int) -> None:
    """Append the offset maps of one piece (``piece`` at ``i0`` converted to ``out`` at ``j0``), ends excluded."""
    if len(piece) == len(out):
        fwd.extend(range(j0, j0 + len(out)))
        bwd.extend(range(i0, i0 + len(piece)))
        return
    # character-by-character conversion keeps length almost always; align the phrase output with it
    charwise = "".join(convert(ch, config) for ch in piece)
    # position in charwise of each original character
    starts, pos = [], 0
    for ch in piece:
        starts.append(pos)
        pos += len(convert(ch, config))
    starts.append(pos)
    cw_to_orig = [0] * (len(charwise) + 1)
    for k in range(len(piece)):
        for q in range(starts[k], starts[k + 1]):
            cw_to_orig[q] = k
    cw_to_orig[len(charwise)] = len(piece)
    b = [0] * (len(out) + 1)  # out -> original (local), non-decreasing
    for tag, a1, a2, b1, b2 in SequenceMatcher(None, charwise, out, autojunk=False).get_opcodes():
        for q in range(b1, b2):  # an equal run one to one, a replaced or inserted run onto its start
            b[q] = cw_to_orig[a1 + (q - b1)] if tag == "equal" else cw_to_orig[a1]
    b[len(out)] = len(piece)
    f = [-1] * (len(piece) + 1)  # original -> out: the first converted offset mapping back to it
    for q in range(len(out), -1, -1):
        f[b[q]] = q
    for k in range(len(piece), -1, -1):  # an offset inside a shortened run: the end of the run's image
        if f[k] < 0:
            f[k] = f[k + 1]
    fwd.extend(j0 + x for x in f[:-1])
    bwd.extend(i0 + x for x in b[:-1])


def convert_with_offsets(text: str, config: str, keep: Iterable[int] = ()) -> Converted:
    """Convert ``text`` with OpenCC and map offsets both ways exactly at the ``keep`` offsets.

    Parameters
    ----------
    text : str
        Original text.
    config : str
        OpenCC configuration (see :data:`SCRIPT_CONFIGS`).
    keep : iterable of int
        Offsets (in ``[0, len(text)]``) that must map exactly: the text is converted in pieces
        cut there, so no phrase conversion crosses them.

    Returns
    -------
    Converted
        ``to_original(*to_converted(s, e)) == (s, e)`` for ``s``, ``e`` in ``keep`` (or 0 / len).
    """
    config = check_config(config)
    cuts = sorted({0, len(text), *(k for k in keep if 0 <= k <= len(text))})
    fwd: list[int] = []
    bwd: list[int] = []
    parts: list[str] = []
    j = 0
    for a, b in zip(cuts, cuts[1:]):
        piece = text[a:b]
        out = _converter(config).convert(piece) if piece else ""
        _align(piece, out, config, fwd, bwd, a, j)
        parts.append(out)
        j += len(out)
    fwd.append(j)
    bwd.append(len(text))
    return Converted(text, "".join(parts), config, tuple(fwd), tuple(bwd))
