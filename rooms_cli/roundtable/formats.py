"""Conversation formats: who takes part, how long, how hot, who opens, and why.

16 built-ins (the source's numbers for standup, debate and watercooler); `.rooms.yaml` → `formats:`
overrides a built-in (only the keys given) or adds a new one (every key but `purpose` required).
Every problem is an InvalidData error naming the key path, e.g. `formats.standup.min_agents`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rooms_cli.core.errors import InvalidData, NotFound
from rooms_cli.store.ids import is_valid_name

if TYPE_CHECKING:
    from rooms_cli.project.config import Config

OPENERS = ("leader", "first", "random")
KEYS = ("min_agents", "max_agents", "min_turns", "max_turns", "temperature", "opens", "purpose")


@dataclass(frozen=True)
class Format:
    """A roundtable format: how many agents and turns, temperature, who opens, purpose, where defined."""

    name: str
    min_agents: int
    max_agents: int
    min_turns: int
    max_turns: int
    temperature: float
    opens: str  # leader | first | random
    purpose: str
    source: str = "built-in"  # built-in | .rooms.yaml | overridden

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _f(name: str, agents: tuple[int, int], turns: tuple[int, int], temperature: float, opens: str, purpose: str) -> Format:
    return Format(name, agents[0], agents[1], turns[0], turns[1], temperature, opens, purpose)


BUILTINS: dict[str, Format] = {
    f.name: f
    for f in (
        _f("standup", (4, 6), (6, 12), 0.6, "leader", "align priorities, surface issues"),
        _f("debate", (2, 3), (6, 10), 0.8, "random", "agents who disagree face off"),
        _f("watercooler", (2, 3), (2, 5), 0.9, "random", "casual chat where side insights surface"),
        _f("brainstorm", (3, 5), (6, 12), 0.9, "random", "many ideas fast, no judging yet"),
        _f("strategy", (3, 5), (8, 14), 0.6, "leader", "set direction and the bets for the next weeks"),
        _f("deep-dive", (2, 4), (8, 14), 0.5, "first", "dig into one question until it is understood"),
        _f("check-in", (2, 4), (3, 6), 0.6, "leader", "quick status and blockers mid-day"),
        _f("content-review", (2, 4), (4, 8), 0.7, "first", "critique drafts and copy before they ship"),
        _f("night-briefing", (2, 4), (4, 8), 0.5, "leader", "what happened today and what to watch overnight"),
        _f("retro", (3, 6), (6, 12), 0.6, "leader", "what went well, what did not, what we change"),
        _f("post-mortem", (2, 5), (6, 12), 0.4, "first", "reconstruct a failure and its causes without blame"),
        _f("pre-mortem", (3, 5), (6, 10), 0.8, "random", "imagine the project failed and explain why"),
        _f("planning", (3, 6), (6, 12), 0.5, "leader", "turn goals into owners, steps and dates"),
        _f("design-review", (2, 4), (6, 10), 0.5, "first", "check a design against its requirements and risks"),
        _f("one-on-one", (2, 2), (4, 8), 0.6, "first", "two agents sync privately on one topic"),
        _f("decision", (2, 5), (4, 8), 0.4, "leader", "weigh the options and commit to one"),
    )
}


def _int(where: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidData(f".rooms.yaml: {where} must be a whole number ≥ {minimum}, found {value!r}")
    return value


def validate_format(name: object, spec: object, base: Format | None = None) -> Format:
    """Build a Format from a `formats:` entry, over `base` when it overrides a built-in."""
    where = f"formats.{name}"
    if not is_valid_name(name):
        raise InvalidData(f".rooms.yaml: {where}: a format name uses lowercase letters, digits, '.', '_' or '-'")
    if not isinstance(spec, dict):
        raise InvalidData(f".rooms.yaml: {where} must be a mapping such as {{min_agents: 2, max_agents: 4, …}}")
    for key in spec:
        if key not in KEYS:
            raise InvalidData(f".rooms.yaml: {where}.{key} is not a format key; use {', '.join(KEYS)}")
    if base is None:
        missing = [k for k in KEYS if k not in spec and k != "purpose"]
        if missing:
            raise InvalidData(f".rooms.yaml: {where} is a new format and needs {', '.join(missing)}")
    values: dict[str, Any] = asdict(base) if base else {"name": name, "purpose": ""}
    values.update(spec)
    for key, minimum in (("min_agents", 2), ("max_agents", 2), ("min_turns", 1), ("max_turns", 1)):
        _int(f"{where}.{key}", values[key], minimum)
    for low, high in (("min_agents", "max_agents"), ("min_turns", "max_turns")):
        if values[low] > values[high]:
            raise InvalidData(
                f".rooms.yaml: {where}: {low} ({values[low]}) is greater than {high} ({values[high]})"
            )
    temp = values["temperature"]
    if isinstance(temp, bool) or not isinstance(temp, (int, float)) or not 0 <= temp <= 2:
        raise InvalidData(f".rooms.yaml: {where}.temperature must be a number from 0 to 2, found {temp!r}")
    if values["opens"] not in OPENERS:
        raise InvalidData(
            f".rooms.yaml: {where}.opens must be one of {', '.join(OPENERS)}, found {values['opens']!r}"
        )
    if not isinstance(values["purpose"], str):
        raise InvalidData(f".rooms.yaml: {where}.purpose must be text")
    values["temperature"] = float(temp)
    values["source"] = "overridden" if base else ".rooms.yaml"
    return Format(**values)


def load_formats(config: Config) -> dict[str, Format]:
    """Built-ins overlaid by `formats:` in .rooms.yaml, in a stable order (built-ins first)."""
    merged = dict(BUILTINS)
    for name, spec in (config.get("formats") or {}).items():
        merged[name] = validate_format(name, spec, BUILTINS.get(name))
    return merged


def get_format(config: Config, name: str) -> Format:
    formats = load_formats(config)
    if name not in formats:
        raise NotFound(f"no format {name!r}; known formats: {', '.join(formats)}")
    return formats[name]

