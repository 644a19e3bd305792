"""A doctor finding: what `rooms doctor` and each part's own check report (below every part)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Finding:
    severity: str  # error | warning
    check: str
    message: str
    fix: str
    file: str | None = None

    def to_json(self) -> dict:
        return asdict(self)
