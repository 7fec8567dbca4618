"""Settings from arguments, the environment and the workspace's openclaw-memory.toml."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_entry import ENTRY_POINT
from pydantic import BaseModel

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemorySettings, SearchSettings
from openclaw_memory.errors import ConfigError
from openclaw_memory.settings_sources import load_settings, setting_names

CLI = ENTRY_POINT


def _toml(workspace: Path, text: str) -> Path:
    path = workspace / "openclaw-memory.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_setting_can_come_from_the_environment(workspace: Path) -> None:
    env = {"OPENCLAW_MEMORY_SEARCH__MAX_RESULTS": "10", "OPENCLAW_MEMORY_SEARCH__MMR": "true",
           "OPENCLAW_MEMORY_EMBEDDING__PROVIDER": "none", "OPENCLAW_MEMORY_TIMEZONE": "Asia/Tokyo",
           "OPENCLAW_MEMORY_EMBEDDING__HEADERS": '{"X-Team": "a"}',
           "OPENCLAW_MEMORY_EXTRA_PATHS": f"/a{os.pathsep}/b",
           "openclaw_memory_chunking__tokens": "200"}
    settings, origin = load_settings(workspace, environ=env)
    assert settings.search.max_results == 10 and settings.search.mmr is True
    assert settings.embedding.provider == "none" and settings.timezone == "Asia/Tokyo"
    assert settings.embedding.headers == {"X-Team": "a"} and settings.chunking.tokens == 200
    assert settings.extra_paths == (Path("/a"), Path("/b"))
    assert origin.sources["search.max_results"] == "environment OPENCLAW_MEMORY_SEARCH__MAX_RESULTS"



def _env_text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, BaseModel):  # a group inside a group (embedding.batch): JSON
        return value.model_dump_json()
    if isinstance(value, dict | list | tuple):
        return json.dumps([str(v) for v in value] if isinstance(value, tuple) else value)
    return str(value.get_secret_value() if hasattr(value, "get_secret_value") else value)


def test_every_setting_has_an_environment_variable_of_the_documented_form(workspace: Path) -> None:
    defaults = MemorySettings(workspace=workspace)
    for name in setting_names():
        if name == "workspace":
            continue
        group, _, field = name.partition(".")
        value = getattr(getattr(defaults, group), field) if field else getattr(defaults, group)
        variable = "OPENCLAW_MEMORY_" + name.upper().replace(".", "__")
        settings, origin = load_settings(workspace, environ={variable: _env_text(value)})
        assert origin.sources[name] == f"environment {variable}", name
        group_value = getattr(settings, group)
        assert (getattr(group_value, field) if field else group_value) == value, name


def test_none_or_empty_clears_an_optional_setting(workspace: Path) -> None:
    settings, _ = load_settings(workspace, settings=MemorySettings(search=SearchSettings(min_score=0.5)),
                                environ={})
    assert settings.search.min_score == 0.5
    settings, _ = load_settings(workspace, environ={"OPENCLAW_MEMORY_SEARCH__MIN_SCORE": "none"})
    assert settings.search.min_score is None


def test_the_workspace_file_is_read_and_relative_paths_are_relative_to_it(workspace: Path) -> None:
    config = _toml(workspace, 'timezone = "UTC"\nextra_paths = ["docs"]\n[search]\nmax_results = 3\n'
                              '[store]\npath = "idx/memory.sqlite"\n')
    settings, origin = load_settings(workspace, environ={})
    assert settings.search.max_results == 3 and settings.timezone == "UTC"
    assert settings.extra_paths == (workspace / "docs",)
    assert settings.store.path == workspace / "idx" / "memory.sqlite"
    assert origin.config_file == config
    assert origin.sources["search.max_results"] == f"config file {config}"


def test_precedence_is_argument_then_environment_then_file_then_default(workspace: Path) -> None:
    _toml(workspace, '[search]\nmax_results = 3\nfusion = "rrf"\nmmr_lambda = 0.5\n')
    env = {"OPENCLAW_MEMORY_SEARCH__MAX_RESULTS": "9", "OPENCLAW_MEMORY_SEARCH__FUSION": "weighted"}
    settings, origin = load_settings(workspace, overrides={"search": {"max_results": 4}}, environ=env)
    assert settings.search.max_results == 4  # argument beats environment and file
    assert settings.search.fusion == "weighted"  # environment beats file
    assert settings.search.mmr_lambda == 0.5  # file beats default
    assert settings.search.half_life_days == 30.0  # default
    assert origin.sources["search.max_results"] == "argument"
    assert origin.sources["search.fusion"].startswith("environment")
    assert "search.half_life_days" not in origin.sources


def test_a_settings_object_counts_only_the_fields_its_caller_set(workspace: Path) -> None:
    explicit = MemorySettings(workspace=workspace, search=SearchSettings(max_results=2))
    settings, origin = load_settings(settings=explicit,
                                     environ={"OPENCLAW_MEMORY_SEARCH__MMR": "1",
                                              "OPENCLAW_MEMORY_SEARCH__MAX_RESULTS": "8"})
    assert settings.search.max_results == 2 and settings.search.mmr is True
    assert origin.sources["search.mmr"].startswith("environment")


@pytest.mark.parametrize(("env", "file", "message"), [
    ({"OPENCLAW_MEMORY_SEARCH__MAX_RESULT": "3"}, None, "did you mean 'search.max_results'"),
    ({"OPENCLAW_MEMORY_SEARCH__MAX_RESULTS": "many"}, None,
     "search.max_results: Input should be a valid integer"),
    ({"OPENCLAW_MEMORY_EMBEDDING__HEADERS": "{oops"}, None, "not valid JSON"),
    ({}, "[search]\nmax_resultz = 3\n", "no setting 'search.max_resultz'"),
    ({}, "[search\n", "config file"),
    ({}, 'workspace = "/elsewhere"\n', "'workspace' cannot be set from a file"),
    ({}, "[search]\nmax_results = -1\n", "openclaw-memory.toml"),
])
def test_a_bad_name_or_value_names_its_source(workspace: Path, env: dict[str, str], file: str | None,
                                              message: str) -> None:
    if file is not None:
        _toml(workspace, file)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_settings(workspace, environ=env)


def test_other_openclaw_memory_variables_are_not_settings(workspace: Path) -> None:
    _, origin = load_settings(workspace, environ={"OPENCLAW_MEMORY_STATE_DIR": "/x",
                                                  "OPENCLAW_MEMORY_CACHE_DIR": "/y",
                                                  "OPENCLAW_MEMORY_DISABLE_VEC": "1"})
    assert set(origin.sources) == {"workspace"}


def test_memory_index_open_merges_the_layers_and_status_shows_where_each_came_from(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _toml(workspace, "[search]\nmax_results = 3\n")
    monkeypatch.setenv("OPENCLAW_MEMORY_EMBEDDING__API_KEY", "sk-secret-value")
    monkeypatch.setenv("OPENCLAW_MEMORY_EMBEDDING__PROVIDER", "none")
    with MemoryIndex.open(workspace) as memory:
        assert memory.settings.search.max_results == 3
        described = memory.status()["configuration"]
    settings = described["settings"]
    assert settings["search.max_results"]["from"].startswith("config file")
    assert settings["embedding.api_key"] == {"value": "***",
                                             "from": "environment OPENCLAW_MEMORY_EMBEDDING__API_KEY"}
    assert "sk-secret-value" not in json.dumps(described)
    assert described["precedence"] == "argument > environment > config file > default"


def test_the_cli_takes_settings_from_the_environment_and_file_and_flags_win(workspace: Path) -> None:
    _toml(workspace, '[embedding]\nprovider = "local"\n[search]\nmax_results = 1\n')
    env = {**os.environ, "OPENCLAW_MEMORY_WORKSPACE": str(workspace),
           "OPENCLAW_MEMORY_SEARCH__MIN_SCORE": "0"}
    run = subprocess.run([str(CLI), "--provider", "none", "status", "--json"], env=env,
                         capture_output=True, text=True, check=True)
    status = json.loads(run.stdout)
    settings = status["configuration"]["settings"]
    assert status["provider"] == "none"
    assert settings["embedding.provider"] == {"value": "none", "from": "argument"}
    assert settings["workspace"]["from"] == "environment OPENCLAW_MEMORY_WORKSPACE"
    assert settings["search.min_score"]["from"] == "environment OPENCLAW_MEMORY_SEARCH__MIN_SCORE"
    text = subprocess.run([str(CLI), "--provider", "none", "status"], env=env,
                          capture_output=True, text=True, check=True).stdout
    assert f"config_file: {workspace / 'openclaw-memory.toml'}" in text
    assert "search.max_results = 1  (config file" in text
    hits = subprocess.run([str(CLI), "--provider", "none", "search", "coffee", "--json"], env=env,
                          capture_output=True, text=True, check=True)
    assert len(json.loads(hits.stdout)["results"]) == 1
    bad = subprocess.run([str(CLI), "status"], capture_output=True, text=True,
                         env={**env, "OPENCLAW_MEMORY_SEARCH__MAX_RESULTS": "x"})
    assert bad.returncode == 3 and bad.stderr.count("\n") == 1
    assert "OPENCLAW_MEMORY_SEARCH__MAX_RESULTS" in bad.stderr
