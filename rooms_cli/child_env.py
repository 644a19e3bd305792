"""What a process rooms starts may see: an allow-list of the environment, and keys masked in text.

A spawned worker, a spawn's `runner:` and a `command` provider get only

- PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM, TMPDIR, TZ;
- the ROOMS_* variables that name the project and the identity (never the spawner's own
  ROOMS_LEASE / ROOMS_INSTANCE: a child acts as itself, under no lease of its parent's);
- the key variables of the one provider the child uses (its `api_key_env` / `auth_token_env`,
  or the provider type's default such as OPENAI_API_KEY for OpenAI's own API);
- the names listed under `pass_env:` (top level of .rooms.yaml for spawn runners, or
  `providers.NAME.pass_env` for a provider).

No other API key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GITHUB_TOKEN…) reaches a child.

`mask_secrets` replaces every run of 8 or more characters copied from a configured key with
****: a server that echoes part of a key in an error, or a model whose reply contains one, never
gets it into anything rooms prints or stores (models/base.py applies it to every completion and
every provider error).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

BASE_NAMES = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ"})
# the spawner's own identity and work: never inherited
PARENT_ONLY = frozenset({"ROOMS_LEASE", "ROOMS_INSTANCE"})
MIN_SECRET_RUN = 8  # characters of a key that count as a leak

# environment variables a provider type reads when its spec names none (see models/openai.py, anthropic.py)
_TYPE_DEFAULTS = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
}


def provider_env_names(spec: Mapping) -> list[str]:
    """The environment variables the provider `spec` itself reads, plus its `pass_env:`."""
    names = [str(spec[k]) for k in ("api_key_env", "auth_token_env") if spec.get(k)]
    if not spec.get("base_url") and not spec.get("ollama"):
        names += _TYPE_DEFAULTS.get(str(spec.get("type")), ())
    extra = spec.get("pass_env") or []
    names += [str(n) for n in extra] if isinstance(extra, list) else []
    return names


def child_env(pass_env: Iterable[str] = (), extra: Mapping[str, str] | None = None,
              environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `environ` (default: this process's), then `extra` on top."""
    source = os.environ if environ is None else environ
    allowed = set(pass_env)
    env = {
        name: value for name, value in source.items()
        if name in BASE_NAMES or name.startswith("LC_") or name in allowed
        or (name.startswith("ROOMS_") and name not in PARENT_ONLY)
    }
    env.update(extra or {})
    return env


def _key_file(spec: Mapping) -> str:
    from pathlib import Path

    path = spec.get("api_key_file")
    if not path:
        return ""
    try:
        return Path(os.path.expandvars(str(path))).expanduser().read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def configured_secrets(providers: Mapping[str, Mapping]) -> list[str]:
    """The values of every key the configured `providers` name (environment or key file)."""
    found: list[str] = []
    for spec in providers.values():
        names = provider_env_names(spec)
        values = [os.environ.get(n, "").strip() for n in names if not n.endswith("_BASE_URL")]
        values.append(_key_file(spec))
        found += [v for v in values if len(v) >= MIN_SECRET_RUN and v not in found]
    return found


def _covered(text: str, secrets: Iterable[str]) -> bytearray | None:
    """1 for each character of `text` inside a run of ≥ 8 characters copied from a secret; None: none."""
    covered = bytearray(len(text))
    hit = False
    for secret in secrets:
        if len(secret) < MIN_SECRET_RUN:
            continue
        # any copied run of ≥ 8 characters is a union of 8-character windows of the secret
        for i in range(len(secret) - MIN_SECRET_RUN + 1):
            window = secret[i:i + MIN_SECRET_RUN]
            at = text.find(window)
            while at >= 0:
                covered[at:at + MIN_SECRET_RUN] = b"\x01" * MIN_SECRET_RUN
                hit = True
                at = text.find(window, at + 1)
    return covered if hit else None


class StreamMask:
    """Mask a reply streamed piece by piece (the live `on_delta` text): the last MIN_SECRET_RUN-1
    characters are held back until more arrive or `close()` ends the stream, so whether a character
    belongs to a copied run is known before it is passed on and no run of a key reaches a terminal."""

    def __init__(self, on_delta, secrets: list[str]):
        self.on_delta, self.secrets = on_delta, secrets
        self.raw, self.sent, self.masking = "", 0, False

    def __call__(self, piece: str) -> None:
        self.raw += piece
        self._emit(len(self.raw) - (MIN_SECRET_RUN - 1))

    def close(self) -> None:
        self._emit(len(self.raw))

    def _emit(self, upto: int) -> None:
        if upto <= self.sent:
            return
        start = max(0, self.sent - (MIN_SECRET_RUN - 1))  # every window touching an unsent character
        tail = self.raw[start:]
        covered = _covered(tail, self.secrets) or bytearray(len(tail))
        out = []
        for i in range(self.sent, upto):
            if covered[i - start]:
                if not self.masking:
                    out.append("****")
                self.masking = True
            else:
                out.append(self.raw[i])
                self.masking = False
        self.sent = upto
        if out:
            self.on_delta("".join(out))


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with every run of ≥ 8 characters copied from one of `secrets` replaced by ****."""
    if not text:
        return text
    covered = _covered(text, secrets)
    if covered is None:
        return text
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append("****")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
