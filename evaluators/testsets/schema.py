"""Keyword-scored test sets: file schema (pydantic v2), the 1-5 human rubric, loading with located errors.

Single-turn sets (``factual_qa.json``, ``relation_qa.json``, ``event_tracking.json``)::

    {"version", "description", "items": [{"id", "category", "difficulty", "question",
      "expected_answer", "source": {"file", "line_range": [start, end]}, "keywords", "notes"}]}

Multi-turn sets (``multi_turn.json``)::

    {"version", "description", "items": [{"id", "scenario", "turns": [{"turn", "user",
      "expected_points", "requires_context"}]}]}

``expected_points`` entries are strings, or objects ``{"point": ..., "keywords": [...]}``.
Each item is validated on its own: a bad item is reported with its JSON path
(``items[3].category``) and what was expected, and the other items are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evaluators.io import InputError, InputIssue, format_json_path, load_json_bytes
from evaluators.results import DictMixin

CATEGORIES = ("character", "location", "event", "relation", "item")
DIFFICULTIES = ("easy", "medium", "hard")

#: The 1-5 human rubric (score -> (中文, English)), part of the schema so review can use it.
RUBRIC: dict[int, tuple[str, str]] = {
    5: ("完全正确，信息完整", "completely correct, information complete"),
    4: ("基本正确，有minor遗漏", "mostly correct, minor omissions"),
    3: ("部分正确，有明显遗漏", "partly correct, clear omissions"),
    2: ("方向正确但关键信息错误", "right direction but key information wrong"),
    1: ("完全错误或无关", "completely wrong or irrelevant"),
}

#: A human score on the rubric.
HumanScore = Annotated[int, Field(ge=1, le=5, description="1-5 rubric score, see RUBRIC")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True, frozen=True)


class Source(_Model):
    """Where the answer is found in the source text (1-based inclusive line range)."""

    file: str = Field(min_length=1)
    line_range: tuple[int, int] | None = None

    @field_validator("line_range")
    @classmethod
    def _ordered(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        if v is not None and (v[0] < 1 or v[1] < v[0]):
            raise ValueError("line_range must be [start, end] with 1 <= start <= end")
        return v


class TestItem(_Model):
    """One single-turn question with its expected answer and scoring keywords."""

    __test__ = False  # not a pytest class

    id: str = Field(min_length=1)
    category: str = Field(min_length=1)  # CATEGORIES, or another name (warned, grouped on its own)
    difficulty: Literal["easy", "medium", "hard"]
    question: str = Field(min_length=1)
    expected_answer: str = Field(min_length=1)
    source: Source
    keywords: list[str] = Field(default_factory=list)
    notes: str | None = None

    @field_validator("keywords")
    @classmethod
    def _non_blank(cls, v: list[str]) -> list[str]:
        return [k.strip() for k in v if k and k.strip()]


class ExpectedPoint(_Model):
    """An expected point with its own keywords."""

    point: str = Field(min_length=1)
    keywords: list[str] = Field(default_factory=list)


class Turn(_Model):
    """One user turn of a dialogue and the points its answer should cover."""

    turn: int = Field(ge=1)
    user: str = Field(min_length=1)
    expected_points: list[Union[str, ExpectedPoint]] = Field(min_length=1)
    requires_context: bool = False
    context_dependency: str | None = None


class Dialogue(_Model):
    """One multi-turn scenario."""

    id: str = Field(min_length=1)
    scenario: str = Field(min_length=1)
    description: str | None = None
    turns: list[Turn] = Field(min_length=1)

    @field_validator("turns")
    @classmethod
    def _unique_turns(cls, v: list[Turn]) -> list[Turn]:
        numbers = [t.turn for t in v]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"turn numbers must be unique, got {numbers}")
        return v


@dataclass(frozen=True)
class TestSet(DictMixin):
    """A loaded test set.

    Attributes
    ----------
    file : str
        Name of the file.
    kind : str
        ``"single"`` or ``"multi_turn"``.
    version, description : str or None
        Header fields.
    items : tuple of TestItem or Dialogue
        Valid items, in file order.
    issues : tuple of InputIssue
        One per invalid item (located), and duplicates.
    """

    __test__ = False

    file: str
    kind: str
    version: str | None
    description: str | None
    items: tuple = field(default=())
    issues: tuple[InputIssue, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "kind": self.kind, "version": self.version, "description": self.description,
                "items": [i.model_dump() for i in self.items], "issues": [i.to_dict() for i in self.issues]}


def _message(err: dict[str, Any]) -> str:
    loc = err.get("loc") or ()
    last = loc[-1] if loc else None
    if last == "category" and err.get("type") == "literal_error":
        return f"category must be one of {', '.join(CATEGORIES)}, got {err.get('input')!r}"
    if last == "difficulty" and err.get("type") == "literal_error":
        return f"difficulty must be one of {', '.join(DIFFICULTIES)}, got {err.get('input')!r}"
    if err.get("type") == "missing":
        return f"required field '{last}' is missing"
    return err.get("msg", "invalid value")


def detect_kind(items: list[Any]) -> str:
    """``"multi_turn"`` when the items have ``turns``, else ``"single"``.

    Parameters
    ----------
    items : list
        The raw items; the first object among them decides.

    Returns
    -------
    str

    Examples
    --------
    >>> detect_kind([{"id": "d1", "turns": []}]), detect_kind([])
    ('multi_turn', 'single')
    """
    for item in items:
        if isinstance(item, Mapping):
            return "multi_turn" if "turns" in item else "single"
    return "single"


def parse_test_set(value: Any, file: str = "<test set>", kind: str | None = None) -> TestSet:
    """Validate a parsed JSON test set item by item.

    Parameters
    ----------
    value : dict or list
        The document (an object with ``items``, or a bare list of items).
    file : str
        Name for issues.
    kind : {"single", "multi_turn"}, optional
        Force the kind; detected from the items by default.

    Returns
    -------
    TestSet
        Valid items plus one located issue per problem.

    Raises
    ------
    InputError
        When the document has no item list at all.
    """
    if isinstance(value, list):
        header: Mapping[str, Any] = {}
        items_raw, prefix = value, ""
    elif isinstance(value, Mapping) and isinstance(value.get("items"), list):
        header, items_raw, prefix = value, value["items"], "items"
    else:
        raise InputError(InputIssue(file, "expected an object with an 'items' list (or a list of items)", path="$"))
    kind = kind or detect_kind(items_raw)
    model = Dialogue if kind == "multi_turn" else TestItem
    good = []
    issues: list[InputIssue] = []
    seen: set[str] = set()
    for i, raw in enumerate(items_raw):
        where = f"{prefix}[{i}]"
        try:
            item = model.model_validate(raw)
        except ValidationError as exc:
            for err in exc.errors():
                issues.append(InputIssue(file, _message(err), path=where + (
                    "." + format_json_path(err["loc"]) if err.get("loc") else ""), kind="schema"))
            continue
        if item.id in seen:
            issues.append(InputIssue(file, f"duplicate id {item.id!r}; the first one is kept", path=f"{where}.id"))
            continue
        if kind != "multi_turn" and item.category not in CATEGORIES:
            issues.append(InputIssue(file, f"category {item.category!r} is not one of {', '.join(CATEGORIES)}; the item "
                                           "is kept and grouped under its own category", path=f"{where}.category",
                                     severity="warning"))
        seen.add(item.id)
        good.append(item)
    version = header.get("version")
    description = header.get("description")
    return TestSet(file, kind, None if version is None else str(version),
                   description if isinstance(description, str) else None, tuple(good), tuple(issues))


def load_test_set(data: bytes, file: str = "<test set>", kind: str | None = None) -> TestSet:
    """Decode, parse and validate a test-set file; see :func:`parse_test_set`.

    Parameters
    ----------
    data : bytes
        The file's bytes (JSON; UTF-8 or GB18030).
    file : str
        Its name, for located problems.
    kind : {"single", "multi_turn"}, optional
        Force the kind.

    Returns
    -------
    TestSet

    Raises
    ------
    InputError
        Undecodable bytes, invalid JSON (line and column), or no item list.
    """
    try:
        value, _ = load_json_bytes(data, file)
        return parse_test_set(value, file, kind)
    except InputError:
        from evaluators.io.shapes import misplaced  # another input's file: say where it goes, in one line

        wrong = misplaced(file, data, "a test set (ITEMS, --items)", accepts=("test_set",))
        if wrong is not None:
            raise InputError(wrong) from None
        raise
