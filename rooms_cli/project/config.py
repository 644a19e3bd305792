"""`.rooms.yaml`: the project's configuration.

Top-level keys are checked for type here (one clear error naming the key); each part validates the
inside of its own section (`formats`, `schedule`, `groups`…) with the key path in the message.
Unknown keys warn on stderr and are otherwise ignored. Secrets never live here: providers name the
environment variable (`api_key_env`) or a key file outside the repo (`api_key_file`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from rooms_cli.core import terminal
from rooms_cli.core.errors import InvalidData
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.store.paths import CONFIG, Project

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

PROVIDER_TYPES = ("offline", "openai", "anthropic", "command", "external")

# key -> (accepted python types, human description)
TOP_LEVEL: dict[str, tuple[tuple[type, ...], str]] = {
    "user": ((str,), "a name"),
    "default_model": ((str,), "a model string such as offline or ollama:llama3.2"),
    "providers": ((dict,), "a mapping of provider name to settings"),
    "leader": ((str,), "an agent id"),
    "formats": ((dict,), "a mapping of format name to settings"),
    "schedule": ((list,), "a list of slots"),
    "catch_up": ((str, int, float), "a duration such as 1h"),
    "groups": ((dict,), "a mapping with defaults and presets"),
    "reducers": ((dict,), "a mapping of reducer name to module:function"),
    "runner": ((list,), "an argv list such as [claude, -p]"),
    "pass_env": ((list,), "a list of environment variable names passed to spawned runners"),
    "max_spawn_depth": ((int,), "a whole number"),
    "wake": ((bool,), "true or false"),
    "context_threshold": ((int, float), "a fraction between 0 and 1"),
    "context_messages": ((int,), "a whole number of messages"),
    "lock_timeout": ((int, float), "a number of seconds"),
    "memory": ((dict,), "a mapping such as {max_per_prompt: 5}"),
    "sync": ((dict,), "a mapping such as {remote: origin, claims: true} (docs/git.md)"),
}

# Providers usable with no configuration at all.
BUILTIN_PROVIDERS: dict[str, dict[str, Any]] = {
    "offline": {"type": "offline"},
    "external": {"type": "external"},
    "openai": {"type": "openai", "api_key_env": "OPENAI_API_KEY"},
    "ollama": {"type": "openai", "ollama": True},
    "anthropic": {"type": "anthropic", "api_key_env": "ANTHROPIC_API_KEY"},
}



@dataclass
class Config:
    """`.rooms.yaml` as read (empty when there is none), and where it was."""

    data: dict[str, Any] = field(default_factory=dict)
    path: str | None = None

    def get(self, key: str, default: Any = None) -> Any:
        value = self.data.get(key)
        return default if value is None else value

    @property
    def user(self) -> str | None:
        return self.data.get("user")

    @property
    def default_model(self) -> str:
        return self.data.get("default_model") or "offline"

    def providers(self) -> dict[str, dict[str, Any]]:
        """Built-in providers overlaid by the configured ones."""
        merged = {name: dict(spec) for name, spec in BUILTIN_PROVIDERS.items()}
        for name, spec in (self.data.get("providers") or {}).items():
            merged[name] = dict(spec)
        return merged

    def masked(self) -> dict[str, Any]:
        """The effective config with anything secret-looking masked, for display."""
        shown = dict(self.data)
        shown.setdefault("default_model", "offline")
        shown["providers"] = self.providers()
        from rooms_cli.core.child_env import mask_config

        masked: dict[str, Any] = mask_config(shown)
        return masked


def _type_name(value: object) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "true/false", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def validate(data: object, where: str) -> dict[str, Any]:
    """Check the top level and the providers section; return the data. Warn on unknown keys."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidData(f"{where}: expected a mapping of settings at the top level, found {_type_name(data)}")
    for key, value in data.items():
        if key not in TOP_LEVEL:
            terminal.warn(f"{where}: unknown key {key!r} ignored")
            continue
        if value is None:
            continue
        types, desc = TOP_LEVEL[key]
        if isinstance(value, bool) and bool not in types:
            ok = False
        else:
            ok = isinstance(value, types)
        if not ok:
            raise InvalidData(f"{where}: key {key!r} must be {desc}, found {_type_name(value)}")
    if "context_threshold" in data and data["context_threshold"] is not None:
        if not 0 < float(data["context_threshold"]) <= 1:
            raise InvalidData(f"{where}: key 'context_threshold' must be a fraction between 0 and 1")
    if "runner" in data and data["runner"] is not None:
        if not data["runner"] or not all(isinstance(a, str) for a in data["runner"]):
            raise InvalidData(f"{where}: key 'runner' must be a non-empty list of strings (argv, never a shell string)")
    for name, spec in (data.get("providers") or {}).items():
        validate_provider(name, spec, where)
    return data


def _whole(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


# what each optional key of a provider must hold, checked in this order: (keys, test, what it must be)
_PROVIDER_VALUES: tuple[tuple[tuple[str, ...], Callable[[object], bool], str], ...] = (
    (("base_url", "api_key_env", "api_key_file", "auth_token_env", "anthropic_version", "model"),
     lambda v: isinstance(v, str), "a string"),
    (("timeout", "connect_timeout", "retry_backoff", "max_retry_wait"),
     lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0, "a positive number of seconds"),
    (("max_retries",), lambda v: _whole(v, 0), "a whole number ≥ 0"),
    (("max_tokens",), lambda v: _whole(v, 1), "a whole number > 0"),
    (("context_window",), lambda v: _whole(v, 256), "a whole number of tokens (at least 256)"),
    (("ollama",), lambda v: isinstance(v, bool), "true or false"),
    (("headers",), lambda v: isinstance(v, dict), "a mapping"),
)


def validate_provider(name: str, spec: object, where: str) -> None:
    """Refuse a `providers.NAME` entry that is not a mapping with a known type, holds a key in the
    clear, or has a value of the wrong kind; `where` names the file in the error."""
    key = f"providers.{name}"
    if not isinstance(spec, dict):
        raise InvalidData(f"{where}: key {key!r} must be a mapping with a 'type', found {_type_name(spec)}")
    ptype = spec.get("type")
    if ptype not in PROVIDER_TYPES:
        raise InvalidData(f"{where}: key '{key}.type' must be one of {', '.join(PROVIDER_TYPES)}, found {ptype!r}")
    if "api_key" in spec:
        raise InvalidData(
            f"{where}: key '{key}.api_key' would put a secret in the repository; "
            f"use api_key_env: NAME_OF_ENV_VAR (or api_key_file: a path outside the repo)"
        )
    for subs, valid, must in _PROVIDER_VALUES:
        for sub in subs:
            if sub in spec and not valid(spec[sub]):
                raise InvalidData(f"{where}: key '{key}.{sub}' must be {must}")
    if ptype == "command":
        cmd = spec.get("command")
        if isinstance(cmd, str):
            raise InvalidData(
                f"{where}: key '{key}.command' must be a list of arguments such as [claude, -p], not a shell string"
            )
        if not isinstance(cmd, list) or not cmd or not all(isinstance(a, str) for a in cmd):
            raise InvalidData(f"{where}: key '{key}.command' must be a non-empty list of strings")


_cache: dict[str, Config] = {}


def load_config(project: Project | None) -> Config:
    """Read and validate `.rooms.yaml` beside `.rooms/` (missing file: defaults)."""
    if project is None:
        return Config()
    path = os.path.join(project.root, CONFIG)
    try:
        stat = os.stat(path)
        key = f"{path}:{stat.st_mtime_ns}:{stat.st_size}"
    except FileNotFoundError:
        return Config(path=None)
    if key in _cache:
        return _cache[key]
    from rooms_cli.store import atomic, parsed

    data = parsed.cached(project.dir, path, lambda: atomic.read_yaml(path, default={}), stat)
    config = Config(data=validate(data, CONFIG), path=path)
    _cache[key] = config
    return config


def identity(explicit: str | None, config: Config | Callable[[], Config]) -> str:
    """Who acts: --as, else ROOMS_AGENT, else `user:` in .rooms.yaml, else $USER.

    `config` may be a function giving it: .rooms.yaml is then read only when neither --as nor
    ROOMS_AGENT says who acts (most agent commands never parse YAML)."""
    from rooms_cli.store.ids import validate_name

    if explicit is not None and not explicit.strip():  # `--as ''` is a mistake, not "unset"
        validate_name(explicit, "identity (--as)")
    for source, value in (
        ("--as", explicit),
        ("ROOMS_AGENT", os.environ.get("ROOMS_AGENT")),
        ("user in .rooms.yaml", None),
        ("$USER", os.environ.get("USER") or os.environ.get("USERNAME")),
    ):
        if source == "user in .rooms.yaml":
            value = (config() if callable(config) else config).user
        if value:
            if source == "$USER":
                value = value.lower()
            return validate_name(value, f"identity ({source})")
    return "user"
