"""What a newcomer meets at the shell: a closed pipe ends quietly, conflicting options and a
backwards line range are clear errors, and the score scale is explained where hits print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_entry import ENTRY_POINT


def _env(tmp_path: Path) -> dict[str, str]:
    return {"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"}


def test_a_reader_closing_the_pipe_early_ends_the_command_quietly(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for n in range(300):
        (ws / "memory" / f"note-{n}.md").write_text(f"- heron deploy step {n}: " + "words " * 80)
    command = [ENTRY_POINT, "--workspace", str(ws), "--provider", "none", "search", "heron",
               "-k", "200", "--json"]
    # No injection budget: ~150 KB of JSON, more than a pipe holds.
    env = {**_env(tmp_path), "OPENCLAW_MEMORY_SEARCH__MAX_INJECTED_CHARS": "0"}
    reader = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.read(10)
    reader.stdout.close()  # as `| head -c 10` does
    err = reader.stderr.read().decode()
    assert reader.wait(timeout=120) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_sample_and_workspace_together_are_refused(tmp_path: Path) -> None:
    out = subprocess.run([ENTRY_POINT, "--sample", "--workspace", str(tmp_path), "status"],
                         capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert out.returncode == 3 and "give --sample or --workspace, not both" in out.stderr


def test_a_backwards_line_range_is_an_error_not_empty_text(tmp_path: Path) -> None:
    out = subprocess.run([ENTRY_POINT, "--sample", "get", "MEMORY.md#L2-L1"],
                         capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert out.returncode == 3 and "not a range of lines" in out.stderr and out.stdout == ""


def test_search_output_says_what_the_score_is(tmp_path: Path) -> None:
    out = subprocess.run([ENTRY_POINT, "--sample", "search", "billing database"],
                         capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert out.returncode == 0 and "score = relevance, 0 to 1" in out.stdout


def test_opening_a_new_folder_with_create_makes_it_and_writes_work(tmp_path: Path) -> None:
    import stat

    from openclaw_memory import MemoryIndex
    from openclaw_memory.errors import WorkspaceError

    new = tmp_path / "agent-workspace"
    with MemoryIndex.open(new, index_path=tmp_path / "i.sqlite",
                          embedding={"provider": "none"}) as memory:
        assert not memory.search("billing").results
        try:
            memory.write("Decided to keep the nightly export.")
        except WorkspaceError as exc:  # a mistyped path does not start a new memory quietly
            assert "does not exist" in str(exc)
        else:
            raise AssertionError("wrote into a folder that does not exist")
    with MemoryIndex.open(new, index_path=tmp_path / "i.sqlite", create=True,
                          embedding={"provider": "none"}) as memory:
        assert memory.write("Decided to keep the nightly export.").written
        assert stat.S_IMODE((new / "memory").stat().st_mode) == 0o700
        assert memory.search("nightly export").results


def test_a_commands_help_describes_it_and_points_at_the_global_options(tmp_path: Path) -> None:
    out = subprocess.run([ENTRY_POINT, "get", "--help"], capture_output=True, text=True,
                         env=_env(tmp_path), timeout=120)
    assert out.returncode == 0 and "read lines of a memory file" in out.stdout
    assert "--workspace WORKSPACE" not in out.stdout  # not repeated under every command
    assert "go before or after the command" in out.stdout
    top = subprocess.run([ENTRY_POINT, "--help"], capture_output=True, text=True,
                         env=_env(tmp_path), timeout=120)
    assert "``" not in top.stdout and "--workspace WORKSPACE" in top.stdout


def test_importing_the_agent_surfaces_prints_no_warning() -> None:
    run = subprocess.run([sys.executable, "-W", "always", "-c",
                          "import openclaw_memory.langchain, openclaw_memory.langgraph"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Warning" not in run.stderr, run.stderr  # pydantic's ArbitraryTypeWarning once was
