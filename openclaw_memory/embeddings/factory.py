"""Choosing the embedding provider from settings, with fallbacks that are never silent.

Rules (a superset of OpenClaw's, SPEC §7):

- ``none``: no provider, keyword-only search.
- ``local`` / ``openai`` / ``ollama`` / ``mistral`` / ``voyage`` / ``gemini``: that provider.
  If it cannot be built and ``fallback`` names a
  different provider, the fallback is built and ``ProviderChoice.fallback`` records
  ``{"from", "reason"}``; without a usable fallback :class:`ProviderUnavailableError` is
  raised, because the user asked for that provider by name.
- ``auto``: the service whose model ``embedding.model`` names (``gemini-embedding-001``,
  ``voyage-...``, ``mistral-embed``), or OpenAI when an endpoint is configured (``base_url``,
  or an OpenAI model name), when its key is available; else local (a key alone never leaves
  the offline default). If the configured service has no key, the
  switch to local is recorded as a fallback. If nothing can be built the choice has no
  provider and ``unavailable_reason`` says why, so search reports keyword-only mode and
  the cause instead of quietly degrading.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.local import MODEL_NAME, LocalProvider
from openclaw_memory.embeddings.ollama import OllamaProvider
from openclaw_memory.embeddings.openai import OpenAIProvider
from openclaw_memory.embeddings.services import GeminiProvider, MistralProvider, VoyageProvider
from openclaw_memory.embeddings.use import USE_MODEL_NAME, MultilingualUSEProvider
from openclaw_memory.errors import ConfigError, ProviderUnavailableError

__all__ = ["ProviderChoice", "activate_fallback", "auto_reason", "build_provider",
           "choose_provider",
           "create_provider",
           "openai_configured"]

_OPENAI_MODEL_PREFIX = "text-embedding-"


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """The provider to use and how it was arrived at.

    ``provider`` is None in keyword-only mode; ``requested`` is ``settings.provider``;
    ``fallback`` is ``{"from": <provider>, "reason": <message>}`` when a fallback was used.
    """

    provider: EmbeddingProvider | None
    requested: str
    fallback: dict[str, str] | None = None
    unavailable_reason: str | None = None


LOCAL_MODELS = {USE_MODEL_NAME: "use", "use": "use", MODEL_NAME: "minilm",
                "all-MiniLM-L6-v2": "minilm", "minilm": "minilm"}
"""Names ``embedding.model`` accepts for ``provider="local"``."""
DEFAULT_LOCAL_MODEL = USE_MODEL_NAME


def build_provider(name: str, settings: EmbeddingSettings) -> EmbeddingProvider:
    """Construct provider ``name`` (local, openai, ollama, mistral, voyage, gemini); raises
    ProviderUnavailableError."""
    if name == "local":
        return _local_provider(settings)
    remote = _REMOTE.get(name)
    if remote is not None:
        provider = remote(settings)
        provider.breaker.probe_interval_s = settings.probe_interval_seconds
        return provider
    raise ConfigError(f"unknown embedding provider {name!r} (expected local, "
                      f"{', '.join(_REMOTE)})")


_REMOTE: dict[str, Callable[[EmbeddingSettings], EmbeddingProvider]] = {
    "openai": OpenAIProvider, "ollama": OllamaProvider, "mistral": MistralProvider,
    "voyage": VoyageProvider, "gemini": GeminiProvider}


def _local_provider(settings: EmbeddingSettings) -> EmbeddingProvider:
    if settings.local_model_path is not None:
        return LocalProvider(settings)  # an ONNX export of a BERT-style encoder
    model = settings.model or DEFAULT_LOCAL_MODEL
    kind = LOCAL_MODELS.get(model)
    if kind is None:
        raise ConfigError(f"unknown local embedding model {model!r}; choose one of "
                          f"{', '.join(sorted(set(LOCAL_MODELS) - {'use', 'minilm'}))}")
    return MultilingualUSEProvider(settings) if kind == "use" else LocalProvider(settings)


def create_provider(settings: EmbeddingSettings) -> ProviderChoice:
    """The provider ``settings`` ask for, applying the rules in the module docstring."""
    requested = settings.provider
    if requested == "none":
        return ProviderChoice(
            None, requested, unavailable_reason="embedding provider is 'none' (keyword-only)"
        )
    if requested == "auto":
        return _choose_auto(settings)
    try:
        return ProviderChoice(build_provider(requested, settings), requested)
    except ProviderUnavailableError as exc:
        return _fallback_or_raise(settings, requested, exc)


def activate_fallback(
    settings: EmbeddingSettings, error: Exception, *, failed: str | None = None
) -> ProviderChoice:
    """Switch to ``settings.fallback`` after provider ``failed`` broke at run time.

    ``failed`` defaults to ``settings.provider``; pass the failing provider's ``id`` in auto
    mode. Re-raises ``error`` when no different fallback is configured, and raises
    :class:`ProviderUnavailableError` when the fallback cannot be built either.
    """
    source = failed or settings.provider
    target = settings.fallback
    if target == "none" or target == source:
        raise error
    provider = build_provider(target, as_fallback(settings))
    return ProviderChoice(provider, settings.provider, fallback={"from": source, "reason": str(error)})


def as_fallback(settings: EmbeddingSettings) -> EmbeddingSettings:
    """The settings the fallback provider is built with: its own model (``fallback_model``,
    else its default), never the primary's (``local`` was asked for
    ``text-embedding-3-small``, and the OpenAI endpoint for ``use-multilingual-v3``), and
    its own server (``fallback_base_url``; the primary's ``base_url`` only when the primary is
    local and so did not use it)."""
    own_url = settings.provider in ("local", "auto", "none")  # base_url was not the primary's
    url = settings.fallback_base_url or (settings.base_url if own_url else None)
    return settings.model_copy(update={"model": settings.fallback_model, "base_url": url})


def _fallback_or_raise(
    settings: EmbeddingSettings, failed: str, error: ProviderUnavailableError
) -> ProviderChoice:
    target = settings.fallback
    if target == "none" or target == failed:
        raise error
    try:
        provider = build_provider(target, as_fallback(settings))
    except ProviderUnavailableError as second:
        raise ProviderUnavailableError(
            f"{error}; fallback {target!r} is unavailable too: {second}"
        ) from second
    return ProviderChoice(provider, settings.provider, fallback={"from": failed, "reason": str(error)})


def _choose_auto(settings: EmbeddingSettings) -> ProviderChoice:
    candidates = _auto_candidates(settings)
    reasons: list[str] = []
    for name in candidates:
        own = settings if name == candidates[0] or _names_a_model_of(name, settings) else (
            as_fallback(settings))
        try:
            provider = build_provider(name, own)
        except ProviderUnavailableError as exc:
            reasons.append(str(exc))
            continue
        fallback = None
        if reasons:
            fallback = {"from": candidates[0], "reason": reasons[0]}
        return ProviderChoice(provider, "auto", fallback=fallback)
    return ProviderChoice(None, "auto", unavailable_reason="; ".join(reasons))


#: Model-name prefixes by which ``auto`` recognises a hosted service's model.
_SERVICE_MODELS = {"gemini": ("gemini-embedding", "text-embedding-004", "embedding-001"),
                   "voyage": ("voyage-",), "mistral": ("mistral-embed", "codestral-embed")}


def _auto_candidates(settings: EmbeddingSettings) -> list[str]:
    """Providers to try in order: a configured OpenAI endpoint or a service whose model is
    named (its key then from the environment); then OpenClaw's own order: a local model when
    one is present (the bundled one always is, so a key alone never moves ``auto`` off it:
    OPENAI_API_KEY or GEMINI_API_KEY are often set for a chat model), then the services whose
    key is set (openai, gemini, voyage, mistral: used when the local model cannot load);
    then the fallback."""
    model = settings.model or ""
    service = next((name for name, prefixes in _SERVICE_MODELS.items()
                    if model.startswith(prefixes)), None)
    names = ["openai"] if openai_configured(settings) and service is None else []
    if service is not None:
        names.append(service)
    names.append("local")
    names += [name for name in _keyed_services() if name not in names]
    if settings.fallback != "none" and settings.fallback not in names:
        names.append(settings.fallback)
    return names


def _keyed_services() -> list[str]:
    """The remote providers whose key is set, in OpenClaw's auto order."""
    return [name for name, variables in _KEY_VARIABLES.items()
            if any(os.environ.get(v) for v in variables)]


def _names_a_model_of(name: str, settings: EmbeddingSettings) -> bool:
    """Whether ``settings.model`` is one of provider ``name``'s models."""
    model = settings.model
    if model is None:
        return True
    if name == "local":
        return model in LOCAL_MODELS
    if name in _SERVICE_MODELS:
        return model.startswith(_SERVICE_MODELS[name])
    return model.startswith(_OPENAI_MODEL_PREFIX)


#: Where each remote provider's key is looked for (what ``auto`` reports when one is set).
_KEY_VARIABLES = {"openai": ("OPENAI_API_KEY",), "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                  "voyage": ("VOYAGE_API_KEY",), "mistral": ("MISTRAL_API_KEY",)}


def auto_reason(settings: EmbeddingSettings, chosen: str | None) -> str | None:
    """Why ``auto`` chose what it chose, for ``status`` (None unless the provider is auto)."""
    if settings.provider != "auto":
        return None
    keys = [v for variables in _KEY_VARIABLES.values() for v in variables if os.environ.get(v)]
    if chosen not in (None, "local"):
        configured = openai_configured(settings) or any(
            (settings.model or "").startswith(p) for p in _SERVICE_MODELS.get(chosen, ("\0",)))
        if configured:
            return f"auto: {chosen}, configured by embedding.model / base_url"
        return (f"auto: {chosen}, its key set ({', '.join(keys)}), because the local model "
                "could not load (OpenClaw's order: local, openai, gemini, voyage)")
    if not keys:
        return "auto: the offline local model (no remote provider configured)"
    return (f"auto: the offline local model, first in OpenClaw's order when a local model is "
            f"present; {', '.join(keys)} set, used only if it cannot load: name its model in "
            "embedding.model (or set embedding.provider) to embed with it")


def openai_configured(settings: EmbeddingSettings) -> bool:
    """Whether ``auto`` picks OpenAI: a base URL, or an OpenAI embedding model name."""
    model = settings.model or ""
    return settings.base_url is not None or model.startswith(_OPENAI_MODEL_PREFIX)


def choose_provider(settings: EmbeddingSettings,
                    embedder: EmbeddingProvider | None = None) -> ProviderChoice:
    """The provider a memory embeds with: ``embedder`` when given, else the configured one;
    an unavailable provider is a choice of none with its reason, never an exception (search
    then runs keyword-only and says why)."""
    if embedder is not None:
        return ProviderChoice(embedder, "custom", None, None)
    try:
        return create_provider(settings)
    except ProviderUnavailableError as exc:
        return ProviderChoice(None, settings.provider, None, str(exc))
