"""Start ``child_sync.py`` as a real process and talk to it over its pipes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CHILD", "ChildResult", "run_child", "start_child"]

CHILD = Path(__file__).with_name("child_sync.py")


@dataclass
class ChildResult:
    returncode: int
    paused: dict[str, Any] | None
    report: dict[str, Any] | None
    stderr: str
    status: dict[str, Any] | None = None

    @property
    def killed(self) -> bool:
        return self.returncode == -signal.SIGKILL


def start_child(spec: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(CHILD), json.dumps(spec, default=str)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run_child(spec: dict[str, Any],
              while_paused: Callable[[dict[str, Any]], None] | None = None) -> ChildResult:
    """Run a child sync to its end (or its death); call ``while_paused`` at its pause point."""
    if while_paused is not None:
        spec = {**spec, "kill": {**spec["kill"], "pause": True}}
    proc = start_child(spec)
    assert proc.stdout is not None and proc.stdin is not None
    paused = report = status = None
    try:
        for line in proc.stdout:
            if line.startswith("PAUSED "):
                paused = json.loads(line[7:])
                if while_paused is not None:
                    while_paused(paused)
                proc.stdin.write("go\n")
                proc.stdin.flush()
            elif line.startswith("DONE "):
                report = json.loads(line[5:])
            elif line.startswith("STATUS "):
                status = json.loads(line[7:])
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read() if proc.stderr else ""
    return ChildResult(proc.returncode, paused, report, stderr, status)
