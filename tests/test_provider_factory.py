"""create_provider / activate_fallback: which provider the settings yield, and why."""

from __future__ import annotations

import pytest

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.factory import activate_fallback, create_provider
from openclaw_memory.embeddings.local import LocalProvider
from openclaw_memory.embeddings.openai import OpenAIProvider
from openclaw_memory.embeddings.use import MultilingualUSEProvider
from openclaw_memory.errors import ConfigError, EmbeddingError, ProviderUnavailableError


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_auto_without_key_is_local():
    choice = create_provider(EmbeddingSettings(provider="auto"))
    assert isinstance(choice.provider, MultilingualUSEProvider)
    assert (choice.requested, choice.fallback, choice.unavailable_reason) == ("auto", None, None)


@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8"])
def test_minilm_stays_selectable_by_name(model: str) -> None:
    choice = create_provider(EmbeddingSettings(provider="local", model=model))
    assert isinstance(choice.provider, LocalProvider) and choice.provider.dims == 384


def test_an_unknown_local_model_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="unknown local embedding model"):
        create_provider(EmbeddingSettings(provider="local", model="bert-of-the-month"))


def test_none_is_keyword_only():
    choice = create_provider(EmbeddingSettings(provider="none"))
    assert choice.provider is None and "keyword-only" in (choice.unavailable_reason or "")


def test_explicit_openai_without_key_raises():
    with pytest.raises(ProviderUnavailableError, match="no API key"):
        create_provider(EmbeddingSettings(provider="openai"))


def test_explicit_openai_without_key_falls_back_to_local_and_records_it():
    choice = create_provider(EmbeddingSettings(provider="openai", fallback="local"))
    assert isinstance(choice.provider, MultilingualUSEProvider)
    assert choice.fallback is not None and choice.fallback["from"] == "openai"
    assert "no API key" in choice.fallback["reason"]


def test_auto_with_key_and_openai_model_is_openai(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choice = create_provider(EmbeddingSettings(model="text-embedding-3-large"))
    assert isinstance(choice.provider, OpenAIProvider)
    assert choice.provider.model == "text-embedding-3-large" and choice.provider.dims == 3072


def test_auto_with_local_base_url_needs_no_key():
    choice = create_provider(
        EmbeddingSettings(base_url="http://127.0.0.1:11434/v1", model="nomic-embed-text")
    )
    assert isinstance(choice.provider, OpenAIProvider) and choice.fallback is None


def test_auto_with_remote_endpoint_but_no_key_uses_local_and_says_why():
    choice = create_provider(EmbeddingSettings(base_url="https://embed.example.com/v1"))
    assert isinstance(choice.provider, MultilingualUSEProvider)
    assert choice.fallback == {"from": "openai", "reason": choice.fallback["reason"]}
    assert "no API key" in choice.fallback["reason"]


def test_auto_when_local_cannot_load_is_keyword_only_with_reason(tmp_path):
    choice = create_provider(EmbeddingSettings(local_model_path=tmp_path / "gone.onnx"))
    assert choice.provider is None
    assert "gone.onnx does not exist" in (choice.unavailable_reason or "")


def test_explicit_local_failure_without_fallback_raises(tmp_path):
    with pytest.raises(ProviderUnavailableError, match="does not exist"):
        create_provider(EmbeddingSettings(provider="local", local_model_path=tmp_path / "x"))


def test_explicit_local_failure_falls_back_to_openai(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choice = create_provider(
        EmbeddingSettings(provider="local", fallback="openai", local_model_path=tmp_path / "x")
    )
    assert isinstance(choice.provider, OpenAIProvider)
    assert choice.fallback is not None and choice.fallback["from"] == "local"


def test_both_unavailable_raises_with_both_reasons(tmp_path):
    with pytest.raises(ProviderUnavailableError, match=r"does not exist.*no API key"):
        create_provider(
            EmbeddingSettings(provider="local", fallback="openai", local_model_path=tmp_path / "x")
        )


def test_activate_fallback_switches_provider_after_runtime_failure():
    settings = EmbeddingSettings(provider="openai", fallback="local")
    error = EmbeddingError("quota exhausted", status=429)
    choice = activate_fallback(settings, error)
    assert isinstance(choice.provider, MultilingualUSEProvider)
    assert choice.fallback == {"from": "openai", "reason": "quota exhausted"}


def test_activate_fallback_without_fallback_reraises():
    error = EmbeddingError("boom")
    with pytest.raises(EmbeddingError, match="boom"):
        activate_fallback(EmbeddingSettings(provider="local"), error)


def test_the_fallback_never_inherits_the_primarys_model(tmp_path, monkeypatch):
    # openai's model for a local fallback: it gets its own default, not a ConfigError.
    choice = create_provider(EmbeddingSettings(provider="openai", model="text-embedding-3-small",
                                               fallback="local"))
    assert isinstance(choice.provider, MultilingualUSEProvider)
    assert choice.provider.model == "use-multilingual-v3"
    # the reverse: the local model's name is never sent to the OpenAI endpoint.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choice = create_provider(EmbeddingSettings(
        provider="local", model="use-multilingual-v3", fallback="openai",
        local_model_path=tmp_path / "x"))
    assert isinstance(choice.provider, OpenAIProvider)
    assert choice.provider.model == "text-embedding-3-small"


def test_fallback_model_names_the_fallbacks_own_model(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choice = create_provider(EmbeddingSettings(
        provider="local", fallback="openai", fallback_model="text-embedding-3-large",
        local_model_path=tmp_path / "x"))
    assert isinstance(choice.provider, OpenAIProvider)
    assert choice.provider.model == "text-embedding-3-large"


def test_auto_falls_back_to_local_with_its_own_model_when_openai_is_named():
    choice = create_provider(EmbeddingSettings(base_url="https://embed.example.com/v1",
                                               model="text-embedding-3-small"))
    assert isinstance(choice.provider, MultilingualUSEProvider)
    assert choice.fallback is not None and choice.fallback["from"] == "openai"
