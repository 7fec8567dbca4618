"""Metadata filters: the operator set PGVector documents, plus nested objects as LangGraph's
stores match them.

A filter is a mapping from field to condition; every field must match (``$and`` /
``$or`` combine whole filters)::

    {"kind": "travel", "year": {"$gte": 2025}}
    {"$or": [{"kind": "travel"}, {"tags": {"$in": ["trip", "flight"]}}]}
    {"author": {"name": "Priya"}}          # nested object: its fields must match

Operators: ``$eq $ne $lt $lte $gt $gte $in $nin $between $like $ilike $exists`` on a field,
``$and $or $not`` on filters. A bare value means ``$eq``; a list value means the field's list
equals it. Comparisons between different kinds (a number and a string) do not match rather
than raise, as a missing field does not match (except ``$ne``, ``$nin`` and ``$exists: false``),
so a filter never fails on one odd document. An unknown operator is a :class:`ConfigError`
when the filter is compiled, before any search runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from openclaw_memory.errors import ConfigError

__all__ = ["FIELD_OPERATORS", "LOGICAL_OPERATORS", "Predicate", "compile_filter"]

Predicate = Callable[[Mapping[str, Any]], bool]
FIELD_OPERATORS = frozenset({"$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$in", "$nin",
                             "$between", "$like", "$ilike", "$exists"})
LOGICAL_OPERATORS = frozenset({"$and", "$or", "$not"})
_MISSING = object()


def compile_filter(spec: Mapping[str, Any] | None) -> Predicate | None:
    """A predicate over a metadata mapping, or None for "no filter" (None or ``{}``)."""
    if spec is None or (isinstance(spec, Mapping) and not spec):
        return None
    if not isinstance(spec, Mapping):
        raise ConfigError(f"a filter is a mapping of field to condition, got {type(spec).__name__}")
    return _compile(spec)


def _compile(spec: Mapping[str, Any]) -> Predicate:
    parts: list[Predicate] = []
    for key, condition in spec.items():
        if not isinstance(key, str):
            raise ConfigError(f"filter field names are strings, got {key!r}")
        if key in LOGICAL_OPERATORS:
            parts.append(_logical(key, condition))
        elif key.startswith("$"):
            raise ConfigError(f"unknown filter operator {key!r} at the top level; use one of "
                              f"{', '.join(sorted(LOGICAL_OPERATORS))} or a field name")
        else:
            parts.append(_field(key, _condition(condition)))
    return lambda meta: all(part(meta) for part in parts)


def _logical(operator: str, condition: Any) -> Predicate:
    if operator == "$not":
        if not isinstance(condition, Mapping):
            raise ConfigError("$not takes one filter (a mapping)")
        inner = _compile(condition)
        return lambda meta: not inner(meta)
    if not isinstance(condition, Sequence) or isinstance(condition, str) or not condition:
        raise ConfigError(f"{operator} takes a non-empty list of filters")
    subs = [_compile(item) if isinstance(item, Mapping) else _bad_clause(operator) for item in condition]
    if operator == "$and":
        return lambda meta: all(sub(meta) for sub in subs)
    return lambda meta: any(sub(meta) for sub in subs)


def _bad_clause(operator: str) -> Predicate:
    raise ConfigError(f"every clause of {operator} must be a filter (a mapping)")


def _field(name: str, test: Callable[[Any], bool]) -> Predicate:
    return lambda meta: test(meta.get(name, _MISSING) if isinstance(meta, Mapping) else _MISSING)


def _condition(condition: Any) -> Callable[[Any], bool]:
    """A test of one field's value."""
    if isinstance(condition, Mapping):
        operators = [key for key in condition if isinstance(key, str) and key.startswith("$")]
        if operators:
            if len(operators) != len(condition):
                raise ConfigError(f"a condition mixes operators and field names: {dict(condition)!r}")
            tests = [_operator(op, value) for op, value in condition.items()]
            return lambda value: all(test(value) for test in tests)
        nested = _compile(condition)  # an object: each of its fields must match
        return lambda value: isinstance(value, Mapping) and nested(value)
    if condition is None:  # null or absent, as LangGraph's InMemoryStore reads it
        return lambda value: value is _MISSING or value is None
    return lambda value: value is not _MISSING and _equal(value, condition)


def _operator(op: str, arg: Any) -> Callable[[Any], bool]:
    if op not in FIELD_OPERATORS:
        raise ConfigError(f"unknown filter operator {op!r}; supported: "
                          f"{', '.join(sorted(FIELD_OPERATORS | LOGICAL_OPERATORS))}")
    if op == "$eq":
        return lambda value: value is not _MISSING and _equal(value, arg)
    if op == "$ne":
        return lambda value: value is _MISSING or not _equal(value, arg)
    if op in ("$lt", "$lte", "$gt", "$gte"):
        _check_comparable(op, arg)
        return _ordering(op, arg)
    if op in ("$in", "$nin"):
        if not isinstance(arg, Sequence) or isinstance(arg, str):
            raise ConfigError(f"{op} takes a list of values")
        options = list(arg)
        if op == "$in":
            return lambda value: value is not _MISSING and any(_equal(value, o) for o in options)
        return lambda value: value is _MISSING or not any(_equal(value, o) for o in options)
    if op == "$between":
        if not isinstance(arg, Sequence) or isinstance(arg, str) or len(arg) != 2:
            raise ConfigError("$between takes [low, high] (both inclusive)")
        low, high = _ordering("$gte", arg[0]), _ordering("$lte", arg[1])
        return lambda value: low(value) and high(value)
    if op in ("$like", "$ilike"):
        if not isinstance(arg, str):
            raise ConfigError(f"{op} takes a SQL LIKE pattern (a string with % and _)")
        pattern = _like(arg, op == "$ilike")
        return lambda value: isinstance(value, str) and pattern.fullmatch(value) is not None
    # $exists
    if not isinstance(arg, bool):
        raise ConfigError("$exists takes true or false")
    return lambda value: (value is not _MISSING) == arg


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _check_comparable(op: str, arg: Any) -> None:
    if _kind(arg) not in ("number", "string"):
        raise ConfigError(f"{op} compares numbers or strings, got {arg!r}")


def _ordering(op: str, arg: Any) -> Callable[[Any], bool]:
    _check_comparable(op, arg)
    kind = _kind(arg)

    def test(value: Any) -> bool:
        if _kind(value) != kind:
            return False
        if op == "$lt":
            return bool(value < arg)
        if op == "$lte":
            return bool(value <= arg)
        if op == "$gt":
            return bool(value > arg)
        return bool(value >= arg)
    return test


def _equal(value: Any, expected: Any) -> bool:
    """JSON equality: 1 == 1.0, but True is not 1 (a boolean is not a number in JSON)."""
    if isinstance(value, bool) or isinstance(expected, bool):
        return type(value) is type(expected) and value == expected
    if isinstance(expected, list | tuple):
        return (isinstance(value, list | tuple) and len(value) == len(expected)
                and all(_equal(v, e) for v, e in zip(value, expected, strict=True)))
    return bool(value == expected)


@lru_cache(maxsize=256)
def _like(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    parts = []
    for char in pattern:
        parts.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
    return re.compile("".join(parts), re.DOTALL | (re.IGNORECASE if ignore_case else 0))
