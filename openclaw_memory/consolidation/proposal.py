"""A consolidation proposal: its form (the tool the model answers with), its checks, its diff.

The model names curated lines by the numbers it was shown (``L5`` or ``L5-L6``) and gives
the new text; the expected text of each edit is taken from the snapshot, never from the
model, so an edit applies only to the lines the model actually read. Checks drop what would
not change the file (an update to the same words, an addition already there word for word),
edits of lines the model was not shown, overlapping edits and edits past ``max_edits``: each
with its reason, so a dry run shows what was proposed and why some of it will not be done.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from openclaw_memory.consolidation.answer_tool import answer_tool
from openclaw_memory.consolidation.snapshot import Snapshot
from openclaw_memory.errors import ContentError
from openclaw_memory.files.curation import stamp_date
from openclaw_memory.files.notes import DATE_STAMP, normalise_note

__all__ = ["PROPOSAL_TOOL", "Plan", "PlannedEdit", "ProposedEdit", "ProposedEdits", "plan_edits",
           "proposal_tool_schema"]

PROPOSAL_TOOL = "propose_memory_edits"
Action = Literal["add", "update", "remove"]
_LINES = re.compile(r"^(?:(?P<path>.*)#)?\s*L?(\d+)(?:\s*-\s*L?(\d+))?\s*$", re.IGNORECASE)
#: The most of the curated file's non-blank lines one run may take away (removed, or replaced
#: by fewer lines), at least one: a proposal ``remove L1-L60`` must not empty the file.
MAX_REMOVED_SHARE = 0.25
_MARKER = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")


class ProposedEdit(BaseModel):
    """One change to the curated file."""

    action: Action = Field(description="add a new durable fact, update stale lines, or remove "
                                       "lines (a duplicate, or no longer true and not replaced)")
    lines: str | None = Field(None, description="update/remove: the lines as numbered above, "
                                                "e.g. 'L5' or 'L5-L6'")
    text: str | None = Field(None, description="add/update: the fact as it should read now, one "
                                               "per line, ending with (as of YYYY-MM-DD): the "
                                               "date of the note it was learned from")
    reason: str = Field("", description="why, citing the note it comes from")


class ProposedEdits(BaseModel):
    """Edits that bring the curated memory file up to date; an empty list when it is."""

    edits: list[ProposedEdit] = Field(default_factory=list)


def proposal_tool_schema() -> dict[str, Any]:
    """The OpenAI-style tool definition the consolidation model answers with."""
    return answer_tool(PROPOSAL_TOOL, "Propose the edits that bring the curated memory file "
                       "up to date (an empty list when it already is).", ProposedEdits)


@dataclass(frozen=True, slots=True)
class PlannedEdit:
    """A checked edit: ``start``..``end`` and the text expected there (0, 0, "" for an add)."""

    action: Action
    start: int
    end: int
    expected: str
    text: str | None
    reason: str

    def citation(self, path: str) -> str:
        return f"{path}#L{self.start}" if self.start == self.end else f"{path}#L{self.start}-L{self.end}"


@dataclass(frozen=True, slots=True)
class Plan:
    """The edits that will be applied, and the proposed ones that will not (with why)."""

    path: str
    edits: tuple[PlannedEdit, ...]
    rejected: tuple[tuple[str, str], ...] = field(default=())

    def diff(self, snapshot: Snapshot) -> str:
        """The plan as a unified diff of the curated file ('' when nothing changes)."""
        before = list(snapshot.curated_lines)
        after = list(before)
        for edit in sorted((e for e in self.edits if e.action != "add"), key=lambda e: -e.start):
            after[edit.start - 1:edit.end] = (edit.text or "").split("\n") if edit.text else []
        after += [line for e in self.edits if e.action == "add" for line in (e.text or "").split("\n")]
        lines = list(difflib.unified_diff(before, after, f"a/{self.path}", f"b/{self.path}",
                                          lineterm=""))
        return "\n".join(lines) + "\n" if lines else ""


def _bare(text: str) -> str:
    return " ".join(_MARKER.sub("", DATE_STAMP.sub("", line)).strip()
                    for line in text.split("\n") if line.strip()).casefold()


def _lines_of(spec: str | None, snapshot: Snapshot) -> tuple[int, int] | str:
    match = _LINES.match(spec or "")
    if match is None:
        return f"no lines named ({spec!r}): give them as 'L5' or 'L5-L6'"
    path = (match["path"] or "").strip()
    if path and path != snapshot.curated_path:
        # The model's text is untrusted: lines of another file (a daily log, ../outside.md,
        # /etc/passwd) are never taken for the curated file's lines of the same number.
        return f"lines of {path[:80]!r}: only {snapshot.curated_path} is edited"
    start = int(match[2])
    end = int(match[3] or start)
    if start < 1 or end < start or end > snapshot.shown_lines:
        return f"lines {start}-{end} are not lines shown (1-{snapshot.shown_lines})"
    return start, end


def _as_written(text: str, original: str, day: str) -> str:
    """The new text as it will be written: normalised, a list item where the original line
    was one, dated (the model's date kept; else today's, as curation stamps it)."""
    body = normalise_note(text)
    marker = _MARKER.match(original)
    if marker and "\n" not in body and not _MARKER.match(body):
        body = marker[1] + body
    return stamp_date(body, day)


def plan_edits(snapshot: Snapshot, proposal: ProposedEdits, *, max_edits: int = 20) -> Plan:
    """Check ``proposal`` against the lines the model was shown."""
    accepted: list[PlannedEdit] = []
    rejected: list[tuple[str, str]] = []
    taken: set[int] = set()
    present = {_bare(line) for line in snapshot.curated_lines if line.strip()}
    day = snapshot.today.isoformat()
    limit = room = max(1, int(MAX_REMOVED_SHARE * len(present)))
    for edit in proposal.edits:
        label = _label(edit)
        why = _problem(edit, snapshot, taken, present, len(accepted), max_edits)
        if why is not None:
            rejected.append((label, why))
            continue
        try:
            planned = _planned(edit, snapshot, day)
        except ContentError as exc:  # NUL, lone surrogates, over a note's size: refused
            rejected.append((label, str(exc)))
            continue
        removed = _lines_removed(planned)
        if removed > room:
            rejected.append((label, f"would take away {removed} line(s), {limit - room} taken "
                                    f"already; one run takes away at most {limit} "
                                    f"({MAX_REMOVED_SHARE:.0%} of the file's lines)"))
            continue
        room -= removed
        if planned.action == "add":
            present.add(_bare(planned.text or ""))
        else:
            taken.update(range(planned.start, planned.end + 1))
        accepted.append(planned)
    return Plan(snapshot.curated_path, tuple(accepted), tuple(rejected))


def _label(edit: ProposedEdit) -> str:
    """How a refused edit is named in a report: bounded, and printable whatever it holds."""
    label = f"{edit.action} {edit.lines or ''} {edit.text or ''}".strip()
    label = label.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\\0")
    return label if len(label) <= 200 else label[:199] + "\u2026"


def _planned(edit: ProposedEdit, snapshot: Snapshot, day: str) -> PlannedEdit:
    if edit.action == "add":
        return PlannedEdit("add", 0, 0, "", _as_written(edit.text or "", "- ", day),
                           _reason(edit.reason))
    span = _lines_of(edit.lines, snapshot)
    assert isinstance(span, tuple)
    start, end = span
    expected = "\n".join(snapshot.curated_lines[start - 1:end])
    text = (None if edit.action == "remove"
            else _as_written(edit.text or "", snapshot.curated_lines[start - 1], day))
    return PlannedEdit(edit.action, start, end, expected, text, _reason(edit.reason))


def _reason(text: str) -> str:
    """The model's reason as history keeps it: one line of printable text, 500 characters at
    most (it is the model's, untrusted)."""
    clean = text.encode("utf-8", "replace").decode("utf-8")
    clean = " ".join("".join(ch for ch in clean if ch.isprintable() or ch == " ").split())
    return clean[:500]


def _lines_removed(edit: PlannedEdit) -> int:
    """Non-blank lines an edit takes away (an update replacing three lines with one: two)."""
    if edit.action == "add":
        return 0
    old = sum(1 for line in edit.expected.split("\n") if line.strip())
    new = sum(1 for line in (edit.text or "").split("\n") if line.strip())
    return max(0, old - new)


def _problem(edit: ProposedEdit, snapshot: Snapshot, taken: set[int], present: set[str],
             count: int, max_edits: int) -> str | None:
    if count >= max_edits:
        return f"over the limit of {max_edits} edits per run"
    if edit.action in ("add", "update") and not (edit.text or "").strip():
        return f"an {edit.action} needs the new text"
    if edit.action == "add":
        return "already in the file" if _bare(edit.text or "") in present else None
    span = _lines_of(edit.lines, snapshot)
    if isinstance(span, str):
        return span
    start, end = span
    if taken & set(range(start, end + 1)):
        return "overlaps an earlier edit of this run"
    if not any(line.strip() for line in snapshot.curated_lines[start - 1:end]):
        return "the lines are blank: nothing to edit there"
    if edit.action == "update" and _bare(edit.text or "") == _bare(
            "\n".join(snapshot.curated_lines[start - 1:end])):
        return "no change: the lines already say that"
    return None
