"""Shared pieces of every result type: JSON-safe conversion and ratio helpers.

Results are frozen dataclasses holding raw counts beside the derived ratios.  A ratio
that cannot be computed (empty denominator, ground truth missing) is ``None``, never
0 and never NaN (DESIGN.md, "Conventions").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any


def safe_div(numerator: float, denominator: float) -> float | None:
    """Return ``numerator / denominator`` or ``None`` when the denominator is 0.

    Parameters
    ----------
    numerator, denominator : float
        Counts (or weighted counts); the denominator must be >= 0.

    Returns
    -------
    float or None
        The ratio, or ``None`` when it is undefined.
    """
    if denominator == 0:
        return None
    return numerator / denominator


def f1_score(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean of precision and recall.

    ``None`` if either is undefined; 0.0 when both are 0 (the standard convention,
    as in scikit-learn with ``zero_division=0`` for a defined but empty overlap).

    Parameters
    ----------
    precision, recall : float or None
        Each in [0, 1].

    Returns
    -------
    float or None
        ``2PR / (P + R)`` in [0, 1].

    References
    ----------
    van Rijsbergen (1979), *Information Retrieval*, ch. 7 (F-measure with beta = 1).

    Examples
    --------
    >>> f1_score(0.5, 1.0), f1_score(0.0, 0.0), f1_score(None, 1.0)
    (0.6666666666666666, 0.0, None)
    """
    if precision is None or recall is None:
        return None
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def prf(tp: int, n_pred: int, n_gold: int, *, precision_needs_gold: bool = False
        ) -> tuple[float | None, float | None, float | None]:
    """Precision, recall and F1 from raw counts.

    Parameters
    ----------
    tp : int
        True positives (matched items).
    n_pred : int
        Number of predicted items counted (tp + fp).
    n_gold : int
        Number of ground-truth items counted (tp + fn).
    precision_needs_gold : bool
        Precision is ``None`` too when there is no ground truth (DESIGN.md's missing-GT
        policy: predictions where the GT is empty are "extra", not false positives).

    Returns
    -------
    (precision, recall, f1)
        Each in [0, 1] or ``None`` when undefined.  With no ground truth, recall and F1
        are ``None``; with ground truth but no prediction, precision is ``None``, recall
        is 0 and F1 is 0 (nothing was found).

    Notes
    -----
    Standard definitions: P = tp / (tp + fp), R = tp / (tp + fn), F1 = 2PR / (P + R).
    """
    precision = safe_div(tp, n_pred)
    recall = safe_div(tp, n_gold)
    if recall is None:
        return (None if precision_needs_gold else precision), None, None
    if precision is None:
        # Ground truth exists but nothing was predicted: F1 is 0 by the limit P -> any, R = 0.
        return None, recall, 0.0
    return precision, recall, f1_score(precision, recall)


def mean_or_none(values) -> float | None:
    """Arithmetic mean of the non-``None`` values, ``None`` when there are none.

    Parameters
    ----------
    values : iterable of (float or None)

    Returns
    -------
    float or None

    Examples
    --------
    >>> mean_or_none([1.0, None, 0.0]), mean_or_none([None])
    (0.5, None)
    """
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return sum(vals) / len(vals)


_INFINITIES = (math.inf, -math.inf)


def to_jsonable(obj: Any) -> Any:
    """Convert dataclasses, enums, tuples, sets and mappings into JSON-ready values.

    NaN and infinities become ``None`` (JSON has no NaN; DESIGN.md forbids it).  Values nested
    deeper than Python's recursion allows (the JSON readers accept 1,024 levels) are converted
    without recursion, to the same result.

    Parameters
    ----------
    obj : object
        A result, or any value built of dataclasses, enums, mappings, sequences, sets and scalars.

    Returns
    -------
    object
        Dicts, lists, strings, numbers, bools and ``None`` only (``json.dumps`` writes it with
        ``allow_nan=False``).

    Examples
    --------
    >>> to_jsonable({"ci": (0.1, float("nan")), "labels": {"T"}})
    {'ci': [0.1, None], 'labels': ['T']}
    """
    try:
        return _jsonable(obj)
    except RecursionError:
        return _jsonable_iterative(obj)


def _jsonable(obj: Any) -> Any:
    # Exact built-in types first (most of a report's values): one type check instead of the
    # generic tests below (two of them ABC checks), about 4x faster on a narrative report.
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is float:
        return None if (obj != obj or obj in _INFINITIES) else obj
    if t is dict:
        return {(k if type(k) is str else str(k)): _jsonable(v) for k, v in obj.items()}
    if t is list:
        return [_jsonable(v) for v in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "to_dict"):
            return obj.to_dict()
        return {f.name: _jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):  # NamedTuple rows
        if hasattr(obj, "to_dict"):
            return _jsonable(obj.to_dict())
        return {k: _jsonable(v) for k, v in obj._asdict().items()}
    if hasattr(obj, "model_dump") and callable(obj.model_dump):  # pydantic model
        return _jsonable(obj.model_dump(mode="json", exclude_unset=False))
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, float):
        return None if (math.isnan(obj) or math.isinf(obj)) else obj
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return [_jsonable(v) for v in sorted(obj, key=str)]
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes, bytearray)):  # e.g. lazy record stores
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return _jsonable(obj.item())
    return obj


def _is_container(obj: Any) -> bool:
    """A plain mapping or sequence (converted element by element); objects with their own rules are not."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return False
    if isinstance(obj, tuple) and hasattr(obj, "_asdict") or hasattr(obj, "model_dump") or isinstance(obj, Enum):
        return False
    return isinstance(obj, (Mapping, list, tuple, set, frozenset)) or (
        isinstance(obj, Sequence) and not isinstance(obj, (str, bytes, bytearray)))


def _jsonable_iterative(obj: Any) -> Any:
    """:func:`_jsonable` with an explicit stack for the plain containers (any depth)."""
    def items(o: Any) -> list[tuple[Any, Any]]:
        if isinstance(o, Mapping):
            return [(str(k), v) for k, v in o.items()]
        if isinstance(o, (set, frozenset)):
            return list(enumerate(sorted(o, key=str)))
        return list(enumerate(o))

    def leaf(o: Any) -> Any:
        return to_jsonable(o) if not isinstance(o, float) else (None if math.isnan(o) or math.isinf(o) else o)

    if not _is_container(obj):
        return leaf(obj)
    root: Any = {} if isinstance(obj, Mapping) else []
    stack = [(items(obj), 0, root)]
    while stack:
        pending, i, out = stack.pop()
        while i < len(pending):
            key, value = pending[i]
            i += 1
            if _is_container(value):
                child: Any = {} if isinstance(value, Mapping) else []
                if isinstance(out, dict):
                    out[key] = child
                else:
                    out.append(child)
                stack.append((pending, i, out))
                stack.append((items(value), 0, child))
                break
            converted = leaf(value)
            if isinstance(out, dict):
                out[key] = converted
            else:
                out.append(converted)
    return root


_FIELD_NAMES: dict[type, dict[str, None]] = {}


def build_frozen(cls: type, values: dict[str, Any]):
    """Instantiate a frozen dataclass from a mapping of *all* its fields.

    Equivalent to ``cls(**values)`` (same equality, hash and repr) without the frozen
    ``__setattr__`` call per field, which makes wide result types about 3x cheaper to build
    in the per-document hot path.

    Parameters
    ----------
    cls : type
        A frozen dataclass without ``__post_init__`` checks to run (they are skipped).
    values : dict of str to object
        Every field, by name.

    Returns
    -------
    object
        An instance of ``cls``.

    Raises
    ------
    TypeError
        If ``values`` does not name exactly the dataclass's fields.
    """
    fields = _FIELD_NAMES.get(cls)
    if fields is None:  # the instance fields (class variables are listed in __dataclass_fields__ too)
        fields = _FIELD_NAMES[cls] = {f.name: None for f in dataclasses.fields(cls)}
    if len(values) != len(fields) or not fields.keys() == values.keys():
        missing = sorted(set(fields) - set(values))
        unknown = sorted(set(values) - set(fields))
        raise TypeError(f"{cls.__name__}: missing fields {missing}, unknown fields {unknown}")
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


class DictMixin:
    """Adds ``to_dict()`` (recursive, JSON-safe) to a dataclass."""

    __slots__ = ()  # lets ``slots=True`` dataclasses stay free of a per-instance ``__dict__``

    def to_dict(self) -> dict[str, Any]:
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclasses.dataclass(frozen=True)
class CommonItems(DictMixin):
    """Which items every system of a side-by-side view has a value for: the rule of every comparison.

    Systems are compared on the items they all scored (the *common* items); each one's own count
    is kept beside it, so a system scored on 2 questions is never drawn next to one scored on
    1,540 as if they were comparable.

    Attributes
    ----------
    n_common : int
        Items with a value in every system.
    n_by_system : dict
        System name -> the number of items it has a value for (its own n), in the systems' order.
    ids : tuple
        The common items' keys, in the first system's order.
    unit : str
        What an item is, plural (``"questions"``, ``"records"``, ``"stories"``), for messages.
    """

    n_common: int
    n_by_system: dict[str, int]
    ids: tuple = dataclasses.field(default=(), repr=False)
    unit: str = "items"

    @property
    def same(self) -> bool:
        """Every system has a value for the same items (its own n is the common n)."""
        return all(n == self.n_common for n in self.n_by_system.values())

    def units(self, n: int) -> str:
        """``unit`` for a count: ``"1 story"``, ``"2 stories"``.

        Parameters
        ----------
        n : int

        Returns
        -------
        str
            ``n`` with thousands separators and the unit, singular for 1.
        """
        one = "story" if self.unit == "stories" else self.unit[:-1] if self.unit.endswith("s") else self.unit
        return f"{n:,} {one if n == 1 else self.unit}"

    def describe(self) -> str:
        """``"n common = 2 questions; own n: a 1,540, b 45, c 2"`` (one line for a caption or a title)."""
        own = ", ".join(f"{name} {n:,}" for name, n in self.n_by_system.items())
        return f"n common = {self.units(self.n_common)}; own n: {own}"

    def warning(self) -> str | None:
        """What a reader must know before comparing the systems (``None`` when they share every item)."""
        if self.same:
            return None
        if not self.n_common:
            return (f"No {self.units(1)[2:]} is scored by every system ({self.describe()}): each system's score "
                    f"is over its own {self.unit}, and the scores are not comparable.")
        return (f"The systems were scored on different {self.unit} ({self.describe()}). The chart and the "
                f"table's scores are over the {self.units(self.n_common)} every system scored; each system's "
                f"own n and its mean over its own {self.unit} are beside them.")


def common_items(ids_by_system: Mapping[str, Any], *, unit: str = "items") -> CommonItems:
    """The items every system has a value for (:class:`CommonItems`).

    Parameters
    ----------
    ids_by_system : mapping of str to iterable of hashable
        System name -> the keys of the items it has a value for (a key listed twice counts once).
    unit : str
        What an item is, plural, for messages.

    Returns
    -------
    CommonItems
        Common keys in the first system's order.
    """
    sets = {name: list(dict.fromkeys(ids)) for name, ids in ids_by_system.items()}
    if not sets:
        return CommonItems(0, {}, (), unit)
    first, *rest = sets.values()
    others = [set(s) for s in rest]
    common = tuple(i for i in first if all(i in s for s in others))
    return CommonItems(len(common), {name: len(s) for name, s in sets.items()}, common, unit)
