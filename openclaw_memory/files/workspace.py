"""Where memory lives on disk: the one path-safety gate, and which memory files there are
(the scan itself: files/discovery.py).

Every read or write of a workspace path goes through :meth:`Workspace.resolve` (the checks) and
then :meth:`Workspace.open_file` / :meth:`Workspace.open_parent` (the opening), which walk the
path one component at a time with ``O_NOFOLLOW`` relative to directory descriptors. The lstat
checks give a clear refusal up front; the descriptor walk makes a symlink swapped in after the
checks fail to open instead of being followed (the TOCTOU window).

Symlinks are never followed below an allowed root. The workspace root itself may be a symlink
(the user chose it); a configured extra path may not.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from openclaw_memory.errors import ContentError, PathRefusedError, WorkspaceError
from openclaw_memory.files.discovery import (
    DEFAULT_MAX_FILE_BYTES,
    IGNORED_DIR_NAMES,
    DiscoveryResult,
    Scan,
)

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "IGNORED_DIR_NAMES",
    "DiscoveryResult",
    "PathKind",
    "ResolvedPath",
    "Workspace",
    "curated_file_name",
    "dated_name",
    "is_daily",
    "memory_kind",
    "path_components",
    "valid_date",
]

PathKind = Literal["memory_md", "daily", "memory_other", "extra", "history"]
#: Where curation keeps what it replaced or removed (files/curation.py): read through the
#: gate, never discovered for indexing.
HISTORY_DIR = "memory-history"


_ROOT_MEMORY_FILES = ("MEMORY.md", "memory.md")
_MEMORY_DIR = "memory"
# A daily log is named by its day anywhere below memory/: the workspace's own
# (memory/YYYY-MM-DD.md) and a user's or agent's area (memory/memories/<id>/YYYY-MM-DD.md,
# where MemoryScope writes that user's daily notes).
_DAILY_RE = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})\.md$")
_DATED_NAME_RE = re.compile(r"(?:^|/)(\d{4})-(\d{2})-(\d{2})\.md$")
# Control characters and backslashes: never legitimate in an agent-supplied path, and a
# backslash would mean a Windows separator that POSIX treats as a file-name character.
_BAD_PATH_CHARS = re.compile(r"[\x00-\x1f\x7f\\]")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW_DIR_FLAGS = _DIR_FLAGS | os.O_NOFOLLOW


def is_daily(rel_path: str) -> date | None:
    """The date of a daily log path (``.../memory/YYYY-MM-DD.md``, or a ``YYYY-MM-DD.md`` in a
    folder below ``memory/``: an area's daily notes), else ``None``.

    Impossible dates such as ``2024-02-30`` are not daily files: they get no temporal decay.
    """
    return valid_date(_DAILY_RE.search(rel_path))


def dated_name(rel_path: str) -> date | None:
    """The date a Markdown file is named after (``YYYY-MM-DD.md`` in any folder: a user's
    daily notes under ``memory/users/<id>/`` too), else ``None``."""
    return valid_date(_DATED_NAME_RE.search(rel_path))


def valid_date(match: re.Match[str] | None) -> date | None:
    """The date a match's groups 1-3 (year, month, day) name, when it is a real day."""
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A path that passed the gate.

    ``anchor`` is a directory opened normally (the workspace root, or the parent of an extra
    path); every name in ``parts`` below it is opened with ``O_NOFOLLOW``. ``exists`` is what
    the check saw; the file may still appear or vanish before it is opened.
    """

    abs_path: Path
    rel_path: str
    kind: PathKind
    exists: bool
    anchor: Path = field(repr=False)
    parts: tuple[str, ...] = field(repr=False)

    @property
    def name(self) -> str:
        return self.parts[-1]


@dataclass(frozen=True, slots=True)
class _AllowedRoot:
    """An allowed root: ``anchor`` may be reached through symlinks, ``name`` below it may not."""

    anchor: Path
    aliases: tuple[tuple[str, ...], ...]  # lexical and real spellings of the anchor
    name: str | None  # None for the workspace root, whose own symlink status is not checked

    def match(self, full: tuple[str, ...]) -> tuple[str, ...] | None:
        """Components of ``full`` below the anchor if ``full`` is this root or lies under it."""
        for alias in self.aliases:
            size = len(alias)
            if full[:size] != alias:
                continue
            below = full[size:]
            if self.name is None:
                return below
            if below[:1] == (self.name,):
                return below
        return None


def _components(path: Path) -> tuple[str, ...]:
    return tuple(part for part in path.parts if part != "/")


def _make_root(anchor: Path, name: str | None) -> _AllowedRoot:
    lexical = _components(anchor)
    real = _components(Path(os.path.realpath(anchor)))
    aliases = (lexical,) if real == lexical else (lexical, real)
    return _AllowedRoot(anchor=anchor, aliases=aliases, name=name)


def _refuse() -> PathRefusedError:
    return PathRefusedError()


class Workspace:
    """A memory workspace: discovery of its files and the gate for reading and writing them."""

    def __init__(
        self,
        root: Path,
        extra_paths: Sequence[Path] = (),
        sessions_dir: Path | None = None,
    ) -> None:
        # abspath, not resolve(): resolving would follow a symlinked root and hide the
        # user's spelling; both spellings are accepted by the gate through the aliases.
        self.root = Path(os.path.abspath(Path(root).expanduser()))
        self.extra_paths = tuple(self._absolute(p) for p in extra_paths)
        self.sessions_dir = None if sessions_dir is None else self._absolute(sessions_dir)
        self._root = _make_root(self.root, None)
        # A configured "/" has no name to check for symlinks; it is not a usable extra root.
        self._extras = tuple(_make_root(p.parent, p.name) for p in self.extra_paths if p.name)

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r}, extra_paths={len(self.extra_paths)})"

    def _absolute(self, path: Path) -> Path:
        # Relative extra paths are relative to the workspace, not to the process's cwd.
        path = Path(path).expanduser()
        return Path(os.path.abspath(path if path.is_absolute() else self.root / path))

    # ------------------------------------------------------------------ the gate

    def resolve(
        self, path: str | os.PathLike[str], *, purpose: Literal["read", "write"] = "read"
    ) -> ResolvedPath:
        """Check ``path`` against the allowlist; raise :class:`PathRefusedError` if it fails.

        Allowed: ``MEMORY.md`` / ``memory.md`` at the root, ``memory/**``, and configured
        extra files or folders (read only). Only ``*.md`` regular files, no ``..``, no
        symlink on any component below the allowed root. A missing file passes.
        """
        full = self._full_components(path)
        below = self._root.match(full)
        if below is not None:
            kind = memory_kind(below)
            if kind is not None:
                return self._check(self._root, below, kind, "/".join(below))
        if purpose == "write":
            # Extra paths are indexed sources the user owns; agents only write memory files.
            raise _refuse()
        for extra in self._extras:
            below = extra.match(full)
            if below is not None:
                return self._check(extra, below, "extra", self._display(extra, below))
        raise _refuse()

    def _full_components(self, path: str | os.PathLike[str]) -> tuple[str, ...]:
        try:
            raw = os.fspath(path)
        except TypeError:
            raise _refuse() from None
        if not isinstance(raw, str):
            raise _refuse()
        parts = path_components(raw)
        if parts is None:
            raise _refuse()
        if raw.strip().startswith("/"):
            return parts
        return self._root.aliases[0] + parts

    def _display(self, root: _AllowedRoot, below: tuple[str, ...]) -> str:
        # An extra path inside the workspace reads like any workspace file; one outside it
        # is shown by its absolute path, which the gate accepts back unchanged.
        full = root.aliases[0] + below
        inside = self._root.match(full)
        return "/".join(inside) if inside else "/" + "/".join(full)

    def _check(
        self, root: _AllowedRoot, below: tuple[str, ...], kind: PathKind, rel: str
    ) -> ResolvedPath:
        exists = _lstat_chain(root.anchor, below)
        return ResolvedPath(
            abs_path=root.anchor.joinpath(*below),
            rel_path=rel,
            kind=kind,
            exists=exists,
            anchor=root.anchor,
            parts=below,
        )

    # ------------------------------------------------------------------ safe opening

    def open_parent(self, resolved: ResolvedPath, *, create: bool = False) -> int:
        """A descriptor of the directory holding ``resolved``, reached without following links.

        ``create`` makes missing directories (0o700: the owner only). Raises
        :class:`FileNotFoundError` if a directory is missing and ``create`` is false,
        :class:`PathRefusedError` if a component is (now) a symlink or not a directory.
        The caller closes the descriptor.
        """
        fd = os.open(resolved.anchor, _DIR_FLAGS)
        try:
            for name in resolved.parts[:-1]:
                fd = _step_into(fd, name, create=create)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_file(
        self, resolved: ResolvedPath, flags: int, mode: int = 0o600, *, create_parents: bool = False
    ) -> int:
        """Open ``resolved`` with ``flags`` plus ``O_NOFOLLOW``; refuse anything not regular.

        ``O_NONBLOCK`` is added so a FIFO swapped in after the check cannot hang the caller;
        it has no effect on regular files. Raises :class:`FileNotFoundError` when missing
        (and not created). The caller closes the descriptor.
        """
        dir_fd = self.open_parent(resolved, create=create_parents)
        try:
            fd = _open_nofollow(resolved.name, flags | os.O_NONBLOCK, mode, dir_fd)
        finally:
            os.close(dir_fd)
        info = os.fstat(fd)
        # Checked on the open descriptor: a hard link made after the path check is caught too.
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            os.close(fd)
            raise _refuse()
        return fd

    def read_bytes(self, resolved: ResolvedPath, *, max_bytes: int | None = None) -> bytes | None:
        """The file's bytes, or ``None`` when it does not exist; a file larger than
        ``max_bytes`` is refused with :class:`ContentError` before anything is read."""
        try:
            fd = self.open_file(resolved, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if max_bytes is not None and size > max_bytes:
                raise ContentError(f"{resolved.rel_path} is {size} bytes, more than "
                                   f"sync.max_file_bytes ({max_bytes}): not read")
            return handle.read()

    # ------------------------------------------------------------------ discovery

    def discover(self, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> DiscoveryResult:
        """Memory files: root MEMORY.md/memory.md, ``memory/**/*.md``, then extra paths.

        Symlinks are skipped (and reported), never followed. A file reachable twice (overlapping
        extra paths, hard links, case-insensitive file systems) is kept once, first seen wins.
        """
        scan = Scan(max_file_bytes=max_file_bytes, source="memory")
        for name in _ROOT_MEMORY_FILES:
            scan.add_root_file(self.root / name, name, required_md=True, report_missing=False)
        scan.add_tree(self.root / _MEMORY_DIR, _MEMORY_DIR, report_missing=False)
        for extra in self._extras:
            assert extra.name is not None  # extra roots always have a name (see __init__)
            scan.add_extra(extra.anchor / extra.name, self._display(extra, (extra.name,)))
        return scan.result()

    def discover_sessions(self, *, max_file_bytes: int | None = None) -> DiscoveryResult:
        """Session transcripts ``<sessions_dir>/*.jsonl`` (not recursive, no symlinks)."""
        scan = Scan(max_file_bytes=max_file_bytes, source="sessions")
        if self.sessions_dir is not None:
            scan.add_flat(self.sessions_dir, "sessions", suffix=".jsonl")
        return scan.result()


def curated_file_name(root: Path) -> str:
    """The curated file's name in the workspace at ``root``: ``MEMORY.md``, or ``memory.md``
    only when that lowercase spelling is the file the user actually has."""
    if not (root / "MEMORY.md").exists() and (root / "memory.md").exists():
        return "memory.md"
    return "MEMORY.md"


def path_components(raw: str) -> tuple[str, ...] | None:
    """The names of a Markdown file's path as the gate reads it (``.`` and empty names
    dropped), or None when it can never be allowed: control characters or backslashes,
    ``..``, a directory (trailing ``/``), not ``*.md``."""
    text = raw.strip()
    if not text or _BAD_PATH_CHARS.search(text):
        return None
    segments = text.split("/")
    parts = tuple(p for p in segments if p not in ("", "."))
    # A trailing "/" or "/." names a directory, whatever the last name looks like.
    if segments[-1] in ("", ".") or not parts or ".." in parts:
        return None
    if not parts[-1].endswith(".md"):
        return None
    return parts


def memory_kind(below: tuple[str, ...]) -> PathKind | None:
    """What a path below the workspace root is, when it is a memory file at all."""
    if len(below) == 1 and below[0] in _ROOT_MEMORY_FILES:
        return "memory_md"
    if len(below) >= 2 and below[0] == _MEMORY_DIR:
        return "daily" if is_daily("/".join(below)) else "memory_other"
    if len(below) >= 2 and below[0] == HISTORY_DIR:
        return "history"  # memory-history/DAY.md, and an area's memory-history/<area>/DAY.md
    return None


def _lstat_chain(anchor: Path, below: tuple[str, ...]) -> bool:
    """lstat each component under ``anchor``; True if the file exists, refuse on a symlink."""
    current = anchor
    for index, name in enumerate(below):
        current = current / name
        try:
            info = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            return False  # everything below a missing component is missing too
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise _refuse() from None  # no such memory file can exist: a bad path, not an outage
            raise WorkspaceError(f"cannot inspect a workspace path: {exc.strerror}") from None
        if stat.S_ISLNK(info.st_mode):
            raise _refuse()
        is_last = index == len(below) - 1
        if is_last and (not stat.S_ISREG(info.st_mode) or info.st_nlink > 1):
            raise _refuse()
        if not is_last and not stat.S_ISDIR(info.st_mode):
            raise _refuse()
    return True


def _step_into(dir_fd: int, name: str, *, create: bool) -> int:
    """Replace ``dir_fd`` by a descriptor of its subdirectory ``name`` (closing the old one)."""
    try:
        child = os.open(name, _NOFOLLOW_DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
        # A concurrent writer may make it first; opening it below re-checks its type.
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=dir_fd)  # private: the owner only
        child = _open_nofollow(name, _NOFOLLOW_DIR_FLAGS, 0, dir_fd)
    except OSError as exc:
        # ELOOP: a symlink with O_NOFOLLOW; ENOTDIR: a file or a link where a directory
        # should be. Both are gate violations that appeared after the lstat check.
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _refuse() from None
        raise
    os.close(dir_fd)
    return child


def _open_nofollow(name: str, flags: int, mode: int, dir_fd: int) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
            raise _refuse() from None
        raise


