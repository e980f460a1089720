"""Compact storage of per-record QA results, so that a file of a million records fits in memory.

A :class:`RecordStore` is a read-only sequence of
:class:`~evaluators.qa.evaluate.QARecordResult`.  For a streamed JSONL file it keeps, per
record, where its JSON line is (an offset into the input, which the caller keeps anyway, or
else a copy of the line) and the values every aggregate needs (status, language, group,
verdicts, EM, F1) in compact columns; a full record is re-derived from its line on access,
by the same function that scored it, so it is identical to the one that was counted.
Records of other inputs (CSV, JSON arrays) are kept as they are.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from evaluators.io.readers import loads_json_line

#: Values of the small-vocabulary columns, coded as one byte each (0 = None).
_CODES: dict[str, list[str | None]] = {
    "status": [None, "scored", "missing_prediction", "missing_gt", "gold_unparsed"],
    "lang": [None, "en", "zh"],
    "gold_verdict": [None],
    "predicted_verdict": [None],
}


class RecordStore(Sequence):
    """Per-record results of one file (see the module docstring).

    Parameters
    ----------
    rescore : callable
        ``rescore(data, index, line) -> QARecordResult``: the scoring function bound to the
        file's task, settings and group field; used to re-derive a record from its line.
    reader : callable, optional
        ``reader(offset, length) -> bytes`` reading a line back from the input; with it only
        offsets are kept, without it a copy of each line.

    Lines are UTF-8 JSON text (as :func:`evaluators.io.readers.iter_jsonl` gives them) and are
    parsed again by the same parser that read them (:func:`~evaluators.io.readers.loads_json_line`).
    """

    def __init__(self, rescore: Callable[[dict, int, int | None], Any],
                 reader: Callable[[int, int], bytes] | None = None):
        self._rescore = rescore
        self._reader = reader
        self._items: list[bytes | Any] = []
        self._offset = array("q")
        self._length = array("l")
        self._line = array("l")
        self._em = array("d")
        self._f1 = array("d")
        self._codes: dict[str, bytearray] = {name: bytearray() for name in _CODES}
        self._tables = {name: list(values) for name, values in _CODES.items()}
        self._index_of = {name: {v: i for i, v in enumerate(values)} for name, values in self._tables.items()}
        self._group = array("I")  # codes into self._tables["group"] (0 = None), in order of first appearance
        self._tables["group"] = [None]
        self._index_of["group"] = {None: 0}

    def _code(self, name: str, value: str | None) -> int:
        idx = self._index_of[name].get(value)
        if idx is None:
            idx = len(self._tables[name])
            self._tables[name].append(value)
            self._index_of[name][value] = idx
        return idx

    def append(self, result: Any, raw: bytes | None = None, offset: int | None = None) -> None:
        """Add a scored record; with ``raw`` (its JSON line, UTF-8) only the compact columns are kept.

        With a ``reader`` and the line's ``offset``, not even the line is kept.

        Parameters
        ----------
        result : QARecordResult
            The scored record (kept whole when ``raw`` is ``None``).
        raw : bytes, optional
            Its JSON line, UTF-8; the record is then re-derived from it on access.
        offset : int, optional
            Byte offset of the line in the input (used only with a ``reader``).
        """
        if raw is None:
            self._items.append(result)
            self._offset.append(-1)
            self._length.append(0)
            self._columns(result.line, result.exact_match, result.token_f1, result.status, result.lang,
                          result.gold_verdict, result.predicted_verdict, result.group)
            return
        self.append_values(raw, offset, result.line, result.exact_match, result.token_f1, result.status, result.lang,
                           result.gold_verdict, result.predicted_verdict, result.group)

    def append_values(self, raw: bytes, offset: int | None, line: int | None, exact_match: float | None,
                      token_f1: float | None, status: str, lang: str | None, gold_verdict: str | None,
                      predicted_verdict: str | None, group: str | None) -> None:
        """Add a streamed record by its JSON line (UTF-8) and the values the aggregates need (no result object).

        With a ``reader`` and the line's ``offset`` only the offset is kept, else a copy of the line.

        Parameters
        ----------
        raw : bytes-like
            The record's JSON line, UTF-8.
        offset : int or None
            Byte offset of the line in the input.
        line : int or None
            1-based line number in the file.
        exact_match, token_f1 : float or None
            The record's scores in [0, 1]; ``None`` when not scored.
        status : str
            ``scored``, ``missing_prediction``, ``missing_gt`` or ``gold_unparsed``.
        lang : {"en", "zh"} or None
            Rules the record was scored by.
        gold_verdict, predicted_verdict : str or None
            Fact-check verdict labels.
        group : str or None
            Value of the report's group field (the system).
        """
        if not isinstance(raw, bytes):
            raw = bytes(raw)  # bytearray / memoryview: a stored line is always ``bytes``
        if offset is not None and self._reader is not None:
            self._items.append(None)
            self._offset.append(offset)
            self._length.append(len(raw))
        else:
            self._items.append(raw)
            self._offset.append(-1)
            self._length.append(0)
        self._columns(line, exact_match, token_f1, status, lang, gold_verdict, predicted_verdict, group)

    def extend_lines(self, offsets: list[int], lengths: list[int], lines: list[int],
                     exact_match: list[float | None], token_f1: list[float | None], status: list[str],
                     lang: list[str | None], gold_verdict: list[str | None], predicted_verdict: list[str | None],
                     group: list[str | None]) -> None:
        """Add streamed records by their lines' offsets and lengths in the input (read back by the
        ``reader``) and the columns of :meth:`append_values`, one list entry per record.

        Parameters
        ----------
        offsets, lengths : list of int
            Byte offset and length of each record's line in the input, shape (n,).
        lines : list of int
            1-based line numbers, shape (n,).
        exact_match, token_f1, status, lang, gold_verdict, predicted_verdict, group : list
            One value per record, shape (n,) each, as in :meth:`append_values`.

        Raises
        ------
        ValueError
            The store has no ``reader``.
        """
        if self._reader is None:
            raise ValueError("records kept by offset need a reader")
        n = len(offsets)
        self._items.extend([None] * n)
        self._offset.extend(offsets)
        self._length.extend(lengths)
        self._line.extend(lines)
        nan = math.nan
        self._em.extend([nan if x is None else x for x in exact_match])
        self._f1.extend([nan if x is None else x for x in token_f1])
        for name, values in (("status", status), ("lang", lang), ("gold_verdict", gold_verdict),
                             ("predicted_verdict", predicted_verdict)):
            index_of = self._index_of[name]
            try:
                self._codes[name].extend(map(index_of.__getitem__, values))
            except KeyError:  # a value not seen yet: coded one by one
                self._codes[name].extend([index_of[v] if v in index_of else self._code(name, v) for v in values])
        index_of = self._index_of["group"]
        try:
            self._group.extend(map(index_of.__getitem__, group))
        except KeyError:
            self._group.extend([index_of[g] if g in index_of else self._code("group", g) for g in group])

    def _columns(self, line, exact_match, token_f1, status, lang, gold_verdict, predicted_verdict, group) -> None:
        self._line.append(line if line is not None else -1)
        self._em.append(math.nan if exact_match is None else exact_match)
        self._f1.append(math.nan if token_f1 is None else token_f1)
        codes, index_of = self._codes, self._index_of
        idx = index_of["status"].get(status)
        codes["status"].append(idx if idx is not None else self._code("status", status))
        idx = index_of["lang"].get(lang)
        codes["lang"].append(idx if idx is not None else self._code("lang", lang))
        idx = index_of["gold_verdict"].get(gold_verdict)
        codes["gold_verdict"].append(idx if idx is not None else self._code("gold_verdict", gold_verdict))
        idx = index_of["predicted_verdict"].get(predicted_verdict)
        codes["predicted_verdict"].append(idx if idx is not None else self._code("predicted_verdict", predicted_verdict))
        idx = index_of["group"].get(group)
        self._group.append(idx if idx is not None else self._code("group", group))

    def __len__(self) -> int:
        return len(self._items)

    def _get(self, i: int) -> Any:
        item = self._items[i]
        if item is None:
            item = self._reader(self._offset[i], self._length[i])
        if isinstance(item, bytes):
            line = self._line[i]
            return self._rescore(loads_json_line(item), i, None if line < 0 else line)
        return item

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._get(k) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("record index out of range")
        return self._get(i)

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self._get(i)

    def column(self, name: str) -> list:
        """Values of one compact column for every record, without re-deriving records.

        Parameters
        ----------
        name : str
            ``status``, ``lang``, ``gold_verdict``, ``predicted_verdict``, ``group``,
            ``exact_match``, ``token_f1`` (None where not scored) or ``line`` (None where unknown).

        Returns
        -------
        list
            One value per record, in file order.

        Raises
        ------
        KeyError
            Another name.
        """
        if name in self._codes:
            table = self._tables[name]
            return [table[c] for c in self._codes[name]]
        if name in ("exact_match", "token_f1"):
            values = self._em if name == "exact_match" else self._f1
            return [None if math.isnan(v) else v for v in values]
        if name == "group":
            table = self._tables["group"]
            return [table[c] for c in self._group]
        if name == "line":
            return [None if v < 0 else v for v in self._line]
        raise KeyError(f"no column {name!r}")

    def array(self, name: str) -> tuple[np.ndarray, list | None]:
        """One compact column as a numpy array, without a Python object per record.

        Parameters
        ----------
        name : str
            ``exact_match`` or ``token_f1`` (float64, NaN where not scored), or ``status``, ``lang``,
            ``gold_verdict``, ``predicted_verdict``, ``group`` (integer codes).

        Returns
        -------
        (values, table) : (numpy.ndarray shape (n,), list or None)
            The values in file order (a view: do not write to it); for a coded column the value of each code
            (code 0 is ``None``), else ``None``.

        Raises
        ------
        KeyError
            Another name.
        """
        if name in ("exact_match", "token_f1"):
            return np.frombuffer(self._em if name == "exact_match" else self._f1, dtype=float), None
        if name == "group":
            return np.frombuffer(self._group, dtype=np.uint32), list(self._tables["group"])
        if name in self._codes:
            return np.frombuffer(bytes(self._codes[name]), dtype=np.uint8), list(self._tables[name])
        raise KeyError(f"no column {name!r}")

    def raw_text(self, i: int) -> str | None:
        """The record's JSON line as text (streamed inputs); ``None`` for records kept whole.

        Parameters
        ----------
        i : int
            0-based record index (not negative).

        Returns
        -------
        str or None
            Decoded as UTF-8, undecodable bytes replaced.
        """
        item = self._items[i]
        if item is None:
            item = self._reader(self._offset[i], self._length[i])
        return item.decode("utf-8", "replace") if isinstance(item, bytes) else None

    def _matches(self, i: int, needle: str) -> bool:
        """Whether casefolded ``needle`` occurs in the record's id, question, a gold answer or its prediction.

        For a streamed record the JSON line is looked at first: a line without backslashes
        holds every string value verbatim, so when the needle is not in the line the record
        cannot match and is not re-derived (a needle with ``#`` may match a made-up id such as
        ``#12``, which is not in the line, so it always re-derives).
        """
        raw = self.raw_text(i)
        if raw is not None and "\\" not in raw and "#" not in needle and needle not in raw.casefold():
            return False
        r = self._get(i)
        fields = (r.id, r.question, *r.gold_answers, r.prediction)
        return any(needle in str(f).casefold() for f in fields if f is not None)

    def select(self, *, statuses: set[str] | None = None, langs: set[str | None] | None = None,
               predicted_verdicts: set[str] | None = None, errors_only: bool = False, needle: str = "",
               limit: int | None = None) -> tuple[list[int], int]:
        """Indices of the records passing the filters (the first ``limit``) and how many pass.

        ``needle`` is searched case-insensitively in each record's id, question, gold answers
        (each on its own) and prediction, for every kind of input.  Only records whose line
        may contain it are re-derived; the other filters read the compact columns.

        Parameters
        ----------
        statuses : set of str, optional
            Statuses kept; ``None``: all.
        langs : set of (str or None), optional
            Languages kept; a record without a language passes any; ``None``: all.
        predicted_verdicts : set of str, optional
            Predicted verdicts kept; ``None``: all.
        errors_only : bool
            Keep only records with an EM below 1.
        needle : str
            Searched text (stripped, casefolded); ``""``: no search.
        limit : int, optional
            Indices returned at most.

        Returns
        -------
        (indices, n) : (list of int, int)
            The first ``limit`` matching record indices in file order, and how many match.
        """
        status_t, lang_t = self._tables["status"], self._tables["lang"]
        status_c, lang_c, em = self._codes["status"], self._codes["lang"], self._em
        pv_t, pv_c = self._tables["predicted_verdict"], self._codes["predicted_verdict"]
        low = needle.strip().casefold()
        out: list[int] = []
        n = 0
        for i in range(len(self._items)):
            if statuses is not None and status_t[status_c[i]] not in statuses:
                continue
            lang = lang_t[lang_c[i]]
            if langs is not None and lang is not None and lang not in langs:
                continue
            if predicted_verdicts is not None and pv_t[pv_c[i]] not in predicted_verdicts:
                continue
            if errors_only and not (em[i] == em[i] and em[i] < 1):
                continue
            if low and not self._matches(i, low):
                continue
            n += 1
            if limit is None or len(out) < limit:
                out.append(i)
        return out, n

    def sums(self, by: str | None = None) -> dict[Any, tuple[int, float, float]]:
        """``{key: (n_scored, sum of EM, sum of F1)}`` over records with a score, without lists.

        ``by``: ``None`` (one key, ``None``), ``"lang"`` or ``"group"``.  The sums add the
        records in file order, one after the other (a running sum, ``numpy.cumsum``), so they
        are the same floats as a plain loop's.

        Parameters
        ----------
        by : {None, "lang", "group"}
            The key to sum by.

        Returns
        -------
        dict
            ``{key: (n_scored, EM sum, F1 sum)}``; ``{}`` when no record is scored.

        Raises
        ------
        KeyError
            Another ``by``.
        """
        em = np.frombuffer(self._em, dtype=float)
        f1 = np.frombuffer(self._f1, dtype=float)
        scored = np.flatnonzero(~np.isnan(em))
        if not len(scored):
            return {}
        if by is None:
            return {None: (len(scored), float(np.cumsum(em[scored])[-1]), float(np.cumsum(f1[scored])[-1]))}
        codes, names = self._keys(by)
        keyed = codes[scored]
        order = np.argsort(keyed, kind="stable")  # by key, file order kept within a key
        rows, keys = scored[order], keyed[order]
        cuts = np.flatnonzero(np.diff(keys)) + 1
        out = {}
        for part in np.split(np.arange(len(rows)), cuts):
            idx = rows[part]
            out[names[int(keys[part[0]])]] = (len(idx), float(np.cumsum(em[idx])[-1]), float(np.cumsum(f1[idx])[-1]))
        return out

    def _keys(self, by: str) -> tuple[np.ndarray, list]:
        """Per record the code of its ``lang`` or ``group`` value, and the values by code."""
        if by == "lang":
            return np.frombuffer(bytes(self._codes["lang"]), dtype=np.uint8), self._tables["lang"]
        if by == "group":
            return np.frombuffer(self._group, dtype=np.uint32), self._tables["group"]
        raise KeyError(f"no key {by!r}")

    def scores(self, by: str | None = None) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
        """``{key: (EM values, F1 values)}`` of the scored records, in file order, as float arrays (for intervals).

        Parameters
        ----------
        by : {None, "lang", "group"}
            As :meth:`sums`.

        Returns
        -------
        dict
            ``{key: (em, f1)}``, two float64 arrays of shape (n_key,) with values in [0, 1];
            ``{}`` when no record is scored.

        Raises
        ------
        KeyError
            Another ``by``.
        """
        em = np.frombuffer(self._em, dtype=float)
        f1 = np.frombuffer(self._f1, dtype=float)
        scored = np.flatnonzero(~np.isnan(em))
        if not len(scored):
            return {}
        if by is None:
            return {None: (em[scored], f1[scored])}
        codes, names = self._keys(by)
        keyed = codes[scored]
        order = np.argsort(keyed, kind="stable")  # by key, file order kept within a key
        rows, keys = scored[order], keyed[order]
        cuts = np.flatnonzero(np.diff(keys)) + 1
        return {names[int(keys[part[0]])]: (em[rows[part]], f1[rows[part]])
                for part in np.split(np.arange(len(rows)), cuts)}

    def __eq__(self, other) -> bool:  # sequences of records compare by content
        if isinstance(other, (RecordStore, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:  # noqa: D105 - stores are identity-hashed
        return id(self)
