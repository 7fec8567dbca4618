"""``openclaw-memory --print-completion bash|zsh``: scripts generated from the parser that a real
shell loads and answers with."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_entry import ENTRY_POINT


def script(shell: str) -> str:
    return subprocess.run([ENTRY_POINT, "--print-completion", shell], capture_output=True,
                          text=True, check=True, timeout=60).stdout


def bash_complete(line: str, tmp_path: Path) -> list[str]:
    """What bash offers for ``line`` (the cursor at its end), as the completion system calls it."""
    completion = tmp_path / "completion.bash"
    completion.write_text(script("bash"), encoding="utf-8")
    words = line.split(" ")
    program = (f'source "{completion}"\n'
               f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
               f"COMP_CWORD={len(words) - 1}\n"
               "_openclaw_memory\n"
               'printf "%s\\n" "${COMPREPLY[@]}"\n')
    run = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True,
                         check=True, cwd=tmp_path, timeout=60)
    return [w for w in run.stdout.splitlines() if w]


def test_bash_offers_the_commands(tmp_path: Path) -> None:
    assert bash_complete("openclaw-memory s", tmp_path) == ["search", "status"]
    assert set(bash_complete("openclaw-memory ", tmp_path)) == {
        "index", "search", "get", "write", "status", "eval", "watch", "publish", "export",
        "edit", "forget", "history", "consolidate"}


def test_bash_offers_a_commands_own_options_and_the_global_ones(tmp_path: Path) -> None:
    offered = bash_complete("openclaw-memory search x --", tmp_path)
    assert {"--explain", "--min-score", "--no-sync", "--workspace", "--provider"} <= set(offered)
    assert "--full" not in offered  # index's, not search's


def test_bash_offers_the_choices_of_an_option(tmp_path: Path) -> None:
    assert bash_complete("openclaw-memory --provider op", tmp_path) == ["openai"]
    assert bash_complete("openclaw-memory --provider o", tmp_path) == ["openai", "ollama"]
    assert bash_complete("openclaw-memory write x --target ", tmp_path) == ["daily", "memory"]
    assert bash_complete("openclaw-memory --print-completion z", tmp_path) == ["zsh"]


def test_bash_offers_folders_for_a_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes-ws").mkdir()
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert bash_complete("openclaw-memory --workspace not", tmp_path) == ["notes-ws"]


def test_every_option_of_every_command_is_in_both_scripts() -> None:
    from openclaw_memory.cli.parser import build_parser as _parser

    parser = _parser()
    bash, zsh = script("bash"), script("zsh")
    for action in parser._subparsers._group_actions[0].choices.values():  # type: ignore[union-attr]
        for option in action._actions:
            for flag in option.option_strings:
                assert flag in bash and flag in zsh, flag


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here")
def test_zsh_loads_the_script_and_registers_it_for_the_command(tmp_path: Path) -> None:
    completion = tmp_path / "_openclaw-memory"
    completion.write_text(script("zsh"), encoding="utf-8")
    program = (f"autoload -Uz compinit && compinit -u -d {tmp_path}/zcompdump\n"
               f"source {completion}\n"
               "print -r -- $_comps[openclaw-memory]\n"
               "whence -w _openclaw_memory\n")
    run = subprocess.run(["zsh", "-f", "-c", program], capture_output=True, text=True,
                         timeout=60, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["_openclaw_memory", "_openclaw_memory: function"]
    assert subprocess.run(["zsh", "-n", str(completion)], timeout=60).returncode == 0


def test_an_unknown_shell_is_a_usage_error() -> None:
    run = subprocess.run([ENTRY_POINT, "--print-completion", "fish"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and "invalid choice: 'fish'" in run.stderr
