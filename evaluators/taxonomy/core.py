"""Label vocabularies and canonical labels.

Every label field of JSON v3 (relationship levels 1 and 2, sentiment, action category,
type, context, status, function, character archetype) has a :class:`Vocabulary`.  A
raw label is compared through :meth:`Vocabulary.canonical`, which accepts the code
(``physical``), the English name (``Physical & Conflict``), the Chinese name
(``物理对抗与交互``), the bilingual form (``家庭与亲缘(Family & Kinship)``) and listed
aliases (``master_and_servant``), ignoring case, spaces, punctuation and underscores.
A label outside the vocabulary is still compared (by its normalized key) but is
reported as invalid, so a validity rate can be shown per field.

The project ships its own vocabulary files in ``evaluators/taxonomy/data/`` (bilingual,
written for EvalBoard from the annotation guides' facts).  Users may replace the
relationship and sentiment vocabularies with files in the guides' CSV layout, see
:func:`load_relationship_csv` and :func:`load_sentiment_csv`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources

from evaluators.io.decode import decode_bytes
from evaluators.text.normalize import label_key

#: The label fields of JSON v3 that have a vocabulary.
FIELDS = (
    "relationship_level1",
    "relationship_level2",
    "sentiment",
    "action_category",
    "action_type",
    "action_context",
    "action_status",
    "action_function",
    "archetype",
)

_PAREN = re.compile(r"^\s*(.*?)\s*[(（]\s*(.*?)\s*[)）]\s*$")


@dataclass(frozen=True)
class Label:
    """A raw label resolved against a vocabulary.

    Attributes
    ----------
    raw : str
        The label as written in the file.
    value : str
        The canonical code if ``valid``, else the normalized key of ``raw`` (so two
        spellings of the same unknown label still compare equal).  ``""`` for an empty label.
    valid : bool
        Whether the label is in the vocabulary.  Empty labels are neither valid nor invalid:
        check :attr:`empty` first.
    """

    raw: str
    value: str
    valid: bool

    @property
    def empty(self) -> bool:
        return self.value == ""


@dataclass
class Entry:
    """One vocabulary entry: canonical code, display names, aliases and extra attributes."""

    code: str
    en: str = ""
    zh: str = ""
    aliases: tuple[str, ...] = ()
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def display(self) -> str:
        """``code`` plus the Chinese name when there is one: ``parent_child (父母子女)``."""
        return f"{self.code} ({self.zh})" if self.zh else self.code


class CanonicalMap(dict):
    """``raw label -> canonical value`` with the lookup computed once per distinct label.

    A plain ``dict`` subclass so that hits are C-speed lookups in hot loops; misses call
    :meth:`Vocabulary.canonical`.  Bounded: it is cleared past 50,000 entries.
    """

    __slots__ = ("vocab",)

    def __init__(self, vocab: "Vocabulary"):
        super().__init__()
        self.vocab = vocab

    def __missing__(self, raw):
        if len(self) > 50000:
            self.clear()
        value = self.vocab.canonical(raw).value
        self[raw] = value
        return value


class Vocabulary:
    """The allowed labels of one field.

    Parameters
    ----------
    name : str
        Field name (one of :data:`FIELDS` for the default taxonomy).
    entries : list of Entry
    source : str
        Where the entries came from (shown in signatures).

    Raises
    ------
    ValueError
        If two entries claim the same normalized key (an ambiguous vocabulary).
    """

    def __init__(self, name: str, entries: list[Entry], source: str):
        self.name = name
        self.entries = {e.code: e for e in entries}
        self.source = source
        self._keys: dict[str, str] = {}
        for e in entries:
            for spelling in (e.code, e.en, e.zh, *e.aliases):
                self._add_key(spelling, e.code)
            if e.zh and e.en:
                self._add_key(f"{e.zh}({e.en})", e.code)
        #: ``values[raw]`` is the canonical value of ``raw`` (fast path of :meth:`canonical`).
        self.values = CanonicalMap(self)

    def _add_key(self, spelling: str, code: str) -> None:
        key = label_key(spelling) if spelling else ""
        if not key:
            return
        other = self._keys.get(key)
        if other is not None and other != code:
            raise ValueError(f"vocabulary {self.name!r}: {spelling!r} is claimed by both {other!r} and {code!r}")
        self._keys[key] = code

    def __contains__(self, label: str) -> bool:
        return self.canonical(label).valid

    def __len__(self) -> int:
        return len(self.entries)

    def canonical(self, label: str | None) -> Label:
        """Resolve a raw label; see :class:`Label`.  ``None`` and blanks give an empty label.

        Parameters
        ----------
        label : str or None
            A label as written (any case, spacing, ``中文(English)`` form; non-strings are turned
            into text).

        Returns
        -------
        Label
            ``value`` the canonical code when ``valid``, else the label's comparison key.
        """
        if label is None:
            label = ""
        if not isinstance(label, str):
            label = str(label)
        key = label_key(label)
        code = self._keys.get(key)
        if code is None and key:
            m = _PAREN.match(label)
            if m:  # "家庭与亲缘(Family & Kinship)", "adversarial (enemy)": try each part
                for part in (m.group(1), m.group(2)):
                    code = self._keys.get(label_key(part))
                    if code is not None:
                        break
        return Label(label, code if code is not None else key, code is not None)

    def display(self, value: str) -> str:
        """Human-readable form of a canonical value (unknown values are returned as is).

        Parameters
        ----------
        value : str
            A canonical code.

        Returns
        -------
        str
        """
        e = self.entries.get(value)
        return e.display if e else value


class Taxonomy:
    """Vocabularies for all label fields plus sentiment polarity.

    Use :func:`default_taxonomy` for the shipped files, and :meth:`with_vocabularies`
    to replace some fields with user files.
    """

    def __init__(self, vocabularies: dict[str, Vocabulary]):
        missing = [f for f in FIELDS if f not in vocabularies]
        if missing:
            raise ValueError(f"taxonomy lacks vocabularies for {missing}")
        self.vocabularies = dict(vocabularies)

    def __getitem__(self, field_name: str) -> Vocabulary:
        return self.vocabularies[field_name]

    def canonical(self, field_name: str, label: str | None) -> Label:
        """Resolve ``label`` in the vocabulary of ``field_name``.

        Parameters
        ----------
        field_name : str
            One of :data:`FIELDS` (``archetype``, ``sentiment``, ``relationship_level1`` ...).
        label : str or None

        Returns
        -------
        Label

        Raises
        ------
        KeyError
            An unknown field.
        """
        return self.vocabularies[field_name].canonical(label)

    @cached_property
    def polarity_of_value(self) -> dict[str, str | None]:
        """Canonical sentiment value -> polarity (``positive``/``neutral``/``negative``), computed once."""
        return {code: (e.attrs.get("polarity") or None) for code, e in self.vocabularies["sentiment"].entries.items()}

    def polarity(self, sentiment: str | None) -> str | None:
        """Polarity (``positive``, ``neutral``, ``negative``) of a sentiment label; ``None`` if unknown.

        Parameters
        ----------
        sentiment : str or None
            A sentiment label as written.

        Returns
        -------
        str or None
        """
        lab = self.vocabularies["sentiment"].canonical(sentiment)
        return self.polarity_of_value[lab.value] if lab.valid else None

    def level1_of(self, level2: str | None) -> str | None:
        """Level-1 code that a level-2 relationship tag belongs to, if known.

        Parameters
        ----------
        level2 : str or None
            A level-2 tag as written.

        Returns
        -------
        str or None
        """
        lab = self.vocabularies["relationship_level2"].canonical(level2)
        if not lab.valid:
            return None
        return self.vocabularies["relationship_level2"].entries[lab.value].attrs.get("level1") or None

    def with_vocabularies(self, **replacements: Vocabulary) -> Taxonomy:
        """A copy with some fields' vocabularies replaced.

        Parameters
        ----------
        **replacements : Vocabulary
            Field name -> its new vocabulary (a user file).

        Returns
        -------
        Taxonomy
        """
        vocab = dict(self.vocabularies)
        vocab.update(replacements)
        return Taxonomy(vocab)

    @property
    def signature(self) -> str:
        """Where each vocabulary came from, e.g. ``taxonomy=evalboard/1`` or with user files named."""
        sources = sorted({v.source for v in self.vocabularies.values()})
        return "taxonomy=" + "+".join(sources)


def _split_aliases(cell: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in (cell or "").split("|") if a.strip())


def _read_vocab_csv(text: str, name: str, source: str) -> Vocabulary:
    reader = csv.DictReader(io.StringIO(text))
    entries = []
    for row in reader:
        code = (row.pop("code", "") or "").strip()
        if not code:
            continue
        entries.append(
            Entry(
                code=code,
                en=(row.pop("en", "") or "").strip(),
                zh=(row.pop("zh", "") or "").strip(),
                aliases=_split_aliases(row.pop("aliases", "")),
                attrs={k: (v or "").strip() for k, v in row.items() if k},
            )
        )
    return Vocabulary(name, entries, source)


DEFAULT_SOURCE = "evalboard/1"


@lru_cache(maxsize=1)
def default_taxonomy() -> Taxonomy:
    """The vocabularies shipped in ``evaluators/taxonomy/data`` (cached)."""
    base = resources.files("evaluators.taxonomy") / "data"
    vocabs = {}
    for name in FIELDS:
        text = (base / f"{name}.csv").read_text(encoding="utf-8")
        vocabs[name] = _read_vocab_csv(text, name, DEFAULT_SOURCE)
    return Taxonomy(vocabs)


def _user_source(file: str, data: bytes) -> str:
    return f"user:{file}#{hashlib.sha1(data).hexdigest()[:8]}"


def _csv_rows(data: bytes, file: str, what: str) -> list[list[str]]:
    """Rows of a user's CSV vocabulary (any of the supported encodings); ValueError when empty."""
    rows = list(csv.reader(io.StringIO(decode_bytes(data, file).text)))
    if not rows:
        raise ValueError(f"{file}: empty {what} file")
    return rows


def _find_column(header: list[str], *needles: str) -> int | None:
    for i, h in enumerate(header):
        low = h.casefold()
        if any(n.casefold() in low for n in needles):
            return i
    return None


def load_relationship_csv(data: bytes, file: str = "relationship.csv") -> tuple[Vocabulary, Vocabulary]:
    """Read a relationship vocabulary in the annotation guide's layout.

    The file has a level-1 column (``一级分类 (Level 1)`` or ``Level 1``) that is filled only
    on the first row of each group, and a level-2 column (``二级标签 (Level 2 Tag)`` or
    ``Level 2 Tag``); other columns (definition, context) are kept as attributes.
    Level-1 cells such as ``家庭与亲缘(Family & Kinship)`` yield code ``Family & Kinship``
    with Chinese name ``家庭与亲缘``.  Empty level-1 cells inherit the previous row's value.

    Parameters
    ----------
    data : bytes
        The CSV file (UTF-8, UTF-8 with BOM or GB18030: :func:`evaluators.io.decode.decode_bytes`).
    file : str
        Its name (the vocabularies' source, and in messages).

    Returns
    -------
    (level1, level2) : tuple of Vocabulary

    Raises
    ------
    ValueError
        If the level columns cannot be found, naming the file and the header read.
    """
    rows = _csv_rows(data, file, "relationship")
    header = rows[0]
    i1 = _find_column(header, "level 1", "一级")
    i2 = _find_column(header, "level 2", "二级")
    if i1 is None or i2 is None:
        raise ValueError(f"{file}: expected columns 'Level 1' and 'Level 2 Tag', found {header}")
    source = _user_source(file, data)
    level1: dict[str, Entry] = {}
    level2: list[Entry] = []
    current = None
    for row in rows[1:]:
        if len(row) <= max(i1, i2):
            continue
        cell1 = row[i1].strip()
        if cell1:
            m = _PAREN.match(cell1)
            if m and re.search(r"[A-Za-z]", m.group(2)):
                zh, en = m.group(1), m.group(2)
            else:
                zh, en = ("", cell1) if re.search(r"[A-Za-z]", cell1) else (cell1, "")
            code = en or zh
            current = code
            level1.setdefault(code, Entry(code=code, zh=zh if en else "", en=""))
        tag = row[i2].strip()
        if tag and current:
            attrs = {"level1": current}
            for j, h in enumerate(header):
                if j not in (i1, i2) and j < len(row) and h.strip():
                    attrs[h.strip()] = row[j].strip()
            level2.append(Entry(code=tag, attrs=attrs))
    return (Vocabulary("relationship_level1", list(level1.values()), source),
            Vocabulary("relationship_level2", level2, source))


def _polarity_from_text(text: str) -> str:
    low = text.casefold()
    if "positive" in low or "正" in low:
        return "positive"
    if "negative" in low or "负" in low:
        return "negative"
    if "neutral" in low or "中" in low:
        return "neutral"
    return ""


def load_sentiment_csv(data: bytes, file: str = "sentiment.csv") -> Vocabulary:
    """Read a sentiment vocabulary in the annotation guide's layout.

    Columns: a tag column (``标签 (Tag)`` or ``Tag``), optionally a Chinese name
    (``中文名称``) or English name, and a polarity column (``情感极性`` or ``Polarity``) whose
    text (``High Positive``, ``Negative (Passive)`` ...) is reduced to positive /
    neutral / negative.

    Parameters
    ----------
    data : bytes
        The CSV file (UTF-8, UTF-8 with BOM or GB18030: :func:`evaluators.io.decode.decode_bytes`).
    file : str
        Its name (the vocabulary's source, and in messages).

    Returns
    -------
    Vocabulary

    Raises
    ------
    ValueError
        If the tag column cannot be found.
    """
    rows = _csv_rows(data, file, "sentiment")
    header = rows[0]
    it = _find_column(header, "tag", "标签")
    ip = _find_column(header, "polarity", "极性")
    izh = _find_column(header, "中文")
    ien = _find_column(header, "english name")
    if it is None:
        raise ValueError(f"{file}: expected a 'Tag' column, found {header}")
    entries = []
    for row in rows[1:]:
        if len(row) <= it or not row[it].strip():
            continue
        attrs = {}
        if ip is not None and ip < len(row):
            attrs["polarity"] = _polarity_from_text(row[ip])
            attrs["polarity_detail"] = row[ip].strip()
        entries.append(
            Entry(
                code=row[it].strip(),
                zh=row[izh].strip() if izh is not None and izh < len(row) else "",
                en=row[ien].strip() if ien is not None and ien < len(row) else "",
                attrs=attrs,
            )
        )
    return Vocabulary("sentiment", entries, _user_source(file, data))
