"""The bodies of the commands agents run in loops, importable without typer (docs/performance.md).

`rooms board`, `rooms task next|claim|renew|release|done`, `rooms send`, `rooms inbox` and `rooms chat`
with its message are what a
coding-agent session or a worker script calls over and over. Their typer commands (board_cmd.py,
messaging_cmd.py) declare the options, the help and the completion, and call the body here; the fast
path (fast.py) parses the same command lines without importing typer and calls the same body. So there
is one body per command, whichever parser ran it.

Each body takes a `Run` (cli/shared.py) and the command's own options by their parameter names, and
imports what it uses when it runs. The line formats used by other commands live here too.
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run

# --- lines other commands print too -------------------------------------------------------------------


def task_line(task: dict) -> str:
    """One task on one line: id, status, title, lane, and its lease, pending proposal or conflicts."""
    status = f"{task['status']}, archived" if task.get("archived") else task["status"]
    line = f"{task['id']}  [{status}]  {task['title']}  (lane {task['lane']})"
    if task.get("lease"):
        lease = task["lease"]
        line += f"  held by {lease['plate'] or lease['holder']} until {lease['expires_at']} (fence {lease['fence']})"
    if task.get("pending"):
        line += f"  pending: awaits {task['pending']['owner']}"
    if task.get("conflicts"):
        line += f"  CONFLICT ×{len(task['conflicts'])}"
    return line


def json_line(data) -> str:
    import json

    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def claim_text(claim) -> str:
    lease = claim.lease
    if claim.already_yours:
        return (
            f"task {claim.task.id} ({claim.task.title}) is already yours: held as {lease.plate or lease.holder} until "
            f"{lease.expires_at} (fence {lease.fence})\nlease {lease.lease_id}   (export ROOMS_LEASE={lease.lease_id})"
        )
    return (
        f"claimed {claim.task.id} ({claim.task.title}) as {lease.holder} until {lease.expires_at} (fence {lease.fence})\n"
        f"lease {lease.lease_id}   (export ROOMS_LEASE={lease.lease_id})"
    )


def claim_done(claim) -> str:
    """What a claim did, said if its result cannot be printed: `claimed t-… lease l-…`."""
    held = "already held" if claim.already_yours else "claimed"
    return f"{held} {claim.task.id} lease {claim.lease.lease_id}"


def show_messages(messages, unread_ids: set[str] | None = None) -> None:
    from rooms_cli.messaging.attention import message_line

    for m in messages:
        fresh = unread_ids is None or m.key in unread_ids
        output.say(f"{'*' if fresh else ' '} {m.ts}  " + message_line(m, limit=None), style="bold" if fresh else None)


# --- the board ------------------------------------------------------------------------------------------


def statuses() -> tuple[str, ...]:
    """What `--status` takes on the board: a task's statuses, and pending."""
    from rooms_cli.board.model import STATUSES

    return (*STATUSES, "pending")


def board(run: Run, lane: str | None = None, status: str | None = None, format: str = "table", done: int = 10,
          all_: bool = False) -> None:
    from rooms_cli.board.render import board_view, markdown_from_view
    from rooms_cli.errors import UsageError

    if format not in ("table", "md"):
        raise UsageError(f"--format must be table or md, not {format!r}")
    view = board_view(run.project, run.room, lane=lane, status=status, done=done, all_=all_)
    if run.json:
        output.print_json(view)
    elif format == "md":
        output.say(markdown_from_view(view).rstrip() or f"The board of room {run.room} is empty.")
    else:
        _print_board(view)


def _columns(rows: list[tuple[str, str, str, str]]) -> str:
    """Rows as left-aligned columns (the last one unpadded), one line each."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join((" ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + " " + row[-1]).rstrip()
                     for row in rows)


def _print_board(view: dict) -> None:
    """The board for a person: plain aligned columns (no rich table per task: a board of thousands
    of open tasks prints in milliseconds), one block per lane, then the last finished tasks."""
    counts = ", ".join(f"{n} {s}" for s, n in view["counts"].items() if n) or "empty"
    output.say(f"Board of room {view['room']}: {counts}", style="bold")
    short = view["short_ids"]
    for lane in view["lanes"]:
        rows = [("id", "status", "title", "lease / note")]
        for t in lane["tasks"]:
            note = ""
            if t["lease"]:
                note = f"{t['lease']['plate'] or t['lease']['holder']} until {t['lease']['expires_at']}"
            elif t["pending"]:
                note = f"pending: awaits {t['pending']['owner']}"
            elif t["record"] and t["status"] != "todo":
                note = t["record"].get("summary", "")
            rows.append((short.get(t["id"], t["id"]), t["status"], t["title"], note))
        output.say(f"lane {lane['lane']}", style="bold")
        output.say(_columns(rows))
    if view["done"]:
        rows = [("id", "status", "title", "record")]
        for t in view["done"]:
            rec = t["record"] or {}
            ref = f" → {rec['result_ref']}" if rec.get("result_ref") else ""
            rows.append((short.get(t["id"], t["id"]), t["status"], t["title"], f"{rec.get('summary', '')}{ref}"))
        total = view.get("done_total", len(view["done"]))
        more = f" (last {len(view['done'])} of {total}; rooms board --done N or --all)" if total > len(view["done"]) else ""
        output.say(f"done{more}", style="bold")
        output.say(_columns(rows))
    for item in view["conflicts"]:
        for conflict in item["conflicts"]:
            output.say(f"CONFLICT {item['task_id']}: {conflict['message']} (rooms task resolve ID)", style="bold red")


def _sync_of(run: Run, sync: bool) -> tuple[bool, str | None]:
    from rooms_cli.sync.settings import for_task_commands

    return for_task_commands(lambda: run.config, run.project.root, sync, None)


def task_claim(run: Run, task_id: str, lease: float | None = None, lease_id: str | None = None, sync: bool = False) -> None:
    from rooms_cli.board.claims import claim_task

    sync, remote = _sync_of(run, sync)
    claim = claim_task(run.project, run.room, task_id, agent=run.me, lease=lease, lease_id=lease_id, sync=sync, remote=remote)
    output.done(claim_done(claim))  # should printing fail, the error says the claim was made (cli/guard.py)
    run.emit(claim, claim_text(claim))


def task_next(run: Run, lease: float | None = None, sync: bool = False) -> None:
    from rooms_cli.board.claims import next_task

    sync, remote = _sync_of(run, sync)
    claim = next_task(run.project, run.room, agent=run.me, lease=lease, sync=sync, remote=remote)
    if claim:
        output.done(claim_done(claim))
    run.emit(claim, claim_text(claim) if claim else f"nothing to claim in lane {run.me} of room {run.room}")


def task_renew(run: Run, task_id: str, lease_id: str | None = None, lease: float | None = None, sync: bool = False) -> None:
    from rooms_cli.board.claims import renew_lease, synced

    sync, remote = _sync_of(run, sync)
    task = renew_lease(run.project, run.room, task_id, lease_id, lease=lease, holder=run.me)
    output.done(f"renewed the lease of {task.id}")
    task = synced(run.project, task, remote) if sync else task
    run.emit(task, f"renewed: {task_line(task.to_json())}")


def task_release(run: Run, task_id: str, lease_id: str | None = None, sync: bool = False) -> None:
    from rooms_cli.board.claims import release_task, synced

    sync, remote = _sync_of(run, sync)
    task = release_task(run.project, run.room, task_id, lease_id, holder=run.me)
    output.done(f"released {task.id}")
    task = synced(run.project, task, remote) if sync else task
    run.emit(task, f"released: {task_line(task.to_json())}")


def task_done(run: Run, task_id: str, summary: str, artifact: list[str] | None = None, next_: str | None = None,
              result_ref: str | None = None, lease_id: str | None = None, sync: bool = False) -> None:
    from rooms_cli.board.claims import finish_task, synced

    sync, remote = _sync_of(run, sync)
    task = finish_task(run.project, run.room, task_id, lease_id, summary=summary, artifacts=artifact or [],
                       next_step=next_, result_ref=result_ref, holder=run.me)
    output.done(f"finished {task.id}")
    task = synced(run.project, task, remote) if sync else task
    run.emit(task.record, f"done: {task.id} {task.title}\nrecord: {json_line(task.record)}")


def sync(run: Run, remote: str | None = None) -> None:
    """`rooms sync`: merge .rooms/ with the git remote both ways (store/gitsync.py)."""
    from rooms_cli.store.gitsync import sync as sync_with
    from rooms_cli.sync.settings import for_task_commands

    if remote is None:
        remote = for_task_commands(lambda: run.config, run.project.root, True, None)[1]
    result = sync_with(run.project, remote)
    conflicts = (f"; {len(result.conflicts)} file conflicts (the other side kept under .rooms/run/sync/conflicts)"
                 if result.conflicts else "")
    run.emit(result, f"synced with {result.remote}: {result.received} lines in, {result.sent} out, "
                     f"{len(set(result.files_in))} files changed here, {len(set(result.files_out))} sent{conflicts}")


# --- chat -----------------------------------------------------------------------------------------------


def chat(run: Run, message: str, explain: bool = False, no_wait: bool = False) -> None:
    """One message (not blank) posted and answered; chat mode and stdin are read by the typer command."""
    from rooms_cli.chat import coordinator, slash
    from rooms_cli.cli import chat_view

    if explain:
        data = coordinator.explain(run.project, run.config, run.room, message)
        output.print_json(data) if run.json else chat_view.print_explain(data)
        return
    view = None if run.json else chat_view.TurnView()
    if message.lstrip().startswith("/"):
        slash.refuse_agents(run.project, run.me)
        result = slash.run(run.project, run.config, run.room, run.me, message, on_event=view, wait=not no_wait, on_wait=output.note)
        output.print_json(result) if run.json else chat_view.print_slash(result)
        return
    with coordinator.floor(run.project, run.room, wait=not no_wait, on_wait=output.note):
        turn = coordinator.run_message(run.project, run.config, run.room, run.me, message, on_event=view)
    run.emit(turn, lambda: chat_view.print_turn_footer(turn))
    if turn.unanswered:
        from rooms_cli.errors import ProviderError

        raise ProviderError(f"no agent could answer ({', '.join(turn.failed)} failed; the reasons are in the room's transcript)",
                            code="no_answer")


# --- messaging ------------------------------------------------------------------------------------------


def send(run: Run, message: str, to: str | None = None, reply_to: str | None = None, wake: bool = False) -> None:
    from rooms_cli.messaging.send import send_message

    if message == "-":  # like `group reply -`: the message is on stdin
        from rooms_cli.terminal import read_stdin

        message = read_stdin("the message")

    result = send_message(run.project, run.config, run.me, message, to=to, reply_to=reply_to)
    output.done("sent " + ", ".join(f"{m.id} to {m.to}" for m in result.delivered))
    if wake:
        from rooms_cli.messaging.wake import wake_recipients

        result.woken = wake_recipients(run.project, run.config, result.delivered)
    if run.json:
        return output.print_json(result)
    for name in result.unknown:
        output.note(f"note: {name} is not a known agent yet; the message waits in its inbox")
    to_text = ", ".join(f"{m.to} ({m.label})" for m in result.delivered)
    output.say(f"sent to {to_text}" if result.kind == "direct" else f"sent to everyone: {to_text}")
    for woken in result.woken:
        output.say(f"{woken['agent']} woke and replied: {woken['text']}" if woken["replies"] else f"{woken['agent']} woke and passed")
    if wake and not result.woken:
        output.note("note: no recipient is an LLM-backed agent with something to answer; sessions read their inbox themselves")


def inbox(run: Run, unread: bool = False, peek: bool = False, last: int = 10, all_: bool = False) -> None:
    from rooms_cli.messaging import unread as cursor
    from rooms_cli.messaging.status import touch

    touch(run.project, run.me)
    # through the cursor: only what arrived since the last call is read (messaging/unread.py)
    if unread:
        view = cursor.open_unread(run.project, run.me, peek=peek)
    elif all_:
        from rooms_cli.messaging.inbox import open_inbox

        view = open_inbox(run.project, run.me, peek=peek)
    else:
        view = cursor.open_recent(run.project, run.me, last=last, peek=peek)
    if run.json:
        return output.print_json(view)
    if not view.messages:
        return output.say(f"No {'unread ' if unread else ''}messages for {run.me}.")
    show_messages(view.messages, view.unread_ids)
    older = f" · {view.remaining} older not shown (--last N, --all)" if view.remaining and not unread else ""
    output.note(f"{view.fresh} unread" + ("" if not view.marked_read else ", now marked read") + older
                + " · reply: rooms send --reply-to N 'text'")


def mcp(run: Run) -> None:
    """`rooms mcp`: here, not behind typer, because a client spawns a server per session and waits for it."""
    from rooms_cli.errors import RoomsError

    try:
        from rooms_cli.mcp_server.server import serve
    except ImportError as exc:
        raise RoomsError(f"rooms mcp needs the MCP SDK ({exc.name or exc} is missing): pip install 'rooms-cli[mcp]'",
                         code="missing_dependency") from None
    serve(run.dir, run.as_)


def attention(run: Run, peek: bool = False) -> None:
    from rooms_cli.messaging.attention import build_attention, render_attention

    block = build_attention(run.project, run.config, run.me, mark_read=not peek)
    if run.json:
        return output.print_json(block)
    output.write(render_attention(block))


# --- Claude Code hooks: one process per prompt and per stop of a session ----------------------------------


def _run_hook(hook: str, run: Run, answer) -> None:
    """Read the hook's JSON, find the project (none: print nothing, never get in the session's way),
    and print `answer(project, config, me, payload)` as one JSON line when there is one."""
    import sys

    from rooms_cli import terminal
    from rooms_cli.context import Context
    from rooms_cli.messaging.hooks import find_hook_project, hook_event, parse_payload

    payload = parse_payload("" if sys.stdin.isatty() else terminal.read_stdin("the hook input"))
    if hook_event(hook, payload) is None:
        output.note(f"rooms: `hook claude-code {hook}` ignores a {payload.get('hook_event_name')} event")
        return
    project = find_hook_project(run.dir, payload)
    if project is None:
        return
    ctx = Context(project=project, as_=run.as_)
    result = answer(project, ctx.config, ctx.me, payload)
    if result:
        output.print_json_line(result)


def claude_stop(run: Run, timeout: float = 50.0) -> None:
    from rooms_cli.messaging.hooks import claude_stop

    _run_hook("stop", run, lambda project, config, me, payload: claude_stop(project, config, me, payload, wait=timeout))


def claude_prompt(run: Run) -> None:
    from rooms_cli.messaging.hooks import claude_prompt

    _run_hook("prompt", run, claude_prompt)


def claude_session_start(run: Run) -> None:
    from rooms_cli.messaging.hooks import claude_session_start

    _run_hook("session-start", run, claude_session_start)
