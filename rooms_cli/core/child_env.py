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

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

BASE_NAMES = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ"})
# the spawner's own identity and work: never inherited
PARENT_ONLY = frozenset({"ROOMS_LEASE", "ROOMS_INSTANCE"})
MIN_SECRET_RUN = 8  # characters of a key that count as a leak

# environment variables a provider type reads when its spec names none (see models/openai.py, anthropic.py)
_TYPE_DEFAULTS = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
}


def provider_env_names(spec: Mapping[str, Any]) -> list[str]:
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


def _key_file(spec: Mapping[str, Any]) -> str:
    from rooms_cli.store import files

    path = spec.get("api_key_file")
    if not path:
        return ""
    try:
        return files.read_text(os.path.expanduser(os.path.expandvars(str(path)))).strip()

    except (OSError, UnicodeDecodeError):
        return ""


def configured_secrets(providers: Mapping[str, Mapping[str, Any]]) -> list[str]:
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

    def __init__(self, on_delta: Callable[[str], None], secrets: list[str]) -> None:
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


# --- configuration shown to a person: one masking for every place it is printed or an error names it -------

# header names whose values are harmless to show; every other header's value is ****
HARMLESS_HEADERS = frozenset({"content-type", "accept", "accept-encoding", "accept-language", "user-agent",
                              "x-title", "http-referer", "referer", "anthropic-version", "anthropic-beta"})
SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "authorization", "auth", "credential", "cookie")
_SECRET_FLAG = r"--?[A-Za-z0-9_-]*(?:key|token|secret|password|passwd|auth|credential|cookie)[A-Za-z0-9_-]*"
MASK = "****"


def _secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in SECRET_WORDS) and not lowered.endswith(("_env", "_file"))


def mask_text(text: str) -> str:
    """`text` with what looks like a credential masked: the password of a URL's userinfo
    (`http://alice:****@host`), the value after `Bearer`/`Basic`, after a secret-looking header name
    (`Authorization: …`, `Cookie: …`, `X-Api-Key: …`) and after `key=`, `token=`, `password=`… (also
    in a URL's query). Standard library `re` only, compiled on use: error paths and displays call it."""
    import re

    if not text or not isinstance(text, str):
        return text
    text = re.sub(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^/\s@]+@", rf"\1:{MASK}@", text)
    text = re.sub(r"\b(Bearer|Basic|Token)\s+(?!\*\*\*\*)[^\s'\",;]+", rf"\1 {MASK}", text, flags=re.IGNORECASE)
    # a header in text: a known credential header, or any hyphenated name but the harmless ones
    text = re.sub(r"(?<![A-Za-z0-9-])(Authorization|Proxy-Authorization|Cookie|Set-Cookie|[A-Za-z0-9]+-[A-Za-z0-9-]+)(\s*:\s*)"
                  r"(?!\*\*\*\*|(?:Bearer|Basic|Token)\s)([^\s'\",;]+)",
                  lambda m: m.group(0) if m.group(1).lower() in HARMLESS_HEADERS or not _secret_header(m.group(1))
                  else f"{m.group(1)}{m.group(2)}{MASK}", text, flags=re.IGNORECASE)
    # key=value (an assignment, a URL's query); a placeholder (`KEY=…`) is left as it is
    text = re.sub(r"(\b[A-Za-z0-9_.-]*(?:key|token|secret|password|passwd|pwd|auth|credential)[A-Za-z0-9_.-]*=)"
                  r"(?!\*\*\*\*|…|\.\.\.)[^\s&'\",;]+", rf"\1{MASK}", text, flags=re.IGNORECASE)
    return text


def _secret_header(name: str) -> bool:
    """A header name whose value is a credential when it appears in free text."""
    lowered = name.lower()
    return lowered in ("authorization", "proxy-authorization", "cookie", "set-cookie") or (
        "-" in lowered and any(word in lowered for word in ("key", "token", "auth", "secret", "password", "session")))


def mask_headers(headers: Mapping[str, Any]) -> dict[str, Any]:
    """Every header value shown as **** but those of a short allow-list of harmless names."""
    return {k: (v if str(k).lower() in HARMLESS_HEADERS else MASK) for k, v in headers.items()}


def mask_argv(argv: Iterable[Any]) -> list[Any]:
    """An argv for display: the value after a secret-looking flag (`--token X`, `--api-key=X`), after
    `-H`/`--header` unless the header's name is harmless, and any element that looks like a credential
    (`Bearer …`, `key=…`, a URL with a password) masked."""
    import re

    out: list[Any] = []
    mask_next = header_next = False
    for arg in argv:
        if not isinstance(arg, str):
            out.append(arg)
            continue
        if mask_next:
            out.append(MASK)
        elif header_next:
            name, sep, _value = arg.partition(":")
            out.append(arg if sep and name.strip().lower() in HARMLESS_HEADERS else (f"{name}: {MASK}" if sep else MASK))
        elif re.fullmatch(_SECRET_FLAG + "=.*", arg, flags=re.IGNORECASE):
            out.append(arg.partition("=")[0] + "=" + MASK)
        else:
            out.append(mask_text(arg))
        mask_next = bool(re.fullmatch(_SECRET_FLAG, arg, flags=re.IGNORECASE)) and not (mask_next or header_next)
        header_next = arg in ("-H", "--header") and not (mask_next or header_next)
    return out


def mask_config(value: Any, key: str = "") -> Any:
    """A configuration value (a mapping, a list, a string) for display: a secret-named key's value is
    ****; `headers:` through mask_headers; `command:`/`runner:` argv through mask_argv; every other
    string through mask_text (a URL's password, a `key=` in a query). `config show`, `models list`,
    `models test`, doctor and provider errors all show configuration through this (one masking)."""
    if isinstance(value, Mapping):
        shown: dict[str, Any] = {}
        for k, v in value.items():
            name = str(k)
            if name.lower() == "headers" and isinstance(v, Mapping):
                shown[k] = mask_headers(v)
            elif name.lower() in ("command", "runner") and isinstance(v, list):
                shown[k] = mask_argv(v)
            else:
                shown[k] = mask_config(v, name)
        return shown
    if isinstance(value, list):
        return [mask_config(v, key) for v in value]
    if isinstance(value, str):
        return MASK if _secret_name(key) else mask_text(value)
    return value
