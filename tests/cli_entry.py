"""The installed ``openclaw-memory`` console script, as users run it."""

from __future__ import annotations

import sys
from pathlib import Path

# pip puts console scripts next to the interpreter of the environment it installed into.
ENTRY_POINT = str(Path(sys.executable).parent / "openclaw-memory")
