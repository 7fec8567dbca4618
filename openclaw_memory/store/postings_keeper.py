"""Keeps one index's postings in memory, read in the background, one generation at a time.

Reading the postings costs about 2.9 s per 100k chunks (a fifth of a second at 10k), too
much for the search that finds them missing (after an edit, the previous generation's are
brought up to date instead, postings_merge.py: 0.1-0.5 s at 100k): that search, and every
one until the postings of the index's current generation are read, is answered by FTS5
exactly as before (the two rank identically). The reader has its own connection inside one
read transaction (WAL: writers are never blocked), so what it reads is one generation. A
one-shot command that closes the index stops it through SQLite's progress handler.

Postings are read only where they pay and fit: indexes of at least :data:`MIN_CHUNKS`
chunks (below that FTS5 answers in a millisecond or two), whose postings fit in what
``store.max_matrix_mb`` leaves beside the vectors in memory.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from openclaw_memory.store.connection import DriverInfo, read_only_index, read_only_uri
from openclaw_memory.store.fts_table import totals
from openclaw_memory.store.postings import Postings
from openclaw_memory.store.postings_file import load_postings, postings_path, save_postings
from openclaw_memory.store.postings_merge import merge
from openclaw_memory.store.postings_read import (
    Stopped,
    TooLarge,
    estimated_bytes,
    indexed_rowids,
    read_postings,
    read_rows,
)

__all__ = ["MIN_CHUNKS", "PostingsKeeper"]

MIN_CHUNKS = 2_000
"""Indexes smaller than this are answered by FTS5 alone."""


class PostingsKeeper:
    """The current postings of one index file, if read, and the thread reading them."""

    def __init__(self, path: Path, driver: DriverInfo, *, enabled: bool,
                 min_chunks: int = MIN_CHUNKS) -> None:
        self.path = path
        self.driver = driver
        self.enabled = enabled
        self.min_chunks = min_chunks
        self._current: Postings | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._tried: int | None = None  # the generation last read (or refused)
        self._epoch = 0  # bumped when the database is replaced: a read under way is void
        self.state = ("fts5: keyword postings in memory off (store.keyword_backend)" if not enabled
                      else f"fts5 until postings are read (an index of {min_chunks}+ chunks, "
                           "in the background from a process's first search)")
        self.read_seconds: float | None = None
        self.last_read: str | None = None  # "full", or "incremental (...)"
        self.ready_at: float | None = None  # time.perf_counter() when the last read landed

    def get(self, generation: int) -> Postings | None:
        """The postings of ``generation``, when read; else None (FTS5 answers)."""
        current = self._current
        return current if current is not None and current.generation == generation else None

    def request(self, generation: int, room: Callable[[], int], chunks: Callable[[], int]) -> None:
        """Start reading the postings of ``generation`` unless they are read, being read, or
        were refused; ``room``: the bytes the budget leaves them; ``chunks``: how many the
        index holds (a small index is refused here, without a thread)."""
        if not self.enabled or self._stop.is_set() or self._tried == generation:
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._tried = generation
            count = chunks()
            if count < self.min_chunks:
                self.state = f"fts5: {count} chunks (postings in memory from {self.min_chunks})"
                return
            self._thread = threading.Thread(target=self._read, args=(room(), self._epoch),
                                            name="openclaw-memory-postings", daemon=True)
            self._thread.start()

    def forget(self) -> None:
        """The database was replaced wholesale: its generation numbers may repeat."""
        with self._lock:
            self._epoch += 1
            self._current = None
            self._tried = None
        with contextlib.suppress(OSError):
            postings_path(self.path).unlink()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a read under way to finish; True when none is running afterwards."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self) -> None:
        """Stop a read under way (one-shot commands close before it would pay)."""
        self._stop.set()
        self.wait(30)

    def _read(self, room: int, epoch: int) -> None:
        started = time.perf_counter()
        try:
            read_only = read_only_index(self.path)  # a shared, read-only index: read as it is
            conn = self.driver.module.connect(read_only_uri(self.path) if read_only
                                              else str(self.path), check_same_thread=False,
                                              isolation_level=None, timeout=10, uri=read_only)
        except self.driver.errors as exc:
            self.state = f"fts5: postings not read ({exc})"
            return
        try:
            conn.set_progress_handler(lambda: 1 if self._stop.is_set() else 0, 100_000)
            self._read_on(conn, room, epoch)
        except Stopped:
            self.state = "fts5: postings read stopped (index closed)"
        except TooLarge as exc:
            self.state = (f"fts5: postings (over {exc.used / 1e6:.0f} MB with their distinct "
                          f"terms) exceed what store.max_matrix_mb leaves beside the vectors "
                          f"({room / 1e6:.0f} MB)")
        except self.driver.errors as exc:
            self.state = ("fts5: postings read stopped (index closed)" if self._stop.is_set()
                          else f"fts5: postings not read ({exc})")
        finally:
            with contextlib.suppress(*self.driver.errors):
                conn.close()
            if self._current is not None and self.state.startswith("postings"):
                self.read_seconds = time.perf_counter() - started

    def _changes(self, conn: object, generation: int, rows: int, tokens: int,
                 epoch: int, previous: Postings | None) -> Postings | None:
        """``previous`` (an earlier generation's postings) brought up to date with the chunks
        that changed (postings_merge.py); None when a full read is due (none kept, or a large
        change)."""
        if previous is None or epoch != self._epoch:
            return None
        rowids = indexed_rowids(conn)
        new = np.setdiff1d(rowids, previous.rowids, assume_unique=True)
        gone = previous.rowids.shape[0] - int(np.isin(previous.rowids, rowids,
                                                      assume_unique=True).sum())
        if new.shape[0] + gone > max(1_000, rows // 4):
            return None
        added = read_rows(conn, new, self._stop.is_set)
        merged = merge(previous, added, rowids, generation=generation, rows=rows, tokens=tokens)
        if merged is not None:
            self.last_read = f"incremental ({new.shape[0]} chunks added, {gone} gone)"
        return merged

    def _kept_or_saved(self, conn: object, generation: int, rows: int, tokens: int, room: int,
                       epoch: int) -> tuple[Postings | None, bool]:
        """This process's postings, or those saved beside the index by an earlier one,
        brought up to ``generation``; and whether to save the result (it came from the file
        and moved on). (None, False): a full read is due."""
        if self._current is not None:
            return self._changes(conn, generation, rows, tokens, epoch, self._current), False
        saved = load_postings(self.path, room)
        if saved is None:
            return None, False
        if (saved.generation, saved.rows, saved.tokens) == (generation, rows, tokens):
            self.last_read = "loaded from the file beside the index"
            return saved, False
        merged = self._changes(conn, generation, rows, tokens, epoch, saved)
        if merged is not None:
            self.last_read = f"loaded from the file beside the index, then {self.last_read}"
        return merged, merged is not None

    def _read_on(self, conn: object, room: int, epoch: int) -> None:
        execute = conn.execute  # type: ignore[attr-defined]
        execute("begin")
        try:
            row = execute("select value from meta where key = 'generation'").fetchone()
            generation = int(row[0]) if row and row[0] else 0
            kept = totals(conn)
            if kept.chunks < self.min_chunks:
                self.state = f"fts5: {kept.chunks} chunks (postings in memory from {self.min_chunks})"
                return
            need = estimated_bytes(kept.tokens, kept.rows)
            if need > room:
                self.state = (f"fts5: postings ({need / 1e6:.0f} MB) exceed what "
                              f"store.max_matrix_mb leaves beside the vectors ({room / 1e6:.0f} MB)")
                return
            postings, keep = self._kept_or_saved(conn, generation, kept.rows, kept.tokens,
                                                 room, epoch)
            if postings is None:
                postings = read_postings(conn, generation, self._stop.is_set, room)
                self.last_read = "full"
                keep = postings is not None
        finally:
            execute("rollback")
        if postings is None:
            self.state = "fts5: the keyword index's totals disagree with its postings"
            return
        with self._lock:
            if epoch != self._epoch:
                return
            self._current = postings
            self.ready_at = time.perf_counter()
        if keep and not read_only_index(self.path):
            save_postings(self.path, postings)  # the next process starts from these
        self.state = (f"postings in memory ({postings.nbytes / 1e6:.0f} MB, "
                      f"{len(postings.terms)} terms; {self.last_read} read)")
