"""How an event reads on a terminal: one line of (text, style) parts; the CLI hands them to rich.

Speakers keep one colour for the whole session and across runs (a hash of the name picks it).
Passes and flavor lines are italic; task, group, inbox and spawn events are compact one-liners. An
event this module does not know is shown as its type and a `key=value` summary.
"""

from __future__ import annotations

import zlib

from rooms_cli.core.passes import is_pass
from rooms_cli.watch.events import summarize

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

Parts = list[tuple[str, str]]

PALETTE = (
    "cyan", "magenta", "green", "yellow", "blue", "bright_red",
    "bright_cyan", "bright_magenta", "bright_green", "bright_yellow", "bright_blue", "red",
)
QUIET_CHAT = {"join", "kick", "mute", "unmute", "handoff", "handoff_suggested", "continue", "roundtable", "system"}


def speaker_style(name: str) -> str:
    """A colour that is always the same for the same speaker."""
    return "bold " + PALETTE[zlib.crc32(name.encode("utf-8")) % len(PALETTE)]


def line(event: dict[str, Any]) -> Parts:
    """The parts of one rendered line for `event`."""
    family, _, what = str(event.get("type", "")).partition(".")
    head: Parts = [(_clock(event.get("ts")) + " ", "dim")]
    where = _where(event)
    if where:
        head.append((where + " ", "dim"))
    try:
        body = _BODIES.get(family, _generic)(what, event)
    except (TypeError, ValueError, AttributeError, KeyError):  # a known type with an odd shape
        body = _generic(what, event)
    # agent text is data: the console shows any control character as an escape (cli/output.py)
    return head + body


def _clock(ts: object) -> str:
    text = str(ts or "")
    return text[11:19] if len(text) >= 19 and text[10] == "T" else text[:8].ljust(8)


def _where(event: dict[str, Any]) -> str:
    if "room" in event:
        return f"#{event['room']}"
    if "group" in event:
        return f"▣ {event['group']}"
    return ""


def _one_line(text: object, limit: int = 160) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _chat(what: str, event: dict[str, Any]) -> Parts:
    speaker = str(event.get("speaker", ""))
    text = str(event.get("text", ""))
    if what == "message":  # continuation lines indented under the text
        return [(speaker, speaker_style(speaker)), (": ", ""), (text.replace("\n", "\n    "), "")]
    if what in ("pass", "flavor", "repeat"):  # as chat shows them: `* architect leans back and listens *`
        colour = speaker_style(speaker).replace("bold ", "italic ")
        said = text if text and not is_pass(text) else ("passes" if what == "pass" else "")
        return [("* ", "italic dim"), (speaker, colour), (f" {_one_line(said)} *" if said else " *", "italic dim")]
    if what == "budget_exhausted":
        return [("⏸ " + (_one_line(text) or "budget exhausted"), "bold yellow")]
    if what in ("join", "kick", "mute", "unmute", "continue"):
        return [(f"· {speaker} {_one_line(text)}", "dim")]
    if what in QUIET_CHAT:  # `rooms` itself speaks these: its name adds nothing
        return [(f"· {what.replace('_', ' ')}", "dim"), (f" {speaker}" if speaker not in ("", "rooms") else "", "dim"),
                (f": {_one_line(text)}" if text else "", "dim")]
    return _generic(what, event)


def _task(what: str, event: dict[str, Any]) -> Parts:
    label = str(event.get("status") or what) if what == "status" else what.replace("_", " ")
    parts: Parts = [("▸ ", "bold blue"), (str(event.get("task", ""))[:12] + " ", "blue"),
                    (label, "bold green" if what in ("done", "ready") else "bold")]
    if event.get("title"):
        parts.append((f" “{_one_line(event['title'], 60)}”", ""))
    who = event.get("agent") or event.get("by")
    if what == "assigned":
        parts.append((f" {event.get('from', '?')} → {event.get('to', '?')}" + (" (pending)" if event.get("pending") else ""), ""))
    elif who:
        parts.append((" held by " if what == "lease_expired" else " by ", "dim"))
        parts.append((str(who), speaker_style(str(who))))
    details = []
    if event.get("lease_until"):
        details.append(f"lease until {_clock(event['lease_until'])}")
    if event.get("summary"):
        details.append(_one_line(event["summary"], 120))
    if event.get("next"):
        details.append(f"next: {_one_line(event['next'], 80)}")
    if what in ("created", "ready") and event.get("lane"):
        details.append(f"lane {event['lane']}")
    if what == "ready" and event.get("after"):
        details.append("after " + ", ".join(str(t)[:12] for t in event["after"]))
    if details:
        parts.append((" — " + " · ".join(details), "dim"))
    if "record" in event:
        parts.append((" " + summarize(event["record"]), "dim"))
    return parts


def _group(what: str, event: dict[str, Any]) -> Parts:
    parts: Parts = [(what.replace("_", " "), "bold magenta")]
    if event.get("broadcast"):
        parts.append((f" {str(event['broadcast'])[:12]}", "dim"))
    who = event.get("handle") or event.get("sender") or event.get("by")
    if who:
        parts.append((" ", ""))
        parts.append((str(who), speaker_style(str(who))))
    if what == "broadcast" and event.get("members"):
        parts.append((" → " + ", ".join(map(str, event["members"])), "dim"))
    if what == "result":
        winner = f", winner {event['winner_handle']}" if event.get("winner_handle") else ""
        parts.append((f" {event.get('reducer', '')} {event.get('replied', '?')}/{event.get('members', '?')} replied{winner}", "dim"))
    if what == "renamed":
        parts.append((f" {event.get('from', '?')} → {event.get('to', '?')}", ""))
    if what == "reply" and event.get("status") not in (None, "ok"):
        parts.append((f" [{event['status']}]", "red"))
    text = event.get("text") or event.get("objective") or _reduced_text(event.get("reduced")) or event.get("reason")
    if text:
        parts.append((": " + _one_line(text), ""))
    if "record" in event:
        parts.append((" " + summarize(event["record"]), "dim"))
    return parts


def _reduced_text(value: object) -> str:
    """A reducer's result as words: `sec: ship it · perf: wait` for join_by_handle's {handle: reply},
    items joined for a list (rank), the text itself for a string (`--json` keeps the structure)."""
    if isinstance(value, dict):
        return " · ".join(f"{handle}: {_one_line(reply, 80)}" for handle, reply in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_one_line(item, 80) for item in value)
    return "" if value is None else str(value)


def _inbox(what: str, event: dict[str, Any]) -> Parts:
    sender, to = str(event.get("from", "")), str(event.get("agent", ""))
    parts: Parts = [("✉ ", "bold"), (sender, speaker_style(sender)), (" → ", "dim"), (to, speaker_style(to))]
    if what != "direct":
        parts.append((f" [{what.replace('_', ' ')}]", "dim"))
    return parts + [(": " + _one_line(event.get("text", ""), 200), "")]


def _spawn(what: str, event: dict[str, Any]) -> Parts:
    alias = str(event.get("agent") or event.get("spawn") or "")
    parts: Parts = [("⚙ ", "bold"), (alias, speaker_style(alias)), (f" {what}", "bold")]
    if event.get("parent"):
        parts.append((f" (spawned by {event['parent']})", "dim"))
    if what == "start" and event.get("description"):
        parts.append((": " + _one_line(event["description"], 80), ""))
    if what in ("finish", "status"):
        status = str(event.get("status", ""))
        code = event.get("exit_code")
        parts.append((f" {status}" + (f" (exit {code})" if code not in (None, 0) else ""),
                      "red" if status in ("failed", "lost", "error") else "green"))
        if event.get("output") or event.get("error"):
            parts.append((": " + _one_line(event.get("error") or event.get("output"), 120), "dim"))
    return parts


def _files(what: str, event: dict[str, Any]) -> Parts:
    agent = str(event.get("agent") or event.get("by") or "")
    parts: Parts = [("⚑ ", "bold"), (agent, speaker_style(agent)), (f" {what}", "bold")]
    if event.get("patterns"):
        how = "exclusive" if event.get("exclusive", True) else "shared"
        parts.append((f" {' '.join(map(str, event['patterns']))} ({how})", ""))
    if event.get("expires_at"):
        parts.append((f" until {event['expires_at']}", "dim"))
    return parts + [(f" [{event.get('id', '')}]", "dim")]


def _generic(what: str, event: dict[str, Any]) -> Parts:
    shown = {k: v for k, v in event.items() if k not in ("type", "ts", "room", "group", "record")}
    record = event.get("record")
    summary = summarize(record if isinstance(record, dict) else shown)
    return [(str(event.get("type") or "event"), "bold"), (f" {summary}" if summary else "", "dim")]


_BODIES = {"chat": _chat, "task": _task, "group": _group, "inbox": _inbox, "spawn": _spawn, "files": _files}
