"""The ``openclaw-memory`` command as scripts use it: real processes, exit codes, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_entry import ENTRY_POINT
from fs_snapshot import snapshot


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([ENTRY_POINT, *args], cwd=cwd,
                          env=full_env, capture_output=True, text=True, timeout=120)


@pytest.fixture()
def cli(workspace: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return run("--workspace", str(workspace), "--index", str(tmp_path / "cli.sqlite"),
                   "--provider", "none", *args)
    return call


def test_index_then_search_json_has_the_documented_shape(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("index").returncode == 0
    out = cli("search", "PostgreSQL billing", "--json", "-k", "2")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "keyword-only" and len(data["results"]) <= 2
    hit = data["results"][0]
    assert {"path", "start_line", "end_line", "score", "snippet", "source", "citation"} <= set(hit)
    assert hit["path"] == "MEMORY.md"
    assert "Source:" not in hit["snippet"]  # the citation is a field, not repeated in the text


def test_search_min_score_option_filters(cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("search", "xylophone", "--json", "--min-score", "0.5").stdout)
    assert data["results"] == []


def test_get_reads_line_ranges_and_json(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("get", "MEMORY.md", "--from", "3", "--lines", "1")
    assert out.returncode == 0 and out.stdout.strip() == "- We chose PostgreSQL for the billing service."
    data = json.loads(cli("get", "memory/none.md", "--json").stdout)
    assert data["text"] == "" and data["missing"] is True


def test_path_outside_the_gate_is_a_one_line_error_with_exit_3(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("get", "../../etc/passwd.md")
    assert out.returncode == 3
    assert out.stderr.startswith("openclaw-memory: error: path refused")
    assert len(out.stderr.strip().splitlines()) == 1


def test_write_appends_to_todays_daily_file_and_is_searchable(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    out = cli("write", "The wifi password at the cabin is on the fridge.")
    assert out.returncode == 0 and out.stdout.startswith("appended to memory/")
    again = cli("write", "The wifi password at the cabin is on the fridge.")
    assert "duplicate" in again.stdout
    data = json.loads(cli("search", "cabin wifi", "--json").stdout)
    assert data["results"][0]["path"].startswith("memory/20")


def test_status_json_reports_paths_and_counts(cli) -> None:  # type: ignore[no-untyped-def]
    cli("index")
    data = json.loads(cli("status", "--json").stdout)
    assert data["files"] == 4 and data["provider"] == "none" and data["dirty"] is False
    assert data["backend"] == "sqlite"  # as a PostgreSQL status says "postgres"
    assert data["vector_path"] in ("vec0", "numpy") and data["vector_reason"]
    assert data["last_sync_at"] is not None


def test_usage_error_exits_2() -> None:
    assert run("search").returncode == 2


def test_missing_workspace_exits_3(tmp_path: Path) -> None:
    out = run("--workspace", str(tmp_path / "nope"), "status")
    assert out.returncode == 3 and "not a directory" in out.stderr


def test_workspace_defaults_to_env_then_cwd(workspace: Path, tmp_path: Path) -> None:
    env = {"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state")}
    by_env = run("--provider", "none", "status", "--json",
                 env={**env, "OPENCLAW_MEMORY_WORKSPACE": str(workspace)}, cwd=tmp_path)
    assert json.loads(by_env.stdout)["workspace"] == str(workspace)
    by_cwd = run("--provider", "none", "status", "--json", env=env, cwd=workspace)
    assert json.loads(by_cwd.stdout)["workspace"] == str(workspace)
    index = Path(json.loads(by_cwd.stdout)["index_path"])
    assert index.is_relative_to(tmp_path / "state") and "memory" not in index.parts


def test_sample_workspace_search_works_offline_with_the_default_provider(tmp_path: Path) -> None:
    out = run("--sample", "search", "which database did we choose for billing?",
              env={"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state")})
    assert out.returncode == 0, out.stderr
    assert "mode: hybrid (local/" in out.stdout and "PostgreSQL" in out.stdout


def test_cli_indexing_leaves_markdown_untouched(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    before = snapshot(workspace)
    cli("index", "--full")
    cli("search", "anything")
    assert snapshot(workspace) == before


def test_get_reads_back_a_citation_that_search_printed(cli) -> None:  # type: ignore[no-untyped-def]
    hit = json.loads(cli("search", "Frankfurt invoice renderer", "--json").stdout)["results"][0]
    out = cli("get", hit["citation"])
    assert out.returncode == 0, out.stderr
    assert "Deployed the invoice renderer to Frankfurt." in out.stdout
    one = cli("get", "memory/2026-01-10.md#L4", "--json")
    assert json.loads(one.stdout)["text"] == "- Ticket BILL-482: zero-amount invoices crash the PDF job."


def test_an_explicitly_requested_provider_that_is_unavailable_is_loud_and_status_truthful(
        workspace: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    base = ["--workspace", str(workspace)]
    assert run(*base, "index", env={**env, "OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "s")}).returncode == 0
    local_files = sorted((tmp_path / "s" / "indexes").iterdir())
    before = [p.read_bytes() for p in local_files]
    full = {**env, "OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "s")}
    out = subprocess.run([sys.executable, "-m", "openclaw_memory", *base, "--provider", "openai", "index"],
                         env=full, capture_output=True, text=True, timeout=120)
    assert out.returncode == 3
    assert "warning: embedding provider 'openai' is unavailable" in out.stderr
    assert "keyword-only" in out.stderr
    status = json.loads(subprocess.run(
        [sys.executable, "-m", "openclaw_memory", *base, "--provider", "openai", "status", "--json"],
        env=full, capture_output=True, text=True, timeout=120).stdout)
    assert status["mode"] == "keyword-only" and status["vectors"] == 0 and status["mode_reason"]
    # The default (local) index was not rebuilt keyword-only behind the user's back.
    assert [p.read_bytes() for p in local_files] == before
    local = json.loads(run(*base, "status", "--json", env=full).stdout)
    assert local["mode"] == "hybrid" and local["vectors"] > 0


def test_options_are_accepted_after_the_command_and_values_are_validated(
        cli, workspace: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = run("search", "PostgreSQL", "--workspace", str(workspace), "--index",
              str(tmp_path / "late.sqlite"), "--provider", "none", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["path"] == "MEMORY.md"
    for bad in (["-k", "0"], ["-k", "-5"], ["-k", "many"], ["--min-score", "2"]):
        res = cli("search", "PostgreSQL", *bad)
        assert res.returncode == 2 and "error: argument" in res.stderr, bad
    missing = cli("get", "memory/none.md")
    assert missing.returncode == 3 and "does not exist" in missing.stderr
    past = cli("get", "MEMORY.md", "--from", "500")
    assert past.returncode == 3 and "past its end" in past.stderr


def test_a_malformed_citation_is_one_error_line_showing_the_form(cli) -> None:  # type: ignore[no-untyped-def]
    for command in (["get", "MEMORY.md#Lx"], ["get", "MEMORY.md#L3-"],
                    ["edit", "MEMORY.md#Lthree", "--expected", "a", "--to", "b"],
                    ["forget", "memory/2026-01-01.md#3", "--expected", "a"]):
        res = cli(*command)
        assert res.returncode == 3 and res.stderr.count("\n") == 1, (command, res.stderr)
        assert "is not a citation: write PATH#L<line>" in res.stderr, res.stderr


def test_version_and_write_from_standard_input(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    from openclaw_memory import __version__

    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"openclaw-memory {__version__}"
    wrote = subprocess.run([sys.executable, "-m", "openclaw_memory", "--workspace", str(workspace),
                            "--provider", "none", "write", "-", "--json"], input="- A note from a pipe.\n",
                           capture_output=True, text=True, timeout=120)
    assert wrote.returncode == 0, wrote.stderr
    data = json.loads(wrote.stdout)
    assert data["written"] and data["citation"].endswith("#L1")
    assert "- A note from a pipe." in (workspace / data["path"]).read_text()


def test_search_shows_when_each_fact_was_learned_and_which_a_newer_one_replaces(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- The user lives in Paris and works at Acme.\n",
                                  encoding="utf-8")
    (ws / "memory" / "2026-10-02.md").write_text("- The user told me they moved to Berlin.\n",
                                                 encoding="utf-8")
    out = run("--workspace", str(ws), "--index", str(tmp_path / "i.sqlite"), "search",
              "Where does the user live?")
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.split("\n\n")[1:3]
    assert first.startswith("1. memory/2026-10-02.md#L1") and "as of 2026-10-02" in first
    assert second.startswith("2. MEMORY.md#L1")
    assert "superseded by memory/2026-10-02.md#L1" in second
