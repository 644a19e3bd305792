"""A doctor finding: what `rooms doctor` and each part's own check report (below every part)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Finding:
    """One problem `rooms doctor` reports: severity, the check, what is wrong, the fix, the file."""

    severity: str  # error | warning
    check: str
    message: str
    fix: str
    file: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


def typed_findings(project, check: str, kind: str, paths) -> list[Finding]:
    """A finding for each record of `paths` whose fields break store/schema.py's `kind` schema, naming
    file, line and field: "<file> line 3: field 'n' must be a whole number from 0 (it is 'x')"."""
    from rooms_cli.store import schema

    findings = []
    for path in paths:
        rel = project.relative(path)
        for line, wrong in schema.file_problems(kind, path):
            where = rel if line is None else f"{rel} line {line}"
            findings.append(Finding("error", check, f"{where}: {wrong}",
                                    f"fix or remove the record at {where}", rel))
    return findings


def unreadable_findings(check: str, names, load, message, fix) -> list[Finding]:
    """A finding for each of `names` that `load(name)` refuses with InvalidData (a field of the wrong
    type: the error's message starts with the file it names). `message(name, err)` and `fix(rel)` word it."""
    from rooms_cli.errors import InvalidData

    findings = []
    for name in names:
        try:
            load(name)
        except InvalidData as err:
            rel = err.message.partition(":")[0]
            findings.append(Finding("error", check, message(name, err), fix(rel), rel))
    return findings
