"""Group presets and defaults from `.rooms.yaml` → `groups:`, and preset overlays.

    groups:
      defaults: {broadcast_timeout: 300, default_reducer: concat}
      presets:
        code_audit: {profiles: [sec, style, logic]}

An overlay `.rooms/groups/<preset>.yaml` holds `{profiles: [...]}` for one preset. A name defined
both inline and as an overlay is an error naming both places: one source of truth per entry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rooms_cli.core.errors import InvalidData, InvalidInput, NotFound
from rooms_cli.project.config import Config
from rooms_cli.store import atomic, files, layout
from rooms_cli.store.clock import parse_duration
from rooms_cli.store.ids import is_valid_name
from rooms_cli.store.paths import CONFIG, Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

DEFAULT_TIMEOUT = 300.0
DEFAULT_REDUCER = "concat"


@dataclass
class Defaults:
    """`groups.defaults` of .rooms.yaml: the broadcast timeout and the reducer used when none is named."""

    broadcast_timeout: float = DEFAULT_TIMEOUT
    default_reducer: str = DEFAULT_REDUCER


def _section(config: Config) -> dict[str, Any]:
    section = config.get("groups", {}) or {}
    for key in section:
        if key not in ("defaults", "presets"):
            raise InvalidData(f"{CONFIG}: unknown key 'groups.{key}'; expected defaults and presets")
    return section


def defaults(config: Config) -> Defaults:
    """`groups.defaults`, checked: broadcast_timeout a duration, default_reducer a name."""
    raw = _section(config).get("defaults") or {}
    if not isinstance(raw, dict):
        raise InvalidData(f"{CONFIG}: key 'groups.defaults' must be a mapping such as {{broadcast_timeout: 300}}")
    result = Defaults()
    for key, value in raw.items():
        if key == "broadcast_timeout":
            try:
                result.broadcast_timeout = parse_duration(value)
            except InvalidInput:
                raise InvalidData(f"{CONFIG}: key 'groups.defaults.broadcast_timeout' must be seconds or a duration such as 5m, found {value!r}") from None
        elif key == "default_reducer":
            if not isinstance(value, str) or not value:
                raise InvalidData(f"{CONFIG}: key 'groups.defaults.default_reducer' must be a reducer name, found {value!r}")
            result.default_reducer = value
        else:
            raise InvalidData(f"{CONFIG}: unknown key 'groups.defaults.{key}'; expected broadcast_timeout and default_reducer")
    return result


def _profiles(value: object, where: str) -> list[str]:
    profiles = value.get("profiles") if isinstance(value, dict) else None
    if not isinstance(profiles, list) or not profiles or not all(isinstance(p, str) and p for p in profiles):
        raise InvalidData(f"{where}: 'profiles' must be a non-empty list of agent ids (or group:NAME), found {profiles!r}")
    return list(profiles)


def presets(project: Project, config: Config) -> dict[str, dict[str, Any]]:
    """Every preset: name -> {"profiles": [...], "source": where it is defined}."""
    inline = _section(config).get("presets") or {}
    if not isinstance(inline, dict):
        raise InvalidData(f"{CONFIG}: key 'groups.presets' must be a mapping of preset name to {{profiles: [...]}}")
    found: dict[str, dict[str, Any]] = {}
    for name, value in inline.items():
        where = f"{CONFIG} groups.presets.{name}"
        if not is_valid_name(str(name)):
            raise InvalidData(f"{where}: invalid preset name (use lowercase letters, digits, '.', '_' or '-')")
        found[str(name)] = {"profiles": _profiles(value, where), "source": where}
    folder = layout.groups_dir(project)
    for path in files.matching(folder, "*.yaml"):
        name = os.path.basename(path)[: -len(".yaml")]
        where = project.relative(path)
        if name in found:
            raise InvalidData(
                f"preset {name!r} is defined twice: in {found[name]['source']} and in {where}; keep exactly one"
            )
        found[name] = {"profiles": _profiles(atomic.read_yaml(path, default={}), where), "source": where}
    return found


def preset_profiles(project: Project, config: Config, name: str) -> list[str]:
    known = presets(project, config)
    if name not in known:
        listed = ", ".join(sorted(known)) or "none (define groups.presets in .rooms.yaml)"
        raise NotFound(f"no preset {name!r}; known presets: {listed}")
    profiles: list[str] = known[name]["profiles"]
    return profiles
