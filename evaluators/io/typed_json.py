"""Results as typed JSON: :func:`encode` / :func:`decode` (and :func:`dumps` / :func:`loads`).

A tree of the engine's result values becomes JSON that says what each value was, and comes back
as equal values of the same types: what :func:`evaluators.results.to_jsonable` (JSON for people and
other programs) gives up — tuples, sets, non-string keys, NaN, which class a record was — is kept
by a type tag.  Used to ship the demo's results as data (:mod:`components.demo_cache`) instead of
a pickle, which is code and breaks with any change of a class or a library.

======================================  ==========================================================
value                                   JSON
======================================  ==========================================================
``None``, ``bool``, ``int``, ``str``    itself
``float``                               itself; NaN and infinities ``{"$float": "nan"}``,
                                        ``"inf"``, ``"-inf"``
``list``                                an array
``tuple``, any other sequence           ``{"$tuple": [...]}`` (a lazy sequence such as
                                        :class:`evaluators.narrative.alignment.EventLabels`
                                        comes back as the tuple it equals, as it pickles)
``set``, ``frozenset``                  ``{"$set": [...]}``, ``{"$frozenset": [...]}`` (sorted)
``dict``                                an object when every key is a string not starting with
                                        ``$``, else ``{"$map": [[key, value], ...]}``
``bytes``                               ``{"$bytes": "<base64>"}``
dataclass                               ``{"$dataclass": "module:QualName", field: value, ...}``
named tuple                             ``{"$namedtuple": "module:QualName", field: value, ...}``
pydantic model                          ``{"$model": "module:QualName", field: value, ...}``, with
                                        ``"$extra"`` (extra keys) and ``"$unset"`` (fields not
                                        set explicitly) when there are any
enum member                             ``{"$enum": "module:QualName", "name": "MEMBER"}``
======================================  ==========================================================

Safety: decoding builds only the types above.  A class is named by its module and qualified
name, and is looked up only when the module is :data:`ALLOWED_PACKAGES` or inside it (checked on
the name, before anything is imported; no ``__dunder__`` parts), the class is defined in that very
module, and it is a dataclass, named tuple, pydantic model or enum of the kind its tag says.
Objects are made as :mod:`pickle` makes them, without calling ``__init__``: a dataclass with
``object.__new__`` and its fields set, a named tuple with ``tuple.__new__``, a pydantic model with
``model_construct`` (no validation), an enum member by name.  So decoding a file never runs code
other than importing the engine's own modules.

Shape check: a dataclass, named tuple or model must have exactly the fields it was written
with; a field added, removed or renamed since (or a class moved or gone) makes :func:`decode`
raise :class:`CodecError`, never build a half-filled object.  A field whose *type* changed is not
noticed here: compare decoded values with fresh ones where that matters.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import importlib
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from enum import Enum
from functools import cached_property
from typing import Any

__all__ = ["ALLOWED_PACKAGES", "CodecError", "encode", "decode", "dumps", "loads"]

#: Packages whose classes :func:`decode` may build (a module must be one of them or inside one).
ALLOWED_PACKAGES = ("evaluators",)

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})*")
_TAGS = ("$dataclass", "$namedtuple", "$model", "$enum", "$tuple", "$set", "$frozenset", "$map", "$float",
         "$bytes")
_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class CodecError(ValueError):
    """A JSON tree that does not decode: an unknown tag, a class not allowed or not found, other fields."""


# --------------------------------------------------------------------------------------------- encoding

def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@functools.cache
def _cached_properties(cls: type) -> frozenset[str]:
    return frozenset(name for klass in cls.__mro__ for name, attr in vars(klass).items()
                     if isinstance(attr, cached_property))


def _is_model(value: Any) -> bool:
    if "pydantic" not in sys.modules:  # no model exists before pydantic is imported
        return False
    from pydantic import BaseModel

    return isinstance(value, BaseModel)


def _sort_key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True, ensure_ascii=False)


def encode(value: Any) -> Any:
    """``value`` as a JSON-ready tree with type tags (see the module docstring).

    Parameters
    ----------
    value : object
        Built of JSON values, tuples, sets, floats (NaN and infinities included), dataclasses,
        named tuples, enums and pydantic models of the engine.

    Returns
    -------
    object
        Dicts, lists, strings, finite numbers, bools and ``None`` only: ``json.dumps`` writes it
        with ``allow_nan=False``.

    Examples
    --------
    >>> encode((1, "北京"))
    {'$tuple': [1, '北京']}

    Raises
    ------
    TypeError
        A value of a type this codec does not know (say which, and where), or a dataclass instance
        holding attributes that are not fields (other than :func:`functools.cached_property` values,
        which are left out and computed again when asked).
    """
    return _encode(value, "$")


def _encode(value: Any, where: str) -> Any:
    t = type(value)
    if value is None or t is str or t is bool or t is int:
        return value
    if t is float:
        if math.isnan(value):
            return {"$float": "nan"}
        if math.isinf(value):
            return {"$float": "inf" if value > 0 else "-inf"}
        return value
    if t is list:
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: _encode(v, f"{where}.{k}") for k, v in value.items()}
        return {"$map": [[_encode(k, f"{where}{{key}}"), _encode(v, f"{where}[{k!r}]")] for k, v in value.items()]}
    if isinstance(value, Enum):
        return {"$enum": _class_name(t), "name": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        extra = set(getattr(value, "__dict__", ())) - set(names) - _cached_properties(t)
        if extra:
            raise TypeError(f"{where}: {t.__qualname__} holds attributes that are not fields: {sorted(extra)}")
        out = {"$dataclass": _class_name(t)}
        out.update((name, _encode(getattr(value, name), f"{where}.{name}")) for name in names)
        return out
    if isinstance(value, tuple) and hasattr(t, "_fields"):
        out = {"$namedtuple": _class_name(t)}
        out.update((name, _encode(v, f"{where}.{name}")) for name, v in zip(t._fields, value))
        return out
    if t is tuple:
        return {"$tuple": [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if t is set or t is frozenset:
        items = sorted((_encode(v, f"{where}{{}}") for v in value), key=_sort_key)
        return {"$set" if t is set else "$frozenset": items}
    if t is bytes:
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if _is_model(value):
        fields = type(value).model_fields
        if getattr(value, "__pydantic_private__", None):
            raise TypeError(f"{where}: {t.__qualname__} holds private attributes")
        out = {"$model": _class_name(t)}
        out.update((name, _encode(getattr(value, name), f"{where}.{name}")) for name in fields)
        extra = value.__pydantic_extra__
        if extra:
            out["$extra"] = _encode(dict(extra), f"{where}.$extra")
        unset = [name for name in fields if name not in value.model_fields_set]
        if unset:
            out["$unset"] = unset
        return out
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray, Mapping)):
        return {"$tuple": [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    raise TypeError(f"{where}: no typed JSON for {t.__module__}.{t.__qualname__}")


def dumps(value: Any, *, indent: int | None = None) -> str:
    """:func:`encode` ``value`` and write it as JSON text (UTF-8 characters kept, no NaN literals).

    Parameters
    ----------
    value : object
        As :func:`encode`.
    indent : int, optional
        ``json.dumps`` indentation; ``None``: one line.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        As :func:`encode`.
    """
    return json.dumps(encode(value), ensure_ascii=False, allow_nan=False, indent=indent)


# --------------------------------------------------------------------------------------------- decoding

def _allowed_module(module: str) -> bool:
    if not _DOTTED.fullmatch(module) or any(part.startswith("__") for part in module.split(".")):
        return False
    return any(module == p or module.startswith(p + ".") for p in ALLOWED_PACKAGES)


def resolve(name: Any, kind: str) -> type:
    """The class ``"module:QualName"`` of ``kind`` (``"$dataclass"``, ``"$namedtuple"``, ``"$model"``, ``"$enum"``).

    The name is checked before anything is imported: the module must be in :data:`ALLOWED_PACKAGES`,
    with no ``__dunder__`` part.

    Parameters
    ----------
    name : object
        The tree's class name, ``"module:QualName"`` (anything else is refused).
    kind : str
        The tag it came with.

    Returns
    -------
    type

    Raises
    ------
    CodecError
        Not allowed, not found, not defined in that module, or not of that kind.
    """
    if not isinstance(name, str):
        raise CodecError(f"{kind}: class name must be a string, not {type(name).__name__}")
    module, sep, qualname = name.partition(":")
    if not sep or not _allowed_module(module):
        raise CodecError(f"{kind} {name!r}: only classes of {', '.join(ALLOWED_PACKAGES)} are decoded")
    if not _DOTTED.fullmatch(qualname) or any(part.startswith("__") for part in qualname.split(".")):
        raise CodecError(f"{kind} {name!r}: not a class name")
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise CodecError(f"{kind} {name!r}: not found ({exc})") from exc
    if not isinstance(obj, type) or obj.__module__ != module or obj.__qualname__ != qualname:
        raise CodecError(f"{kind} {name!r}: not a class defined there")
    if kind == "$dataclass":
        ok = dataclasses.is_dataclass(obj)
    elif kind == "$namedtuple":
        ok = issubclass(obj, tuple) and isinstance(getattr(obj, "_fields", None), tuple)
    elif kind == "$enum":
        ok = issubclass(obj, Enum)
    else:
        from pydantic import BaseModel

        ok = issubclass(obj, BaseModel)
    if not ok:
        raise CodecError(f"{name!r} is not a {kind[1:]}")
    return obj


#: Classes found by :func:`resolve` while decoding, with a dataclass's field names: a tree of many records names a
#: few classes many times (the rows of a shard file).  Only successful look-ups are kept.
_RESOLVED: dict[tuple[str, str], tuple[type, tuple[str, ...]]] = {}


def _class_of(name: Any, kind: str) -> tuple[type, tuple[str, ...]]:
    """``(class, its dataclass field names or ())`` of :func:`resolve`, looked up once per name and tag."""
    key = (name, kind) if type(name) is str else None
    found = _RESOLVED.get(key) if key is not None else None
    if found is None:
        cls = resolve(name, kind)
        found = (cls, tuple(f.name for f in dataclasses.fields(cls)) if kind == "$dataclass" else ())
        if key is not None:
            _RESOLVED[key] = found
    return found


def _same_fields(name: str, expected: Sequence[str], found: Mapping[str, Any]) -> None:
    if set(expected) != set(found) or len(expected) != len(found):
        missing = sorted(set(expected) - set(found))
        unknown = sorted(set(found) - set(expected))
        raise CodecError(f"{name}: the class has other fields now (missing {missing}, unknown {unknown})")


def decode(tree: Any) -> Any:
    """The values :func:`encode` made ``tree`` from: equal values of the same types.

    Parameters
    ----------
    tree : object
        A parsed JSON value written by :func:`encode` / :func:`dumps`.

    Returns
    -------
    object

    Examples
    --------
    >>> decode(encode({"pair": (1, 2), "nan": float("nan")}))["pair"]
    (1, 2)

    Raises
    ------
    CodecError
        Anything that is not such a tree, a class that may not or cannot be built (see the module
        docstring), or a class whose fields changed since the tree was written.
    """
    try:
        return _decode(tree)
    except RecursionError as exc:
        raise CodecError("nested too deeply") from exc


def _decode(tree: Any) -> Any:
    t = type(tree)
    if tree is None or t is str or t is bool or t is int or t is float:
        return tree
    if t is list:
        return [_decode(v) for v in tree]
    if t is not dict:
        raise CodecError(f"not a JSON value: {t.__name__}")
    tag = next(iter(tree), None)
    if tag is None or not tag.startswith("$"):
        if any(k.startswith("$") for k in tree):
            raise CodecError(f"a tag must come first: {sorted(k for k in tree if k.startswith('$'))}")
        return {k: _decode(v) for k, v in tree.items()}
    if tag not in _TAGS:
        raise CodecError(f"unknown tag {tag!r}")
    body = tree[tag]
    if tag in ("$tuple", "$set", "$frozenset", "$map"):
        if len(tree) != 1 or type(body) is not list:
            raise CodecError(f"{tag}: expects one list")
        if tag == "$map":
            if not all(type(pair) is list and len(pair) == 2 for pair in body):
                raise CodecError("$map: expects [key, value] pairs")
            try:
                return {_decode(k): _decode(v) for k, v in body}
            except TypeError as exc:  # an unhashable key
                raise CodecError(f"$map: {exc}") from exc
        items = [_decode(v) for v in body]
        try:
            return tuple(items) if tag == "$tuple" else set(items) if tag == "$set" else frozenset(items)
        except TypeError as exc:
            raise CodecError(f"{tag}: {exc}") from exc
    if tag == "$float":
        if len(tree) != 1 or body not in _SPECIAL_FLOATS:
            raise CodecError(f"$float: one of {sorted(_SPECIAL_FLOATS)}, not {body!r}")
        return _SPECIAL_FLOATS[body]
    if tag == "$bytes":
        if len(tree) != 1 or type(body) is not str:
            raise CodecError("$bytes: expects one base64 string")
        try:
            return base64.b64decode(body, validate=True)
        except ValueError as exc:
            raise CodecError(f"$bytes: {exc}") from exc
    cls, names = _class_of(body, tag)
    if tag == "$enum":
        if set(tree) != {"$enum", "name"} or type(tree["name"]) is not str:
            raise CodecError(f"{body}: an enum member is {{'$enum', 'name'}}")
        try:
            return cls[tree["name"]]
        except KeyError as exc:
            raise CodecError(f"{body}: no member {tree['name']!r} now") from exc
    if tag == "$dataclass":
        values = {k: v for k, v in tree.items() if k != tag}
        _same_fields(body, names, values)
        obj = object.__new__(cls)
        for k, v in values.items():
            object.__setattr__(obj, k, _decode(v))
        return obj
    if tag == "$namedtuple":
        values = {k: v for k, v in tree.items() if k != tag}
        _same_fields(body, cls._fields, values)
        return tuple.__new__(cls, [_decode(values[k]) for k in cls._fields])
    # "$model"
    values = {k: v for k, v in tree.items() if not k.startswith("$")}
    _same_fields(body, list(cls.model_fields), values)
    extra = tree.get("$extra", {})
    unset = tree.get("$unset", [])
    if set(tree) - set(values) - {"$model", "$extra", "$unset"} or type(extra) is not dict or type(unset) is not list:
        raise CodecError(f"{body}: unknown keys of a model")
    extra = {k: _decode(v) for k, v in extra.items()}
    if set(extra) & set(values) or not set(unset) <= set(values):
        raise CodecError(f"{body}: $extra or $unset names fields")
    fields_set = set(values) - set(unset) | set(extra)
    decoded = {k: _decode(v) for k, v in values.items()}
    try:
        return cls.model_construct(_fields_set=fields_set, **decoded, **extra)
    except (TypeError, ValueError) as exc:  # e.g. a model_post_init that refuses the values now
        raise CodecError(f"{body}: {exc}") from exc


def loads(text: str | bytes) -> Any:
    """:func:`decode` the JSON ``text`` (NaN and infinity literals refused: they are written tagged).

    Parameters
    ----------
    text : str or bytes
        JSON text (bytes: UTF-8).

    Returns
    -------
    object

    Raises
    ------
    CodecError
        Not JSON, or not a tree :func:`decode` accepts.
    """
    def no_constant(name: str) -> Any:
        raise CodecError(f"{name} is not JSON")

    try:
        tree = json.loads(text, parse_constant=no_constant)
    except (ValueError, RecursionError) as exc:  # json.JSONDecodeError and CodecError are ValueErrors
        raise exc if isinstance(exc, CodecError) else CodecError(str(exc)) from exc
    return decode(tree)
