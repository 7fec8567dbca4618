"""Keeping an index fresh without blocking its callers.

:mod:`.state` tracks why the index may be stale and routes every trigger (search while dirty,
session start, interval, watcher) into one :mod:`.triggers` background sync; :mod:`.watch` is the
file watcher; :mod:`.activity` records watcher and flush activity in the index so any process can
report it.
"""
