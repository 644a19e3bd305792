"""How long a reply may be: a default per kind of call, and the one rule that picks the limit.

    max_tokens = reply_limit("chat", agent=agent, provider_spec=provider.spec)
    max_tokens = reply_limit("vote", override=group.max_tokens)        # a room/format/group setting

Precedence (the first one set wins):
1. `override`: what the room, the roundtable format or the group says for this call;
2. the agent's `max_tokens:` (its file's frontmatter);
3. the provider's `max_tokens` (`providers.NAME.max_tokens` in .rooms.yaml);
4. the default for the purpose, below.

The defaults keep a small model from rambling (one agent once streamed 3 268 tokens of
`salt_salt_salt…` into a room) and still let a real answer finish: a chat turn of a few
paragraphs fits in 400 tokens, a vote or a ballot in far less. `Provider.acomplete` applies
this rule itself when a caller passes no `max_tokens`, so no model call is ever unbounded.
A reply the limit stopped (`Completion.cut`) is shown through `mark_cut`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

DEFAULT_MAX_TOKENS: dict[str, int] = {
    "chat": 400,  # a room reply: a few paragraphs
    "answer": 600,  # a direct question (wake, worker, `rooms models test` sets its own)
    "handoff": 600,  # the summary a session hands to the next one
    "summary": 600,
    "vote": 120,  # one of the declared options and a reason
    "rank": 120,  # a ballot: labels in order, maybe a line each
    "lessons": 500,  # 2-3 lessons per participant, as JSON
    "roundtable": 200,  # one roundtable turn (turns are capped at 120 characters by default)
    "group": 500,  # a group member's answer to a fan-out
    "task": 1500,  # a spawned worker's whole answer to one task (`rooms spawn`)
}
FALLBACK_PURPOSE = "answer"  # a purpose not in the table gets its limit


def _positive(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def reply_limit(purpose: str, *, agent: Any = None, provider_spec: dict[str, Any] | None = None, override: int | None = None) -> int:
    """The max_tokens for one call of kind `purpose` (see the module docstring for the order)."""
    for value in (override, getattr(agent, "max_tokens", None), (provider_spec or {}).get("max_tokens")):
        limit = _positive(value)
        if limit is not None:
            return limit
    return DEFAULT_MAX_TOKENS.get(purpose, DEFAULT_MAX_TOKENS[FALLBACK_PURPOSE])


CUT_MARK = "…"


def mark_cut(text: str) -> str:
    """A reply the limit stopped, made readable: "…" where it stopped, and a code fence it left
    open closed (so the rest of a transcript does not render as code)."""
    text = text.rstrip()
    if not text.endswith(CUT_MARK):
        text += CUT_MARK
    if text.count("```") % 2:
        text += "\n```"
    return text


__all__ = ["CUT_MARK", "DEFAULT_MAX_TOKENS", "mark_cut", "reply_limit"]
