"""The metadata filter language: PGVector's operators, LangGraph's nested objects."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_memory.errors import ConfigError
from openclaw_memory.scope.filters import compile_filter

DOC = {"kind": "travel", "year": 2025, "score": 0.5, "tags": ["a", "b"], "done": True,
       "author": {"name": "Priya", "team": "platform"}, "title": "Lisbon trip"}


def matches(spec: dict[str, Any], doc: dict[str, Any] = DOC) -> bool:
    predicate = compile_filter(spec)
    assert predicate is not None
    return predicate(doc)


@pytest.mark.parametrize(("spec", "expected"), [
    ({"kind": "travel"}, True), ({"kind": "health"}, False), ({"missing": "x"}, False),
    ({"year": {"$eq": 2025}}, True), ({"year": {"$eq": 2025.0}}, True),
    ({"year": {"$ne": 2024}}, True), ({"missing": {"$ne": 1}}, True),
    ({"year": {"$gt": 2024, "$lt": 2026}}, True), ({"year": {"$gte": 2026}}, False),
    ({"score": {"$lte": 0.5}}, True), ({"title": {"$gt": "K"}}, True),
    ({"year": {"$gt": "2024"}}, False),  # a number is not compared with a string
    ({"year": {"$in": [2024, 2025]}}, True), ({"year": {"$nin": [2025]}}, False),
    ({"missing": {"$nin": [1]}}, True), ({"year": {"$between": [2025, 2025]}}, True),
    ({"title": {"$like": "Lis%"}}, True), ({"title": {"$like": "lis%"}}, False),
    ({"title": {"$ilike": "lis_on%"}}, True), ({"missing": {"$exists": False}}, True),
    ({"kind": {"$exists": False}}, False), ({"tags": ["a", "b"]}, True), ({"tags": ["a"]}, False),
    ({"done": True}, True), ({"done": 1}, False),  # JSON: a boolean is not a number
    ({"author": {"name": "Priya"}}, True), ({"author": {"name": "Joon"}}, False),
    ({"$or": [{"kind": "x"}, {"year": 2025}]}, True), ({"$and": [{"kind": "travel"}, {"year": 1}]}, False),
    ({"$not": {"kind": "travel"}}, False),
])
def test_each_operator_matches_as_documented(spec: dict[str, Any], expected: bool) -> None:
    assert matches(spec) is expected


def test_no_filter_means_everything() -> None:
    assert compile_filter(None) is None and compile_filter({}) is None


@pytest.mark.parametrize(("spec", "message"), [
    ({"year": {"$regex": "x"}}, "unknown filter operator '\\$regex'"),
    ({"$xor": []}, "unknown filter operator '\\$xor'"),
    ({"year": {"$in": 2025}}, "\\$in takes a list"),
    ({"year": {"$between": [1]}}, "\\$between takes"),
    ({"$or": []}, "\\$or takes a non-empty list"),
    ({"$or": ["kind"]}, "must be a filter"),
    ({"year": {"$gt": [1]}}, "compares numbers or strings"),
    ({"year": {"$gt": 1, "name": "x"}}, "mixes operators and field names"),
    ({"kind": {"$exists": "yes"}}, "\\$exists takes true or false"),
])
def test_a_malformed_filter_fails_when_compiled(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        compile_filter(spec)
