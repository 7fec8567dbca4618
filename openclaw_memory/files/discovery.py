"""Discovery of memory files: which files below the allowed roots are indexed, and which are
skipped with a countable reason.

A scan lstats and scans directories without following symlinks (a symlink is reported, never
followed), keeps each real file once by (device, inode) (overlapping extra paths, case-insensitive
spellings), and refuses hard-linked files, whose other names may live outside the workspace.
The path gate for reading and writing one file is files/workspace.py.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from openclaw_memory.types import MemoryFile, SkippedFile, Source

__all__ = ["DEFAULT_MAX_FILE_BYTES", "IGNORED_DIR_NAMES", "DiscoveryResult", "Scan", "has_bad_name"]

DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024
IGNORED_DIR_NAMES = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})

# Names found on disk additionally may not hold surrogates: they come from undecodable bytes
# (os.fsdecode), cannot be stored as text or typed back by an agent, so they are skipped.
_BAD_NAME_CHARS = re.compile(r"[\x00-\x1f\x7f\\" + "\ud800-\udfff]")

# Skip reasons are short fixed strings so a sync report can count them.
_SKIP_SYMLINK = "symlink"
_SKIP_TOO_LARGE = "too large"
_SKIP_NOT_REGULAR = "not a regular file"
_SKIP_NOT_MARKDOWN = "not markdown"
_SKIP_NOT_FOUND = "not found"
_SKIP_BAD_NAME = "unsupported file name"
_SKIP_VANISHED = "vanished"
# A hard link can make a file outside the workspace look like a memory file: its other names
# may live anywhere. Files with more than one name are neither read, written nor indexed.
_SKIP_HARD_LINK = "hard link (the file has more than one name; it may live outside the workspace)"


@dataclass(frozen=True, slots=True)
class DiscoveryResult:
    """Files eligible for indexing, and what was skipped with a countable reason."""

    files: tuple[MemoryFile, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()


def has_bad_name(name: str) -> bool:
    """Whether a name found on disk cannot be a memory file's (control characters,
    backslashes, undecodable bytes)."""
    return _BAD_NAME_CHARS.search(name) is not None


class Scan:
    """Collects discovered files, skipped entries and the identities already seen."""

    def __init__(self, *, max_file_bytes: int | None, source: Source) -> None:
        self.max_file_bytes = max_file_bytes
        self.source: Source = source
        self.files: list[MemoryFile] = []
        self.skipped: dict[SkippedFile, None] = {}  # ordered set: overlapping roots repeat
        # (device, inode) is the real identity of a file: it de-duplicates overlapping roots
        # and case-insensitive spellings, which realpath alone does not catch on macOS.
        self.seen: set[tuple[int, int]] = set()
        self.seen_dirs: set[tuple[int, int]] = set()

    def result(self) -> DiscoveryResult:
        return DiscoveryResult(
            files=tuple(sorted(self.files, key=lambda f: f.path)),
            skipped=tuple(sorted(self.skipped, key=lambda s: (s.path, s.reason))),
        )

    def skip(self, rel: str, reason: str) -> None:
        self.skipped[SkippedFile(rel, reason)] = None

    def add_root_file(
        self, path: Path, rel: str, *, required_md: bool, report_missing: bool
    ) -> None:
        info = self._lstat(path, rel, report_missing=report_missing)
        if info is None:
            return
        if stat.S_ISLNK(info.st_mode):
            self.skip(rel, _SKIP_SYMLINK)
        elif not stat.S_ISREG(info.st_mode):
            self.skip(rel, _SKIP_NOT_REGULAR)
        elif required_md and not path.name.endswith(".md"):
            self.skip(rel, _SKIP_NOT_MARKDOWN)
        else:
            self._keep(str(path), rel, info)

    def add_tree(self, path: Path, rel: str, *, report_missing: bool) -> None:
        info = self._lstat(path, rel, report_missing=report_missing)
        if info is None:
            return
        if stat.S_ISLNK(info.st_mode):
            self.skip(rel, _SKIP_SYMLINK)
        elif stat.S_ISDIR(info.st_mode):
            self._walk(str(path), rel)

    def add_extra(self, path: Path, rel: str) -> None:
        info = self._lstat(path, rel, report_missing=True)
        if info is None:
            return
        if stat.S_ISDIR(info.st_mode):
            self._walk(str(path), rel)
        else:
            self.add_root_file(path, rel, required_md=True, report_missing=True)

    def add_flat(self, path: Path, rel: str, *, suffix: str) -> None:
        info = self._lstat(path, rel, report_missing=False)
        if info is None:
            return
        if stat.S_ISLNK(info.st_mode):
            self.skip(rel, _SKIP_SYMLINK)
            return
        for entry in self._entries(str(path), rel):
            if entry.name.endswith(suffix):
                self._consider(entry, f"{rel}/{entry.name}", descend=False)

    def _lstat(self, path: Path, rel: str, *, report_missing: bool) -> os.stat_result | None:
        try:
            return os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            if report_missing:
                self.skip(rel, _SKIP_NOT_FOUND)
        except OSError as exc:
            self.skip(rel, _unreadable(exc))
        return None

    def _entries(self, dir_path: str, rel: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(dir_path) as it:
                # Sorted so that "first seen wins" is the same on every machine.
                return sorted(it, key=lambda e: e.name)
        except FileNotFoundError:
            return []  # removed while we walked: nothing to index, nothing to report
        except OSError as exc:
            self.skip(rel, _unreadable(exc))
            return []

    def _walk(self, dir_path: str, rel: str) -> None:
        # An explicit stack instead of recursion: deep trees cannot hit the recursion limit.
        stack = [(dir_path, rel)]
        while stack:
            current, current_rel = stack.pop()
            if not self._first_visit(current):
                continue
            subdirs = []
            for entry in self._entries(current, current_rel):
                child_rel = f"{current_rel}/{entry.name}"
                if self._consider(entry, child_rel, descend=True):
                    subdirs.append((entry.path, child_rel))
            stack.extend(reversed(subdirs))

    def _first_visit(self, dir_path: str) -> bool:
        # An extra folder may overlap memory/ or another extra: walk each directory once.
        try:
            info = os.lstat(dir_path)
        except OSError:
            return True  # let scandir report the problem with its own reason
        identity = (info.st_dev, info.st_ino)
        if identity in self.seen_dirs:
            return False
        self.seen_dirs.add(identity)
        return True

    def _consider(self, entry: os.DirEntry[str], rel: str, *, descend: bool) -> bool:
        """Record ``entry``; True when it is a directory to walk into."""
        try:
            if entry.is_symlink():
                self.skip(rel, _SKIP_SYMLINK)
                return False
            if entry.is_dir(follow_symlinks=False):
                if not descend or entry.name in IGNORED_DIR_NAMES:
                    return False
                if has_bad_name(entry.name):
                    self.skip(_printable(rel), _SKIP_BAD_NAME)
                    return False
                return True
            suffix = ".jsonl" if self.source == "sessions" else ".md"
            if not entry.name.endswith(suffix):
                return False  # other files (images, notes.txt) are simply not memory
            if has_bad_name(entry.name):
                self.skip(_printable(rel), _SKIP_BAD_NAME)
            elif not entry.is_file(follow_symlinks=False):
                self.skip(rel, _SKIP_NOT_REGULAR)
            else:
                self._keep(entry.path, rel, entry.stat(follow_symlinks=False))
        except FileNotFoundError:
            self.skip(rel, _SKIP_VANISHED)
        except OSError as exc:
            self.skip(rel, _unreadable(exc))
        return False

    def _keep(self, path: str, rel: str, info: os.stat_result) -> None:
        identity = (info.st_dev, info.st_ino)
        if identity in self.seen:
            return
        self.seen.add(identity)
        if info.st_nlink > 1:
            self.skip(rel, _SKIP_HARD_LINK)
            return
        if self.max_file_bytes is not None and info.st_size > self.max_file_bytes:
            self.skip(rel, _SKIP_TOO_LARGE)
            return
        self.files.append(
            MemoryFile(
                path=rel,
                abs_path=path,
                source=self.source,
                mtime_ns=info.st_mtime_ns,
                size=info.st_size,
            )
        )


def _unreadable(exc: OSError) -> str:
    reason = (exc.strerror or type(exc).__name__).lower()
    return f"unreadable: {reason}"


def _printable(rel: str) -> str:
    # Skipped names are shown to people and stored as text: escape control characters and
    # undecodable bytes (surrogates) so the report itself is always valid, printable text.
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in rel)
