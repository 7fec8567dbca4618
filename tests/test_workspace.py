"""The path-safety gate and file discovery, attacked from every side we could think of."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from privileges import CAN_TEST_PERMISSIONS, unprivileged_copy

from openclaw_memory.errors import PathRefusedError
from openclaw_memory.files.workspace import IGNORED_DIR_NAMES, Workspace, is_daily


def write(path: Path, text: str = "note\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Curated\n")
    write(ws / "memory" / "2024-05-01.md", "daily\n")
    write(ws / "memory" / "projects" / "alpha.md", "alpha\n")
    write(ws / "README.md", "not memory\n")
    return ws


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace holding a secret the gate must never reach."""
    return write(tmp_path / "outside" / "secret.md", "secret\n").parent


def refused(ws: Workspace, path: str | os.PathLike[str], purpose: str = "read") -> bool:
    try:
        ws.resolve(path, purpose=purpose)  # type: ignore[arg-type]
    except PathRefusedError:
        return True
    return False


def rels(ws: Workspace, **kwargs: int) -> list[str]:
    return [f.path for f in ws.discover(**kwargs).files]


# ---------------------------------------------------------------------------- the gate accepts


def test_gate_classifies_curated_daily_and_other_memory_files(root: Path) -> None:
    ws = Workspace(root)
    assert ws.resolve("MEMORY.md").kind == "memory_md"
    assert ws.resolve("memory/2024-05-01.md").kind == "daily"
    assert ws.resolve("memory/projects/alpha.md").kind == "memory_other"
    assert ws.resolve("memory/2024-02-30.md").kind == "memory_other"  # not a real date


def test_gate_returns_workspace_relative_posix_path_and_absolute_path(root: Path) -> None:
    resolved = Workspace(root).resolve("./memory//projects/./alpha.md")
    assert resolved.rel_path == "memory/projects/alpha.md"
    assert resolved.abs_path == root / "memory" / "projects" / "alpha.md"
    assert resolved.exists


def test_gate_accepts_lowercase_memory_md_at_root(root: Path) -> None:
    assert Workspace(root).resolve("memory.md").kind == "memory_md"


def test_gate_trims_surrounding_whitespace_like_openclaw(root: Path) -> None:
    assert Workspace(root).resolve("  MEMORY.md \n").rel_path == "MEMORY.md"


def test_gate_accepts_absolute_path_inside_the_workspace(root: Path) -> None:
    resolved = Workspace(root).resolve(str(root / "memory" / "2024-05-01.md"))
    assert resolved.rel_path == "memory/2024-05-01.md"


def test_gate_accepts_pathlike_objects(root: Path) -> None:
    assert Workspace(root).resolve(Path("memory/projects/alpha.md")).exists


def test_gate_passes_missing_files_for_read_and_write(root: Path) -> None:
    ws = Workspace(root)
    for purpose in ("read", "write"):
        resolved = ws.resolve("memory/new/deeper/note.md", purpose=purpose)
        assert not resolved.exists


def test_gate_accepts_names_with_spaces_and_non_ascii(root: Path) -> None:
    write(root / "memory" / "réunion d'équipe" / "日本語 メモ.md")
    resolved = Workspace(root).resolve("memory/réunion d'équipe/日本語 メモ.md")
    assert resolved.exists
    assert resolved.rel_path == "memory/réunion d'équipe/日本語 メモ.md"


def test_gate_allows_a_symlinked_workspace_root_chosen_by_the_user(
    root: Path, tmp_path: Path
) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(root, target_is_directory=True)
    ws = Workspace(link)
    assert ws.resolve("MEMORY.md").exists
    # Both spellings of the root are the same workspace.
    assert ws.resolve(str(link / "MEMORY.md")).rel_path == "MEMORY.md"
    assert ws.resolve(str(root.resolve() / "MEMORY.md")).rel_path == "MEMORY.md"


# ---------------------------------------------------------------------------- the gate refuses


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.md",
        "memory/../MEMORY.md",  # lands inside, still refused: no ".." at all
        "memory/../../outside/secret.md",
        "memory/projects/../../../outside/secret.md",
        "..",
        "../",
    ],
)
def test_gate_rejects_traversal(root: Path, outside: Path, path: str) -> None:
    assert refused(Workspace(root), path)


def test_gate_rejects_absolute_traversal_that_starts_inside(root: Path, outside: Path) -> None:
    assert refused(Workspace(root), f"{root}/memory/../../outside/secret.md")


@pytest.mark.parametrize("path", ["", " ", "\t\n", "/", "./", "memory/"])
def test_gate_rejects_empty_or_whitespace_or_folder_only(root: Path, path: str) -> None:
    assert refused(Workspace(root), path)


@pytest.mark.parametrize(
    "path",
    ["MEMORY.md\x00", "memory/a\x00.md", "memory/a.md\x00.txt", "memory/\x00/../x.md"],
)
def test_gate_rejects_nul_bytes(root: Path, path: str) -> None:
    assert refused(Workspace(root), path)


@pytest.mark.parametrize(
    "path", ["memory\\2024-05-01.md", "memory\\..\\..\\outside\\secret.md", "..\\x.md"]
)
def test_gate_rejects_backslash_separators(root: Path, path: str) -> None:
    assert refused(Workspace(root), path)


@pytest.mark.parametrize("path", ["memory/a\nb.md", "memory/a\rb.md", "memory/\x1b[31m.md"])
def test_gate_rejects_control_characters(root: Path, path: str) -> None:
    assert refused(Workspace(root), path)


@pytest.mark.parametrize(
    "path",
    [
        "MEMORY.MD",
        "memory/2024-05-01.MD",
        "memory/notes.Md",
        "memory/notes.txt",
        "memory/notes.md.bak",
        "memory/notes.jsonl",
        "memory/notes",
        "memory/notes.md/",
        "memory/notes.md/.",
    ],
)
def test_gate_rejects_anything_not_ending_in_lowercase_md(root: Path, path: str) -> None:
    assert refused(Workspace(root), path)


@pytest.mark.parametrize(
    "path", ["README.md", "notes/a.md", "sub/MEMORY.md", "memory.md/x.md", "Memory/x.md"]
)
def test_gate_rejects_workspace_files_outside_the_allowlist(root: Path, path: str) -> None:
    write(root / "notes" / "a.md")
    assert refused(Workspace(root), path)


def test_gate_rejects_absolute_paths_outside_the_allowed_roots(root: Path, outside: Path) -> None:
    ws = Workspace(root)
    assert refused(ws, str(outside / "secret.md"))
    assert refused(ws, "/etc/passwd")
    assert refused(ws, "/etc/x.md")
    assert refused(ws, "/memory/x.md")  # "memory/" of the file-system root, not the workspace


def test_gate_rejects_a_sibling_whose_name_starts_like_the_root(root: Path) -> None:
    evil = write(root.parent / (root.name + "-evil") / "MEMORY.md")
    assert refused(Workspace(root), str(evil))


def test_gate_rejects_symlinked_file_pointing_outside(root: Path, outside: Path) -> None:
    (root / "memory" / "leak.md").symlink_to(outside / "secret.md")
    assert refused(Workspace(root), "memory/leak.md")


def test_gate_rejects_symlinked_file_pointing_inside(root: Path) -> None:
    (root / "memory" / "alias.md").symlink_to(root / "MEMORY.md")
    assert refused(Workspace(root), "memory/alias.md")


def test_gate_rejects_symlinked_memory_md(root: Path, outside: Path) -> None:
    (root / "MEMORY.md").unlink()
    (root / "MEMORY.md").symlink_to(outside / "secret.md")
    assert refused(Workspace(root), "MEMORY.md")


def test_gate_rejects_dangling_symlink_even_for_write(root: Path, tmp_path: Path) -> None:
    (root / "memory" / "2024-06-01.md").symlink_to(tmp_path / "would-be-created.md")
    assert refused(Workspace(root), "memory/2024-06-01.md", purpose="write")
    assert not (tmp_path / "would-be-created.md").exists()


def test_gate_rejects_symlinked_memory_directory(tmp_path: Path, outside: Path) -> None:
    ws_root = tmp_path / "ws2"
    ws_root.mkdir()
    (ws_root / "memory").symlink_to(outside, target_is_directory=True)
    assert refused(Workspace(ws_root), "memory/secret.md")
    assert refused(Workspace(ws_root), "memory/new.md", purpose="write")


def test_gate_rejects_symlinked_intermediate_directory(root: Path, outside: Path) -> None:
    (root / "memory" / "projects" / "linked").symlink_to(outside, target_is_directory=True)
    assert refused(Workspace(root), "memory/projects/linked/secret.md")
    assert refused(Workspace(root), str(root / "memory/projects/linked/secret.md"))


def test_gate_rejects_directory_named_like_markdown(root: Path) -> None:
    (root / "memory" / "folder.md").mkdir()
    assert refused(Workspace(root), "memory/folder.md")


def test_gate_rejects_a_file_used_as_a_directory(root: Path) -> None:
    assert refused(Workspace(root), "memory/2024-05-01.md/x.md")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_gate_rejects_fifo(root: Path) -> None:
    os.mkfifo(root / "memory" / "pipe.md")
    assert refused(Workspace(root), "memory/pipe.md")


@pytest.mark.parametrize("bad", [None, 42, b"MEMORY.md"])
def test_gate_rejects_values_that_are_not_text_paths(root: Path, bad: object) -> None:
    assert refused(Workspace(root), bad)  # type: ignore[arg-type]


def test_gate_error_message_is_identical_and_reveals_nothing(root: Path, outside: Path) -> None:
    (root / "memory" / "leak.md").symlink_to(outside / "secret.md")
    attempts = [
        "../outside/secret.md",
        str(outside / "secret.md"),
        str(outside / "missing.md"),
        "memory/leak.md",
        "memory/x.txt",
        "README.md",
        "",
        "a\x00.md",
    ]
    messages = set()
    for attempt in attempts:
        with pytest.raises(PathRefusedError) as info:
            Workspace(root).resolve(attempt)
        messages.add(str(info.value))
    assert len(messages) == 1
    message = messages.pop()
    assert "outside" not in message and "secret" not in message and str(root) not in message


# ---------------------------------------------------------------------------- extra paths


def test_gate_accepts_extra_file_and_folder_outside_the_workspace(
    root: Path, tmp_path: Path
) -> None:
    docs = write(tmp_path / "docs" / "guide" / "setup.md").parents[1]
    single = write(tmp_path / "single" / "one.md")
    ws = Workspace(root, extra_paths=[docs, single])
    guide = ws.resolve(str(docs / "guide" / "setup.md"))
    assert guide.kind == "extra"
    assert guide.rel_path == str(docs / "guide" / "setup.md")  # absolute display path
    assert ws.resolve(str(single)).kind == "extra"


def test_gate_accepts_extra_folder_inside_the_workspace_by_relative_path(root: Path) -> None:
    write(root / "notes" / "a.md")
    ws = Workspace(root, extra_paths=[Path("notes")])  # relative to the workspace
    resolved = ws.resolve("notes/a.md")
    assert (resolved.kind, resolved.rel_path) == ("extra", "notes/a.md")


def test_gate_rejects_file_next_to_a_configured_extra_file(root: Path, tmp_path: Path) -> None:
    single = write(tmp_path / "single" / "one.md")
    write(tmp_path / "single" / "two.md")
    ws = Workspace(root, extra_paths=[single])
    assert refused(ws, str(tmp_path / "single" / "two.md"))


def test_gate_rejects_prefix_lookalike_of_an_extra_folder(root: Path, tmp_path: Path) -> None:
    docs = write(tmp_path / "docs" / "a.md").parent
    evil = write(tmp_path / "docs-evil" / "a.md")
    assert refused(Workspace(root, extra_paths=[docs]), str(evil))


def test_gate_rejects_symlinked_extra_root(root: Path, tmp_path: Path, outside: Path) -> None:
    link = tmp_path / "docs-link"
    link.symlink_to(outside, target_is_directory=True)
    assert refused(Workspace(root, extra_paths=[link]), str(link / "secret.md"))


def test_gate_rejects_symlink_inside_an_extra_folder(
    root: Path, tmp_path: Path, outside: Path
) -> None:
    docs = write(tmp_path / "docs" / "a.md").parent
    (docs / "sub").symlink_to(outside, target_is_directory=True)
    (docs / "leak.md").symlink_to(outside / "secret.md")
    ws = Workspace(root, extra_paths=[docs])
    assert refused(ws, str(docs / "sub" / "secret.md"))
    assert refused(ws, str(docs / "leak.md"))


def test_gate_refuses_writes_to_extra_paths(root: Path, tmp_path: Path) -> None:
    docs = write(tmp_path / "docs" / "a.md").parent
    ws = Workspace(root, extra_paths=[docs])
    assert not refused(ws, str(docs / "a.md"), purpose="read")
    assert refused(ws, str(docs / "a.md"), purpose="write")


# ---------------------------------------------------------------------------- TOCTOU


def test_open_refuses_a_symlink_swapped_in_after_the_check(root: Path, outside: Path) -> None:
    ws = Workspace(root)
    resolved = ws.resolve("memory/late.md")
    (root / "memory" / "late.md").symlink_to(outside / "secret.md")
    with pytest.raises(PathRefusedError):
        ws.read_bytes(resolved)
    with pytest.raises(PathRefusedError):
        ws.open_file(resolved, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    assert (outside / "secret.md").read_text() == "secret\n"


def test_open_refuses_a_directory_swapped_for_a_symlink_after_the_check(
    root: Path, outside: Path
) -> None:
    ws = Workspace(root)
    write(root / "memory" / "swap" / "secret.md", "mine\n")
    resolved = ws.resolve("memory/swap/secret.md")
    (root / "memory" / "swap" / "secret.md").unlink()
    (root / "memory" / "swap").rmdir()
    (root / "memory" / "swap").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefusedError):
        ws.read_bytes(resolved)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_open_does_not_hang_on_a_fifo_swapped_in_after_the_check(root: Path) -> None:
    ws = Workspace(root)
    resolved = ws.resolve("memory/pipe.md")
    os.mkfifo(root / "memory" / "pipe.md")
    with pytest.raises(PathRefusedError):
        ws.read_bytes(resolved)


def test_open_with_create_parents_makes_missing_folders(root: Path) -> None:
    ws = Workspace(root)
    resolved = ws.resolve("memory/a/b/c.md", purpose="write")
    fd = ws.open_file(resolved, os.O_WRONLY | os.O_CREAT, create_parents=True)
    os.close(fd)
    assert (root / "memory" / "a" / "b" / "c.md").is_file()


# ---------------------------------------------------------------------------- property test

_PIECES = st.sampled_from(
    ["memory", "MEMORY.md", "memory.md", "..", ".", "", "x.md", "a", "é.md", "\\", " ", "\x00"]
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(_PIECES, max_size=6), absolute=st.booleans())
def test_gate_never_resolves_outside_the_workspace_memory_allowlist(
    root: Path, pieces: list[str], absolute: bool
) -> None:
    candidate = "/".join(pieces)
    if absolute:
        candidate = f"{root}/{candidate}"
    try:
        resolved = Workspace(root).resolve(candidate)
    except PathRefusedError:
        return
    inside = resolved.abs_path.relative_to(root).as_posix()  # raises if outside
    assert inside == resolved.rel_path
    assert inside in ("MEMORY.md", "memory.md") or inside.startswith("memory/")
    assert inside.endswith(".md") and ".." not in inside.split("/")


# ---------------------------------------------------------------------------- discovery


def test_discovery_finds_root_files_memory_tree_sorted(root: Path) -> None:
    write(root / "memory.md", "lower\n")
    result = Workspace(root).discover()
    assert [f.path for f in result.files] == [
        "MEMORY.md",
        "memory.md",
        "memory/2024-05-01.md",
        "memory/projects/alpha.md",
    ]
    assert all(f.source == "memory" for f in result.files)
    assert "README.md" not in {f.path for f in result.files}
    assert result.skipped == ()


def test_discovery_records_lstat_size_and_mtime(root: Path) -> None:
    found = {f.path: f for f in Workspace(root).discover().files}
    info = os.lstat(root / "MEMORY.md")
    assert found["MEMORY.md"].size == info.st_size
    assert found["MEMORY.md"].mtime_ns == info.st_mtime_ns
    assert found["MEMORY.md"].abs_path == str(root / "MEMORY.md")


def test_discovery_ignores_non_markdown_files_silently(root: Path) -> None:
    write(root / "memory" / "photo.png")
    write(root / "memory" / "notes.txt")
    write(root / "memory" / "UPPER.MD")
    result = Workspace(root).discover()
    assert "memory/photo.png" not in rels(Workspace(root))
    assert "memory/UPPER.MD" not in rels(Workspace(root))
    assert result.skipped == ()


def test_discovery_skips_and_counts_symlinks(root: Path, outside: Path) -> None:
    (root / "memory" / "leak.md").symlink_to(outside / "secret.md")
    (root / "memory" / "linked-dir").symlink_to(outside, target_is_directory=True)
    (root / "memory.md").symlink_to(root / "MEMORY.md")
    result = Workspace(root).discover()
    assert {(s.path, s.reason) for s in result.skipped} == {
        ("memory/leak.md", "symlink"),
        ("memory/linked-dir", "symlink"),
        ("memory.md", "symlink"),
    }
    assert not any("secret" in f.path for f in result.files)


def test_discovery_never_walks_a_symlinked_memory_directory(tmp_path: Path, outside: Path) -> None:
    ws_root = tmp_path / "ws2"
    ws_root.mkdir()
    (ws_root / "memory").symlink_to(outside, target_is_directory=True)
    result = Workspace(ws_root).discover()
    assert result.files == ()
    assert [(s.path, s.reason) for s in result.skipped] == [("memory", "symlink")]


def test_discovery_skips_ignored_directories(root: Path) -> None:
    for name in IGNORED_DIR_NAMES:
        write(root / "memory" / name / "hidden.md")
    assert rels(Workspace(root)) == [
        "MEMORY.md",
        "memory/2024-05-01.md",
        "memory/projects/alpha.md",
    ]


def test_discovery_skips_files_over_the_size_limit(root: Path) -> None:
    write(root / "memory" / "big.md", "x" * 101)
    result = Workspace(root).discover(max_file_bytes=100)
    assert "memory/big.md" not in [f.path for f in result.files]
    assert [(s.path, s.reason) for s in result.skipped] == [("memory/big.md", "too large")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_discovery_reports_a_fifo_named_like_markdown(root: Path) -> None:
    os.mkfifo(root / "memory" / "pipe.md")
    result = Workspace(root).discover()
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("memory/pipe.md", "not a regular file")
    ]


def test_discovery_walks_a_directory_named_like_markdown(root: Path) -> None:
    write(root / "memory" / "folder.md" / "inner.md")
    assert "memory/folder.md/inner.md" in rels(Workspace(root))


def test_discovery_reports_a_file_removed_mid_walk(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = write(root / "memory" / "projects" / "gone.md")
    real_scandir = os.scandir

    @contextlib.contextmanager
    def scandir_then_delete(path: str) -> Iterator[Iterator[os.DirEntry[str]]]:
        with real_scandir(path) as it:
            entries = list(it)
        if Path(path) == victim.parent:
            victim.unlink()  # the entry was listed, then the file went away
        yield iter(entries)

    monkeypatch.setattr(os, "scandir", scandir_then_delete)
    result = Workspace(root).discover()
    assert ("memory/projects/gone.md", "vanished") in {(s.path, s.reason) for s in result.skipped}
    assert "memory/projects/alpha.md" in [f.path for f in result.files]


@pytest.mark.skipif(
    not CAN_TEST_PERMISSIONS,
    reason="running as root with no 'nobody' user to drop to: nothing can be made unreadable",
)
def test_discovery_reports_a_folder_it_cannot_read(root: Path) -> None:
    # As root, discovery runs as 'nobody' over a copy that nobody owns, but not 'locked/'.
    with unprivileged_copy(root) as (ws, run):
        locked = write(ws / "memory" / "locked" / "x.md").parent
        locked.chmod(0)
        try:
            result = run(Workspace(ws).discover)
        finally:
            locked.chmod(0o755)
    assert ("memory/locked", "unreadable: permission denied") in {
        (s.path, s.reason) for s in result.skipped
    }
    assert "memory/2024-05-01.md" in [f.path for f in result.files]


def test_discovery_includes_extra_file_and_folder_inside_and_outside(
    root: Path, tmp_path: Path
) -> None:
    write(root / "notes" / "inside.md")
    docs = write(tmp_path / "docs" / "deep" / "guide.md").parents[1]
    write(tmp_path / "docs" / "ignored.txt")
    single = write(tmp_path / "single.md")
    ws = Workspace(root, extra_paths=[Path("notes"), docs, single])
    found = rels(ws)
    assert "notes/inside.md" in found
    assert f"{docs}/deep/guide.md" in found
    assert str(single) in found
    assert not any(p.endswith(".txt") for p in found)


def test_discovery_reports_problems_with_extra_paths(
    root: Path, tmp_path: Path, outside: Path
) -> None:
    link = tmp_path / "docs-link"
    link.symlink_to(outside, target_is_directory=True)
    text = write(tmp_path / "plain.txt")
    ws = Workspace(root, extra_paths=[link, text, tmp_path / "missing"])
    skipped = {(s.path, s.reason) for s in ws.discover().skipped}
    assert skipped == {
        (str(link), "symlink"),
        (str(text), "not markdown"),
        (str(tmp_path / "missing"), "not found"),
    }


def test_discovery_deduplicates_overlapping_roots_first_wins(root: Path) -> None:
    ws = Workspace(
        root, extra_paths=[root / "memory", root / "memory" / "projects", root / "MEMORY.md"]
    )
    found = rels(ws)
    assert found == ["MEMORY.md", "memory/2024-05-01.md", "memory/projects/alpha.md"]


def test_discovery_skips_hard_linked_files_with_a_reason(root: Path) -> None:
    os.link(root / "memory" / "projects" / "alpha.md", root / "memory" / "projects" / "beta.md")
    result = Workspace(root).discover()
    found = [f.path for f in result.files]
    assert "memory/projects/alpha.md" not in found and "memory/projects/beta.md" not in found
    assert any(s.path.startswith("memory/projects/") and "hard link" in s.reason
               for s in result.skipped)


def test_discovery_handles_spaces_non_ascii_and_deep_nesting(root: Path) -> None:
    deep = root / "memory"
    for level in range(60):
        deep = deep / f"niveau {level} é"
    write(deep / "très profond 日本.md")
    write(root / "memory" / "with space.md")
    found = rels(Workspace(root))
    assert "memory/with space.md" in found
    assert any(p.endswith("très profond 日本.md") and p.count("/") == 61 for p in found)


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS refuses such file names")
@pytest.mark.parametrize(
    ("raw_name", "shown"),
    [
        (b"bad\xff.md", "memory/bad\\udcff.md"),  # not UTF-8
        (b"back\\slash.md", "memory/back\\slash.md"),  # the gate could never accept it
        (b"new\nline.md", "memory/new\\nline.md"),
    ],
)
def test_discovery_skips_file_names_the_gate_cannot_accept(
    root: Path, raw_name: bytes, shown: str
) -> None:
    with open(os.path.join(os.fsencode(root / "memory"), raw_name), "w") as handle:
        handle.write("x")
    result = Workspace(root).discover()
    assert [(s.path, s.reason) for s in result.skipped] == [(shown, "unsupported file name")]


def test_discovered_paths_resolve_back_to_the_same_files(root: Path, tmp_path: Path) -> None:
    write(root / "notes" / "inside.md")
    docs = write(tmp_path / "docs" / "a b" / "c.md").parents[1]
    ws = Workspace(root, extra_paths=[Path("notes"), docs])
    for found in ws.discover().files:
        assert str(ws.resolve(found.path).abs_path) == found.abs_path


def test_discovery_is_deterministic(root: Path) -> None:
    for index in range(50):
        write(root / "memory" / f"n{index % 7}" / f"{index}.md")
    assert Workspace(root).discover() == Workspace(root).discover()


def test_discovery_of_a_missing_workspace_is_empty(tmp_path: Path) -> None:
    result = Workspace(tmp_path / "nope").discover()
    assert result.files == () and result.skipped == ()


def test_discovery_finds_every_one_of_10000_files_in_100_folders(tmp_path: Path) -> None:
    memory = tmp_path / "big" / "memory"
    for folder in range(100):
        (memory / f"f{folder:03d}").mkdir(parents=True)
        for index in range(100):
            (memory / f"f{folder:03d}" / f"{index:03d}.md").write_bytes(b"x\n")
    result = Workspace(tmp_path / "big").discover()
    # How long this takes is measured by benchmarks/indexing.py, not asserted here.
    assert len(result.files) == 10_000 and result.skipped == ()
    assert len({f.path for f in result.files}) == 10_000
    assert result.files[0].path == "memory/f000/000.md"


# ---------------------------------------------------------------------------- sessions


def test_session_discovery_lists_jsonl_not_recursively_and_skips_symlinks(
    root: Path, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    write(sessions / "b.jsonl", "{}\n")
    write(sessions / "a.jsonl", "{}\n")
    write(sessions / "notes.md")
    write(sessions / "nested" / "c.jsonl", "{}\n")
    (sessions / "link.jsonl").symlink_to(sessions / "a.jsonl")
    result = Workspace(root, sessions_dir=sessions).discover_sessions()
    assert [f.path for f in result.files] == ["sessions/a.jsonl", "sessions/b.jsonl"]
    assert all(f.source == "sessions" for f in result.files)
    assert [(s.path, s.reason) for s in result.skipped] == [("sessions/link.jsonl", "symlink")]


def test_session_discovery_without_a_folder_is_empty(root: Path, tmp_path: Path) -> None:
    assert Workspace(root).discover_sessions().files == ()
    assert Workspace(root, sessions_dir=tmp_path / "none").discover_sessions().files == ()


def test_session_discovery_refuses_a_symlinked_sessions_folder(root: Path, tmp_path: Path) -> None:
    real = write(tmp_path / "real" / "a.jsonl", "{}\n").parent
    link = tmp_path / "sessions"
    link.symlink_to(real, target_is_directory=True)
    result = Workspace(root, sessions_dir=link).discover_sessions()
    assert result.files == ()
    assert [(s.path, s.reason) for s in result.skipped] == [("sessions", "symlink")]


# ---------------------------------------------------------------------------- is_daily


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("memory/2024-05-01.md", date(2024, 5, 1)),
        ("notes/memory/2024-02-29.md", date(2024, 2, 29)),
        ("/abs/extra/memory/2023-12-31.md", date(2023, 12, 31)),
        ("memory/2023-02-29.md", None),  # not a leap year
        ("memory/2024-13-01.md", None),
        ("memory/2024-5-1.md", None),
        ("memory/2024-05-01-standup.md", None),
        ("xmemory/2024-05-01.md", None),
        ("memory/sub/2024-05-01.md", date(2024, 5, 1)),  # an area's daily notes
        ("memory/memories/alice/2024-05-01.md", date(2024, 5, 1)),
        ("memory/memories/alice/2024-05-01-standup.md", None),
        ("notes/2024-05-01.md", None),
        ("memory/2024-05-01.MD", None),
        ("2024-05-01.md", None),
    ],
)
def test_is_daily_accepts_only_real_dates_named_below_memory(
    path: str, expected: date | None
) -> None:
    assert is_daily(path) == expected
