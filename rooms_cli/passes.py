"""`/pass`: how an agent says it has nothing to add — the one rule every part applies to a reply.

A reply is a pass when it is just `/pass`, whatever the case, wrapped in backticks, stars or
underscores, with a final period or exclamation mark (`/pass.`, `**/PASS**`). Chat records it as a
pass (no budget spent), messaging's wake delivers nothing, watch shows "passes".
"""

from __future__ import annotations

PASS = "/pass"


def is_pass(text: str) -> bool:
    """True for a reply that is just `/pass` (case, backticks, stars and a final period ignored)."""
    return text.strip().strip("`*_ ").rstrip(".!").strip().lower() == PASS


def could_still_be_pass(start: str) -> bool:
    """True while a streamed reply that begins with `start` may still turn out to be a pass."""
    probe = start.strip().strip("`*_").lower()
    return PASS.startswith(probe) or (probe.startswith(PASS) and len(probe) <= len(PASS) + 1)
