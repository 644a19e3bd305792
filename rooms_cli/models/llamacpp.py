"""What llama.cpp's server tells about itself, for the providers that can talk to one (openai, and
anthropic through llama.cpp's /v1/messages): its context window (`GET {root}/props`,
`default_generation_settings.n_ctx`, the window of one slot), whether its chat template takes a
system message (the same answer's `chat_template_caps`, see models/prompt.py) and its tokenizer
(`POST {root}/tokenize`). `root` is the server's address without `/v1`. `/props` is asked once per
process and server; whether a server is llama.cpp, and every count, is remembered per process;
nothing here raises.
"""

from __future__ import annotations

from rooms_cli.models.base import server_cache
from rooms_cli.models.http import probe

_servers: dict[str, bool] = server_cache({})  # root -> is it llama.cpp (answers /props)
_props: dict[str, tuple[int, object]] = server_cache({})  # root -> (HTTP status of GET /props, its answer)
_counts: dict[tuple[str, str], int] = server_cache({})
COUNT_CACHE = 4096  # counts remembered per process (the same transcript lines are counted often)


def root_of(base_url: str) -> str:
    """The server's root: the base URL without a trailing /v1."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def known(root: str) -> bool | None:
    """True/False once `window(root)` has asked; None before."""
    return _servers.get(root)


async def props(root: str, headers: dict[str, str] | None = None, connect_timeout: float | None = None) -> tuple[int, object]:
    """(HTTP status of GET /props, 0 when unreachable within `connect_timeout` (the provider's);
    its JSON answer, or None), asked once per process."""
    if root not in _props:
        _props[root] = await probe(f"{root}/props", headers=headers, connect_timeout=connect_timeout)
    return _props[root]


async def system_role(root: str, headers: dict[str, str] | None = None, connect_timeout: float | None = None) -> bool:
    """Whether the server's chat template takes a system message (True when it does not say)."""
    from rooms_cli.models.prompt import template_has_system_role

    return template_has_system_role((await props(root, headers, connect_timeout))[1])


async def window(root: str, headers: dict[str, str] | None = None, connect_timeout: float | None = None) -> tuple[int, int | None]:
    """(HTTP status of GET /props, 0 when unreachable; the per-slot window, or None)."""
    status, props_ = await props(root, headers, connect_timeout)
    settings = props_.get("default_generation_settings") if isinstance(props_, dict) else None
    _servers[root] = isinstance(settings, dict)
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return status, n_ctx if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0 else None


async def count(root: str, text: str, headers: dict[str, str] | None = None) -> int | None:
    """Tokens in `text` by the server's tokenizer; None when it has none (then it is not asked again)."""
    key = (root, text)
    if key in _counts:
        return _counts[key]
    _, data = await probe(f"{root}/tokenize", body={"content": text}, headers=headers)
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        _servers[root] = False  # no tokenizer there after all: estimate from now on
        return None
    if len(_counts) >= COUNT_CACHE:
        _counts.clear()
    _counts[key] = len(tokens)
    return len(tokens)
