"""The package layout reads as the architecture: no import cycles, few modules at the root."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import openclaw_memory

PACKAGE = Path(openclaw_memory.__file__).parent
ROOT_MODULES = {"__init__", "__main__", "_platform", "config", "errors", "index", "index_status",
                "memory_base",
                "opening", "redact", "types", "settings_sources"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("openclaw_memory"):
                deps.add(node.module)
                deps.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {dep for dep in deps if dep in modules and dep != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep):], dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_imports_another_that_imports_it_back_even_for_type_checking() -> None:
    assert _cycle(_import_graph()) is None


def test_the_cycle_finder_would_report_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_package_root_holds_only_the_facade_and_shared_definitions() -> None:
    root = {path.stem for path in PACKAGE.glob("*.py")}
    assert root <= ROOT_MODULES, sorted(root - ROOT_MODULES)


def test_every_subpackage_says_what_it_holds() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        module = importlib.import_module(f"openclaw_memory.{init.parent.name}")
        assert module.__doc__ and len(module.__doc__) > 40, init
    assert relative_imports() == []


def relative_imports() -> list[str]:
    """Absolute imports only, so a moved module's imports say where they point."""
    return [f"{path}:{node.lineno}" for path in PACKAGE.rglob("*.py")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.level]
