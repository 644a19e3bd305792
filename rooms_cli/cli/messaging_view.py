"""How the command line shows messaging (operations/messaging.py): send, inbox, attention, status, spawn, wait, hooks."""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.views import prepares, renders
from rooms_cli.operations import messaging as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.across.overview import Overview
    from rooms_cli.cli.shared import Run
    from rooms_cli.messaging.inbox import InboxView
    from rooms_cli.messaging.roster import RosterEntry
    from rooms_cli.messaging.send import SendResult
    from rooms_cli.messaging.spawn import Spawn


@prepares(ops.send)
def _message(run: Run, values: dict[str, Any]) -> dict[str, Any]:
    """`rooms send -` (like `group reply -`): the message is on stdin."""
    if values["message"] != "-":
        return values
    from rooms_cli.core.terminal import read_stdin

    return {**values, "message": read_stdin("the message")}


@renders(ops.send)
def _sent(run: Run, result: SendResult, values: dict[str, Any]) -> None:
    if run.json:
        return output.print_json(result)
    for name in result.unknown:
        output.note(f"note: {name} is not a known agent yet; the message waits in its inbox")
    to_text = ", ".join(f"{m.to} ({m.label})" for m in result.delivered)
    output.say(f"sent to {to_text}" if result.kind == "direct" else f"sent to everyone: {to_text}")
    for woken in result.woken:
        output.say(f"{woken['agent']} woke and replied: {woken['text']}" if woken["replies"] else f"{woken['agent']} woke and passed")
    if values["wake"] and not result.woken:
        output.note("note: no recipient is an LLM-backed agent with something to answer; sessions read their inbox themselves")


@renders(ops.inbox)
def _inbox(run: Run, view: InboxView, values: dict[str, Any]) -> None:
    if run.json:
        return output.print_json(view)
    unread = values["unread"]
    if not view.messages:
        return output.say(f"No {'unread ' if unread else ''}messages for {run.me}.")
    output.show_messages(view.messages, view.unread_ids)
    older = f" · {view.remaining} older not shown (--last N, --all)" if view.remaining and not unread else ""
    output.note(f"{view.fresh} unread" + ("" if not view.marked_read else ", now marked read") + older
                + " · reply: rooms send --reply-to N 'text'")


@renders(ops.attention)
def _attention(run: Run, block: dict[str, Any], values: dict[str, Any]) -> None:
    run.emit(block, lambda: output.write(block["text"]))


@renders(ops.agents)
def _agents(run: Run, entries: list[RosterEntry], values: dict[str, Any]) -> None:
    for e in entries:
        if e.problem:
            output.warn(f"{e.name}: {e.problem['message']}")
    if run.json:
        return output.print_json(entries)
    for e in entries:
        state = ("idle" if e.idle else "active") + (f", spawn of {e.spawn['parent']} ({e.spawn['status']})" if e.spawn else "")
        output.say(f"{e.name:<20} {e.kind:<8} {state:<32} {e.status}".rstrip())


@renders(ops.status_set)
def _status(run: Run, status: dict[str, Any], values: dict[str, Any]) -> None:
    run.emit(status, f"{run.me}: {status['status'] or '(status cleared)'}")


@renders(ops.status)
def _overview(run: Run, view: Overview, values: dict[str, Any]) -> None:
    from rooms_cli.across.overview import lines

    run.emit(view, "\n".join(lines(view)))


@renders(ops.spawn)
def _spawned(run: Run, started: Spawn, values: dict[str, Any]) -> None:
    how = " ".join(started.runner) if started.runner else started.model
    run.emit(started, f"spawned {started.alias} ({started.id}) via {how}; its output will arrive in {run.me}'s inbox (rooms wait)")


@renders(ops.wait)
def _waited(run: Run, waited: ops.Waited, values: dict[str, Any]) -> None:
    if run.json:
        return output.print_json(waited)
    if waited.result.finished:
        output.note("spawns finished: " + ", ".join(f"{s.alias} ({s.status})" for s in waited.result.finished))
    output.show_messages(waited.messages)
    if not waited.messages:
        output.say("Nothing left to do: no running spawns, no unread messages.")


@renders(ops.claude_stop, ops.claude_prompt, ops.claude_session_start)
def _hook_answer(run: Run, answer: dict[str, Any] | None, values: dict[str, Any]) -> None:
    if answer:
        output.print_json_line(answer)
