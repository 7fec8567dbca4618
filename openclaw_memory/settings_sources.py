"""Where settings come from: arguments, the environment, a file in the workspace, the defaults.

Precedence, highest first (the same order as pydantic-settings, so it surprises no one):

1. **arguments**: keyword overrides and the fields a caller set on a ``MemorySettings`` passed to
   :meth:`MemoryIndex.open <openclaw_memory.index.MemoryIndex.open>`, and CLI flags
   (``--provider``, ``--sessions``...);
2. **environment**: ``OPENCLAW_MEMORY_<FIELD>`` or ``OPENCLAW_MEMORY_<GROUP>__<FIELD>``, e.g.
   ``OPENCLAW_MEMORY_SEARCH__MAX_RESULTS=10`` (names are case-insensitive; lists and tables as
   JSON, ``extra_paths`` also as a ``:``-separated list; ``none`` or an empty value clears an
   optional setting);
3. **the workspace's** ``openclaw-memory.toml`` (tables named after the groups; relative paths are
   relative to the workspace);
4. the defaults in :mod:`openclaw_memory.config`.

Layers merge setting by setting (``search.max_results`` from the environment and
``search.fusion`` from the file both apply) and :class:`SettingsOrigin` remembers which layer
gave each one, for ``status``. A misspelt name or a bad value is a :class:`ConfigError` that
names the variable or the file, never a silent default.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError

from openclaw_memory.config import MemorySettings
from openclaw_memory.errors import ConfigError
from openclaw_memory.redact import redact_url

__all__ = ["CONFIG_FILE", "ENV_PREFIX", "SettingsOrigin", "load_settings", "set_fields", "setting_names"]

ENV_PREFIX = "OPENCLAW_MEMORY_"
CONFIG_FILE = "openclaw-memory.toml"
# Variables with the prefix that are not settings (read where they are used).
_NOT_SETTINGS = frozenset({"STATE_DIR", "CACHE_DIR", "DISABLE_VEC"})
_PATH_FIELDS = frozenset({"extra_paths", "store.path", "embedding.local_model_path"})
_SECRET_FIELDS = frozenset({"embedding.api_key"})
_ARGUMENT = "argument"
_DEFAULT = "default"


@dataclass(frozen=True)
class SettingsOrigin:
    """Which layer gave each setting that is not at its default."""

    sources: dict[str, str] = field(default_factory=dict)
    config_file: Path | None = None

    def describe(self, settings: MemorySettings) -> dict[str, Any]:
        """``{"config_file", "precedence", "settings": {name: {"value", "from"}}}`` for status."""
        values = {name: _shown(name, _get(settings, name)) for name in sorted(self.sources)}
        return {
            "config_file": str(self.config_file) if self.config_file else None,
            "precedence": "argument > environment > config file > default",
            "settings": {name: {"value": values[name], "from": self.sources[name]}
                         for name in sorted(self.sources)},
        }


def setting_names() -> dict[str, Any]:
    """Every dotted setting name with its field info (groups expanded)."""
    names: dict[str, Any] = {}
    for name, info in MemorySettings.model_fields.items():
        group = info.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            names.update({f"{name}.{sub}": sub_info for sub, sub_info in group.model_fields.items()})
        else:
            names[name] = info
    return names


def load_settings(workspace: str | os.PathLike[str] | None = None, *,
                  settings: MemorySettings | None = None,
                  overrides: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None) -> tuple[MemorySettings, SettingsOrigin]:
    """Merge the layers (module docstring) into validated settings and their origin."""
    env = os.environ if environ is None else environ
    names = setting_names()
    explicit = _explicit_layer(settings, overrides or {}, workspace)
    env_layer = _env_layer(env, names)
    root = _workspace(explicit, env_layer)
    config_path = root / CONFIG_FILE
    file_layer = _file_layer(config_path, names, root) if config_path.is_file() else {}
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer, label in ((file_layer, f"config file {config_path}"), (env_layer, "environment"),
                         (explicit, _ARGUMENT)):
        for name, (value, where) in layer.items():
            merged[name] = value
            sources[name] = where if label == "environment" else label
    merged["workspace"] = root
    try:
        resolved = MemorySettings.model_validate(_nest(merged, settings))
    except ValidationError as exc:
        raise ConfigError(_explain(exc, sources)) from None
    return resolved, SettingsOrigin(sources, config_path if config_path.is_file() else None)


# -- layers: {dotted name: (value, where it came from)} ------------------------------------------
def _explicit_layer(settings: MemorySettings | None, overrides: Mapping[str, Any],
                    workspace: str | os.PathLike[str] | None) -> dict[str, tuple[Any, str]]:
    layer: dict[str, tuple[Any, str]] = {}
    if settings is not None:
        layer.update({name: (value, _ARGUMENT) for name, value in set_fields(settings).items()})
    for name, value in overrides.items():
        if isinstance(value, Mapping) and name in MemorySettings.model_fields and name != "workspace":
            layer.update({f"{name}.{sub}": (v, _ARGUMENT) for sub, v in value.items()})
        elif isinstance(value, BaseModel):
            layer.update({f"{name}.{sub}": (v, _ARGUMENT) for sub, v in set_fields(value).items()})
        else:
            layer[name] = (value, _ARGUMENT)
    if workspace is not None:
        layer["workspace"] = (Path(workspace), _ARGUMENT)
    return layer


def set_fields(model: BaseModel) -> dict[str, Any]:
    """The fields a caller set explicitly, groups expanded (defaults are not arguments)."""
    found: dict[str, Any] = {}
    for name in model.model_fields_set:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            found.update({f"{name}.{sub}": v for sub, v in set_fields(value).items()})
        else:
            found[name] = value
    return found


def _env_layer(env: Mapping[str, str], names: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    layer: dict[str, tuple[Any, str]] = {}
    for variable, raw in env.items():
        if not variable.upper().startswith(ENV_PREFIX):
            continue
        rest = variable[len(ENV_PREFIX):].upper()
        if rest in _NOT_SETTINGS:
            continue
        name = rest.lower().replace("__", ".")
        if name not in names:
            raise ConfigError(f"environment variable {variable}: no setting {name!r} "
                              f"({_near(name, names)})")
        layer[name] = (_env_value(name, raw, names[name]), f"environment {variable}")
    return layer


def _env_value(name: str, raw: str, info: Any) -> Any:
    text = raw.strip()
    if text.lower() in {"", "none", "null"} and _optional(info):
        return None
    if name == "extra_paths" and not text.startswith("["):
        return tuple(part for part in text.split(os.pathsep) if part)
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"setting {name}: not valid JSON ({exc.msg})") from None
    return text


def _optional(info: Any) -> bool:
    return not info.is_required() and info.default is None


def _file_layer(path: Path, names: Mapping[str, Any], root: Path) -> dict[str, tuple[Any, str]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    label = f"config file {path}"
    layer: dict[str, tuple[Any, str]] = {}
    for key, value in data.items():
        if key == "workspace":
            raise ConfigError(f"config file {path}: 'workspace' cannot be set from a file inside it")
        if isinstance(value, dict) and key not in names:
            items = {f"{key}.{sub}": v for sub, v in value.items()}
        else:
            items = {key: value}
        for name, item in items.items():
            if name not in names:
                raise ConfigError(f"config file {path}: no setting {name!r} ({_near(name, names)})")
            layer[name] = (_relative_to(root, name, item), label)
    return layer


def _relative_to(root: Path, name: str, value: Any) -> Any:
    """Paths written in the workspace's file are relative to the workspace, not the cwd."""
    if name not in _PATH_FIELDS or value is None:
        return value
    if isinstance(value, list | tuple):
        return tuple(root / Path(item).expanduser() for item in value)
    return root / Path(value).expanduser()


# -- merging -------------------------------------------------------------------------------------
def _workspace(explicit: Mapping[str, tuple[Any, str]],
               env_layer: Mapping[str, tuple[Any, str]]) -> Path:
    for layer in (explicit, env_layer):
        if "workspace" in layer:
            return Path(layer["workspace"][0]).expanduser().absolute()
    return Path.cwd()


def _nest(flat: Mapping[str, Any], base: MemorySettings | None) -> dict[str, Any]:
    """Dotted names back into groups, starting from ``base``'s own values (kept as they are:
    dumping would redact credentials)."""
    nested: dict[str, Any] = {}
    if base is not None:
        nested = {name: dict(value) if isinstance(value, BaseModel) else value
                  for name, value in dict(base).items()}
    for name, value in flat.items():
        group, _, sub = name.partition(".")
        if sub:
            current = nested.get(group)
            nested[group] = {**(dict(current) if isinstance(current, Mapping) else {}), sub: value}
        else:
            nested[name] = value
    return nested


def _explain(exc: ValidationError, sources: Mapping[str, str]) -> str:
    problems = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"])
        origin = sources.get(name) or sources.get(name.split(".")[0]) or _DEFAULT
        problems.append(f"{name}: {error['msg']} (from {origin})")
    return "invalid settings: " + "; ".join(problems)


def _near(name: str, names: Mapping[str, Any]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(names), n=1)
    return f"did you mean {close[0]!r}?" if close else "see the settings in docs/configuration.md"


def _get(settings: MemorySettings, name: str) -> Any:
    value: Any = settings
    for part in name.split("."):
        value = getattr(value, part)
    return value


def _shown(name: str, value: Any) -> Any:
    """JSON-friendly and without secrets."""
    if name in _SECRET_FIELDS or isinstance(value, SecretStr):
        return "***" if value else None
    if name in ("embedding.base_url", "store.dsn") and isinstance(value, str):
        return redact_url(value)
    if name == "embedding.headers" and isinstance(value, Mapping):
        return {key: "***" for key in value}
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return [str(item) if isinstance(item, Path) else item for item in value]
    return value
