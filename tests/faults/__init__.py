"""Fault suite: real processes, SIGKILL, corrupt files, bad input, concurrency, a property test.

Run alone with ``python -m pytest tests/faults``.
"""
