"""A doctor finding: what `rooms doctor` and each part's own check report (below every part)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from rooms_cli.core.errors import InvalidData
    from rooms_cli.store.paths import Project


@dataclass
class Finding:
    """One problem `rooms doctor` reports: severity, the check, what is wrong, the fix, the file."""

    severity: str  # error | warning
    check: str
    message: str
    fix: str
    file: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def typed_findings(project: Project, check: str, kind: str, paths: Iterable[str], key: str | None = None) -> list[Finding]:
    """A finding for each record of `paths` that breaks store/schema.py's `kind` schema (`schema.problem`,
    the check its reader makes), naming file, line and field: "<file> line 3: field 'n' must be a whole number from 0
    (it is 'x')" — an error: its reader drops, coerces or ignores it.

    And duplicates in a log: the same line twice is a warning (every reader counts it once); two
    records sharing `key` (their id) with different content is an error — readers keep one and the
    other is hidden (a second transcript message, an inbox message that reads as already read)."""
    from rooms_cli.store import schema

    findings = []
    for path in paths:
        rel = project.relative(path)
        first: dict[tuple[str, str], Any] = {}
        for line, record in schema.records(path):
            where = rel if line is None else f"{rel} line {line}"
            wrong = schema.problem(kind, record)
            if wrong is not None:
                ident = record.get(key) if key and isinstance(record, dict) else None
                named = f" ({key} {ident})" if isinstance(ident, str) and ident else ""
                findings.append(Finding("error", check, f"{where}{named}: {wrong}", f"fix or remove the record at {where}", rel))
            if line is None or not isinstance(record, dict):
                continue
            ident = record.get(key) if key else None
            token = ("id", ident) if isinstance(ident, str) and ident else ("line", repr(sorted(record.items(), key=str)))
            if token not in first:
                first[token] = (line, record)
                continue
            earlier, seen = first[token]
            if seen == record:
                findings.append(Finding("warning", check, f"{where} repeats line {earlier} (the same record twice: counted once)",
                                        f"nothing is lost; to tidy, delete line {line} of {rel}", rel))
            else:
                findings.append(Finding("error", check, f"{where} reuses {key} {ident} of line {earlier} with different content: "
                                        "readers keep one and the other is hidden",
                                        f"keep one: compare lines {earlier} and {line} of {rel}, then delete or re-id the wrong one", rel))
    return findings


def unreadable_findings(
    check: str, names: Iterable[str], load: Callable[[str], object],
    message: Callable[[str, InvalidData], str], fix: Callable[[str], str],
) -> list[Finding]:
    """A finding for each of `names` that `load(name)` refuses with InvalidData (a field of the wrong
    type: the error's message starts with the file it names). `message(name, err)` and `fix(rel)` word it."""
    from rooms_cli.core.errors import InvalidData

    findings = []
    for name in names:
        try:
            load(name)
        except InvalidData as err:
            rel = err.message.partition(":")[0]
            findings.append(Finding("error", check, message(name, err), fix(rel), rel))
    return findings


def octopus_recovery() -> str:
    """What to do after an octopus merge conflicted on `.rooms/` (docs/git.md): one sentence that `rooms
    doctor` prints and that `rooms sync` (or any command that merges) can print too."""
    return ("git's octopus strategy (`git merge B C`: several branches at once) runs no merge driver, so "
            "`.rooms/*.jsonl` conflicts although .rooms/.gitattributes says merge=union: undo it with "
            "`git merge --abort`, then merge one branch at a time (`git merge B && git merge C`)")
