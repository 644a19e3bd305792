"""How an event reads on a terminal: one line of (text, style) parts; the CLI hands them to rich.

Speakers keep one colour for the whole session and across runs (a hash of the name picks it).
Passes and flavor lines are italic; task, group, inbox and spawn events are compact one-liners. An
event this module does not know is shown as its type and a `key=value` summary.
"""

from __future__ import annotations

import zlib

from rooms_cli.watch.events import summarize

Parts = list[tuple[str, str]]

PALETTE = (
    "cyan", "magenta", "green", "yellow", "blue", "bright_red",
    "bright_cyan", "bright_magenta", "bright_green", "bright_yellow", "bright_blue", "red",
)
QUIET_CHAT = {"join", "kick", "mute", "unmute", "handoff", "handoff_suggested", "continue", "roundtable", "system"}


def speaker_style(name: str) -> str:
    """A colour that is always the same for the same speaker."""
    return "bold " + PALETTE[zlib.crc32(name.encode("utf-8")) % len(PALETTE)]


def line(event: dict) -> Parts:
    """The parts of one rendered line for `event`."""
    family, _, what = str(event.get("type", "")).partition(".")
    head: Parts = [(_clock(event.get("ts")) + " ", "dim")]
    where = _where(event)
    if where:
        head.append((where + " ", "dim"))
    body = _BODIES.get(family, _generic)(what, event)
    return head + body


def _clock(ts: object) -> str:
    text = str(ts or "")
    return text[11:19] if len(text) >= 19 and text[10] == "T" else text[:8].ljust(8)


def _where(event: dict) -> str:
    if "room" in event:
        return f"#{event['room']}"
    if "group" in event:
        return f"▣ {event['group']}"
    return ""


def _one_line(text: object, limit: int = 160) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _chat(what: str, event: dict) -> Parts:
    speaker = str(event.get("speaker", ""))
    text = str(event.get("text", ""))
    if what == "message":
        return [(speaker, speaker_style(speaker)), (": ", ""), (text, "")]
    if what == "pass":
        return [(f"{speaker} passes" + (f" ({_one_line(text, 80)})" if text and text != "/pass" else ""), "italic dim")]
    if what == "flavor":
        return [(f"{speaker} ", "italic " + speaker_style(speaker).replace("bold ", "")), (text, "italic")]
    if what == "budget_exhausted":
        return [("⏸ budget exhausted", "bold yellow"), (f" {_one_line(text)}" if text else "", "yellow")]
    if what in QUIET_CHAT:
        label = what.replace("_", " ")
        return [(f"· {label}", "dim"), (f" {speaker}" if speaker else "", "dim"), (f": {_one_line(text)}" if text else "", "dim")]
    return _generic(what, event)


def _task(what: str, event: dict) -> Parts:
    task = event.get("task") or event.get("task_id") or ""
    title = event.get("title")
    who = event.get("agent") or event.get("by") or event.get("plate") or ""
    parts: Parts = [("▸ ", "bold blue"), (f"{task} ", "blue"), (what.replace("_", " "), "bold")]
    if title:
        parts.append((f" “{_one_line(title, 60)}”", ""))
    if who:
        parts.append((f" by {who}", ""))
    details = [f"{k}: {_one_line(event[k], 100)}" for k in ("summary", "next", "lease_until", "to", "reason") if event.get(k)]
    if details:
        parts.append((" — " + " · ".join(details), "dim"))
    if what not in _KNOWN_TASK and "record" in event:
        parts.append((" " + summarize(event["record"]), "dim"))
    return parts


_KNOWN_TASK = {"created", "claimed", "renewed", "released", "lease_expired", "done", "status", "assigned",
               "updated", "archived", "accepted", "rejected", "blocked", "failed", "cancelled", "proposed"}


def _group(what: str, event: dict) -> Parts:
    who = event.get("handle") or event.get("by") or ""
    parts: Parts = [(what.replace("_", " "), "bold magenta")]
    if event.get("broadcast"):
        parts.append((f" {event['broadcast']}", "dim"))
    if who:
        parts.append((f" {who}", speaker_style(str(who))))
    text = event.get("text") or event.get("objective") or event.get("summary")
    if text:
        parts.append((": " + _one_line(text), ""))
    elif "record" in event:
        parts.append((" " + summarize(event["record"]), "dim"))
    return parts


def _inbox(what: str, event: dict) -> Parts:
    sender, to = str(event.get("from", "")), str(event.get("agent", ""))
    parts: Parts = [("✉ ", "bold"), (sender, speaker_style(sender)), (" → ", "dim"), (to, speaker_style(to))]
    if what != "direct":
        parts.append((f" [{what.replace('_', ' ')}]", "dim"))
    return parts + [(": " + _one_line(event.get("text", ""), 200), "")]


def _spawn(what: str, event: dict) -> Parts:
    alias = str(event.get("alias") or event.get("spawn") or "")
    parts: Parts = [("⚙ ", "bold"), (alias, speaker_style(alias)), (f" {what}", "bold")]
    if event.get("parent"):
        parts.append((f" (by {event['parent']})", "dim"))
    if what == "start" and event.get("description"):
        parts.append((": " + _one_line(event["description"], 80), ""))
    if what in ("finish", "status"):
        status = event.get("status", "")
        code = event.get("exit_code")
        parts.append((f" {status}" + (f" (exit {code})" if code not in (None, 0) else ""), "red" if status in ("failed", "lost", "error") else "green"))
        if event.get("output") or event.get("error"):
            parts.append((": " + _one_line(event.get("output") or event.get("error"), 120), "dim"))
    return parts


def _generic(what: str, event: dict) -> Parts:
    shown = {k: v for k, v in event.items() if k not in ("type", "ts", "room", "group", "record")}
    record = event.get("record")
    summary = summarize(record if isinstance(record, dict) else shown)
    return [(str(event.get("type") or "event"), "bold"), (f" {summary}" if summary else "", "dim")]


_BODIES = {"chat": _chat, "task": _task, "group": _group, "inbox": _inbox, "spawn": _spawn}
