"""The documentation: a one-page README, a site built from docs/ with warnings as errors, no
development-process labels where users read, and benchmark figures stamped with their run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from openclaw_memory.cli.parser import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))
# Labels of how the library was built, meaningless to a user: "stop 21", "issue 12", "the
# team's development sets".
# A label may be split across lines ("stop\n21") or carry no number ("read a stop later").
WORK_LABELS = re.compile(r"\b(?:[Ss]top|[Ii]ssue)s?\s+\d+|\(issue\b|"
                         r"\b(?:a|one|this|that|last|next|previous|earlier)\s+stop\b")
LABELS = re.compile(f"{WORK_LABELS.pattern}|\\bthe team's\\b")
#: Scripts and notebooks the docs tell users to run or read.
SCRIPTS = sorted([*(ROOT / "benchmarks").glob("*.py"), *(ROOT / "integrations").rglob("*.py"),
                  *(ROOT / "notebooks").glob("*.ipynb")])
FIGURES = re.compile(r"<!-- figures: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /figures -->", re.DOTALL)


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "core" / "index.html").read_text(encoding="utf-8")
    assert "MemoryIndex" in api and "sample_workspace" in api  # generated from the docstrings
    assert (tmp_path / "site" / "changelog" / "index.html").is_file()


def test_every_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS:
        assert str(page.relative_to(ROOT / "docs")) in nav, page


def test_readme_is_one_page_that_links_every_guide() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 120
    for guide in ("cli", "langchain", "langgraph", "postgres", "configuration", "retrieval",
                  "benchmarks", "changelog", "api/index"):
        assert f"(docs/{guide}.md)" in text, guide
        assert (ROOT / "docs" / f"{guide}.md").is_file()


def test_no_development_process_labels_where_users_read() -> None:
    parser = build_parser()
    helps = [parser.format_help(), *(sub.format_help() for action in parser._subparsers._group_actions
                                     for sub in action.choices.values())]  # type: ignore[union-attr]
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in [README, *DOCS]}
    texts.update({f"--help {i}": text for i, text in enumerate(helps)})
    found = {name: LABELS.findall(text) for name, text in texts.items() if LABELS.search(text)}
    assert not found


def test_no_development_process_labels_in_the_scripts_and_notebooks_users_run() -> None:
    found = {str(path.relative_to(ROOT)): WORK_LABELS.findall(path.read_text(encoding="utf-8"))
             for path in SCRIPTS}
    assert not {name: labels for name, labels in found.items() if labels}


def test_the_label_check_sees_labels_split_across_lines_and_without_a_number() -> None:
    for text in ("measured at stop\n21", "as issue\n  12 says", "and read a stop later"):
        assert LABELS.search(text), text
    for text in ("a full-text index", "stopwords", "issue a request", "the team's notes"):
        assert not WORK_LABELS.search(text), text


def test_help_text_shows_no_restructuredtext_markup() -> None:
    parser = build_parser()
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        for sub in action.choices.values():
            assert "``" not in sub.format_help(), sub.prog
    assert "``" not in parser.format_help()


def test_every_figure_block_is_a_benchmark_run_stamped_with_machine_and_load() -> None:
    blocks = [(page, match) for page in [README, *DOCS]
              for match in FIGURES.finditer(page.read_text(encoding="utf-8"))]
    assert len(blocks) >= 5
    for page, match in blocks:
        body = match["body"]
        command = re.search(r"^\$ (python benchmarks/(\w+)\.py.*)$", body, re.MULTILINE)
        assert command, (page, match["name"])
        assert (ROOT / "benchmarks" / f"{command[2]}.py").is_file()
        stamp = r"machine: .+, \d+ cores, load avg [\d.]+ [\d.]+ [\d.]+"
        assert re.search(stamp, body), (page, match["name"])
        assert re.search(r"recorded \d{4}-\d{2}-\d{2}", body), (page, match["name"])


def test_the_cli_guides_synopsis_names_every_command_option_and_provider_the_parser_takes(
        ) -> None:
    import argparse

    from openclaw_memory.cli.parser import build_parser

    synopsis = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("```")[1]
    lines = synopsis.strip("\n").split("\n")
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    blocks: dict[str, str] = {}
    current = "(global)"
    for line in lines:
        match = re.match(r"^  ([a-z]+)\b", line)
        if match and match.group(1) in commands.choices:
            current = match.group(1)
        blocks[current] = blocks.get(current, "") + line + "\n"
    global_options = {o for a in parser._actions for o in a.option_strings}
    for action in parser._actions:
        if action.option_strings and action.option_strings != ["-h", "--help"]:
            assert any(o in blocks["(global)"] for o in action.option_strings), action.option_strings
            for choice in action.choices or []:
                assert str(choice) in blocks["(global)"], (action.option_strings, choice)
    for name, sub in commands.choices.items():
        assert name in blocks, name
        for action in sub._actions:
            wanted = [o for o in action.option_strings if o not in global_options]
            if wanted and wanted != ["-h", "--help"]:
                assert any(o in blocks[name] for o in wanted), (name, wanted)


def test_the_settings_reference_is_the_table_generated_from_the_settings_models() -> None:
    from openclaw_memory.config import MemorySettings
    from openclaw_memory.settings.reference import replace_table, settings_rows, settings_table

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert replace_table(page) == page, (
        "docs/configuration.md differs from the settings models: run "
        "python -m openclaw_memory.settings.reference docs/configuration.md")
    rows = list(settings_rows(MemorySettings))
    assert all(meaning for _, _, meaning in rows), [name for name, _, m in rows if not m]
    assert "`search.query_timeout_seconds`" in settings_table()  # nested groups are flattened
