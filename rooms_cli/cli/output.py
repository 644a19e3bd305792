"""Rendering: rich on a terminal (NO_COLOR respected, plain when piped), JSON documents, errors.

Every command prints through here. Under `--json` a command prints exactly one JSON document on
stdout (or JSON lines for streams); errors are `{"error": {"code", "message"}}` on stderr.

Human output is terminal-safe in one place: both consoles pass every piece of text they render
through `terminal.safe` (a control character in a reply, a status or a title is shown as `\x1b`,
never obeyed by the terminal), and so do the piped paths of `write` and `note`, `warn`,
`error_line` and `print_error`. `--json` is exact.
"""

from __future__ import annotations

import json
import os
import sys

from rooms_cli.core import terminal
from rooms_cli.core.jsonable import dumps

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.segment import Segment
    from rich.text import Text

    from rooms_cli.board.claims import Claim
    from rooms_cli.core.errors import RoomsError
    from rooms_cli.messaging.inbox import InboxMessage

_console: Console | None = None
_err_console: Console | None = None
_console_class: type[Console] | None = None
DONE: list[str] = []  # what the running command has done, said if printing its result fails (cli/guard.py)


def done(sentence: str) -> None:
    """Record what the command has done (a write that completed: "claimed t-… lease l-…") before it
    prints: should printing fail, the error says it was done and exits 5, never "internal error"."""
    DONE.append(sentence)


def _safe_console(**kwargs: Any) -> Console:
    """A rich Console whose text segments are terminal-safe (its own styling escapes are not text)."""
    global _console_class
    if _console_class is None:
        from rich.console import Console
        from rich.segment import Segment

        class SafeConsole(Console):
            def render_str(self, text: str, **kwargs: Any) -> Text:
                # strings (table cells) are made safe before layout, so columns keep their widths
                return super().render_str(terminal.safe(text), **kwargs)

            def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
                # and every text segment after it: Text built by a command is covered too
                for segment in super().render(renderable, options):
                    if segment.control or not segment.text:
                        yield segment
                    else:
                        yield Segment(terminal.safe(segment.text), segment.style, segment.control)

        _console_class = SafeConsole
    # agent text is data: no console markup (`[red]`, `[/x]`) and no emoji codes (`:smile:`)
    return _console_class(markup=False, emoji=False, **kwargs)


def console() -> Any:  # a rich Console (rich is imported only when one is made)
    """The stdout console: colour only on a terminal, no wrapping or truncation when piped."""
    global _console
    if _console is None:
        tty = sys.stdout.isatty()
        _console = _safe_console(
            highlight=False,
            soft_wrap=not tty,
            no_color=bool(os.environ.get("NO_COLOR")) or not tty,
            width=None if tty else 200,
        )
    return _console


def err_console() -> Any:
    global _err_console
    if _err_console is None:
        _err_console = _safe_console(stderr=True, highlight=False, soft_wrap=True, no_color=bool(os.environ.get("NO_COLOR")))
    return _err_console


def reset() -> None:
    """Forget cached consoles (tests swap stdout between invocations)."""
    global _console, _err_console
    _console = _err_console = None


def print_json(data: Any) -> None:
    """Print one JSON document on stdout: indented on a terminal, compact when piped (the C encoder
    only runs without indent, which matters for boards of thousands of tasks)."""
    sys.stdout.write(dumps(data, indent=2 if sys.stdout.isatty() else None) + "\n")
    sys.stdout.flush()


def print_json_line(data: Any) -> None:
    """Print one JSON object as a line (streams)."""
    sys.stdout.write(dumps(data) + "\n")
    sys.stdout.flush()


def verbatim(text: str) -> None:
    """A file's text on stdout as it is (a config snippet to redirect or paste): never wrapped, even on a terminal."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def write(text: str, style: str | None = None, end: str = "\n") -> None:
    """Human output on stdout (rich markup is NOT interpreted: agent text is data). Through rich on a
    terminal; piped, the text as it is, without importing rich (~25 ms: scripts and agents pipe)."""
    if not sys.stdout.isatty():
        sys.stdout.write(terminal.safe(text) + end)
        sys.stdout.flush()
        return
    from rich.text import Text

    console().print(Text(text, style=style or ""), end=end)


def say(text: str = "", style: str | None = None) -> None:
    """One line of human output."""
    write(text, style)


def note(text: str) -> None:
    """A side remark on stderr (never pollutes --json stdout); dim on a terminal."""
    if not sys.stderr.isatty():
        sys.stderr.write(terminal.safe(text) + "\n")
        sys.stderr.flush()
        return
    from rich.text import Text

    err_console().print(Text(text, style="dim"))


def warn(text: str) -> None:
    terminal.warn(text)


def error_line(text: str) -> None:
    """One line on stderr that is an error but not the command's end (a failed step of several)."""
    print("error: " + terminal.safe(" ".join(text.split())), file=sys.stderr)


def print_error(err: RoomsError, as_json: bool) -> None:
    """Print a RoomsError as one sentence (or a JSON error on stderr).

    A message that spans lines (a parser's error quoted whole) is folded onto one line, so that an
    error is always exactly one line a script can read.
    """
    err.fold()
    from rooms_cli.core.child_env import mask_text

    err.message = mask_text(err.message)  # an error that names configuration never shows its credentials
    if as_json:
        sys.stderr.write(json.dumps(err.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {terminal.safe(err.message)}\n")
    sys.stderr.flush()


# --- lines several commands print: tasks, claims, messages, the board -----------------------------------


_RECORD_LABELS = (("summary", "summary"), ("artifacts", "artifacts"), ("next", "next"), ("result_ref", "result"),
                  ("plate", "by"))


def record_lines(record: dict[str, Any], indent: str = "  ") -> list[str]:
    """A task's done record as lines a person reads ("summary: spec written", "artifacts: file:a.md, msg:m-…"),
    not JSON; fields it does not know follow as `key: value`."""
    lines = []
    for key, label in _RECORD_LABELS:
        value = record.get(key)
        if value:
            lines.append(f"{indent}{label}: {', '.join(map(str, value)) if isinstance(value, list) else value}")
    rest = {k: v for k, v in record.items() if k not in {key for key, _ in _RECORD_LABELS} | {"status", "task_id"} and v}
    return lines + [f"{indent}{key}: {fields(value) if isinstance(value, dict) else value}" for key, value in sorted(rest.items())]


_QUIET_FIELDS = frozenset({"hlc", "task", "record"})


def fields(data: dict[str, Any]) -> str:
    """An event's fields on one line for a person: `lane ops · title 'Write spec' · fence 1` (stamps and ids
    the line already shows left out)."""
    shown = []
    for key, value in sorted(data.items()):
        if key in _QUIET_FIELDS or value in (None, "", [], {}):
            continue
        text = repr(value) if isinstance(value, str) and " " in value else ", ".join(map(str, value)) if isinstance(value, list) else value
        shown.append(f"{key.replace('_', ' ')} {text}")
    return " · ".join(shown)


def task_line(task: dict[str, Any]) -> str:
    """One task on one line: id, status, title, lane, and its lease, pending proposal or conflicts."""
    status = f"{task['status']}, archived" if task.get("archived") else task["status"]
    line = f"{task['id']}  [{status}]  {task['title']}  (lane {task['lane']})"
    if task.get("lease"):
        lease = task["lease"]
        line += f"  held by {lease['plate'] or lease['holder']} until {lease['expires_at']} (fence {lease['fence']})"
    if task.get("pending"):
        line += f"  pending: awaits {task['pending']['owner']}"
    if task.get("blocked_by"):
        line += f"  waits on {', '.join(task['blocked_by'])}"
    if task.get("conflicts"):
        line += f"  CONFLICT ×{len(task['conflicts'])}"
    return line


def claim_text(claim: Claim) -> str:
    """A claim for a person: the task, the holder, until when, and the lease id to export."""
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


def claim_done(claim: Claim) -> str:
    """What a claim did, said if its result cannot be printed: `claimed t-… lease l-…`."""
    held = "already held" if claim.already_yours else "claimed"
    return f"{held} {claim.task.id} lease {claim.lease.lease_id}"


def show_messages(messages: Iterable[InboxMessage], unread_ids: set[str] | None = None) -> None:
    """Inbox messages, one a line, the unread ones marked * (and bold on a terminal)."""
    from rooms_cli.messaging.attention import message_line

    for m in messages:
        fresh = unread_ids is None or m.key in unread_ids
        say(f"{'*' if fresh else ' '} {m.ts}  " + message_line(m, limit=None), style="bold" if fresh else None)


def columns(rows: list[tuple[str, str, str, str]]) -> str:
    """Rows as left-aligned columns (the last one unpadded), one line each."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join((" ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + " " + row[-1]).rstrip()
                     for row in rows)


def print_board(view: dict[str, Any]) -> None:
    """The board for a person: plain aligned columns (no rich table per task: a board of thousands
    of open tasks prints in milliseconds), one block per lane, then the last finished tasks."""
    from rooms_cli.board.render import counts_shown, decisions, waits_note

    counts = ", ".join(f"{n} {s}" for s, n in counts_shown(view["counts"])) or "empty"
    say(f"Board of room {view['room']}: {counts}", style="bold")
    short = view["short_ids"]
    for lane in view["lanes"]:
        rows = [("id", "status", "title", "lease / note")]
        for t in lane["tasks"]:
            remark = ""
            if t["lease"]:
                remark = f"{t['lease']['plate'] or t['lease']['holder']} until {t['lease']['expires_at']}"
            elif t["pending"]:
                remark = f"pending: awaits {t['pending']['owner']}"
            elif t.get("blocked_by"):
                remark = waits_note(t, view)
            elif t["record"] and t["status"] != "todo":
                remark = t["record"].get("summary", "")
            rows.append((short.get(t["id"], t["id"]), t["status"], t["title"], remark))
        say(f"lane {lane['lane']}", style="bold")
        say(columns(rows))
    if view["done"]:
        rows = [("id", "status", "title", "record")]
        for t in view["done"]:
            rec = t["record"] or {}
            ref = f" → {rec['result_ref']}" if rec.get("result_ref") else ""
            rows.append((short.get(t["id"], t["id"]), t["status"], t["title"], f"{rec.get('summary', '')}{ref}"))
        total = view.get("done_total", len(view["done"]))
        more = f" (last {len(view['done'])} of {total}; rooms board --done N or --all)" if total > len(view["done"]) else ""
        say(f"done{more}", style="bold")
        say(columns(rows))
    for line in decisions(view):
        say(f"DECIDE {line}", style="bold yellow")
    for item in view["conflicts"]:
        for conflict in item["conflicts"]:
            say(f"CONFLICT {item['task_id']}: {conflict['message']} (rooms task resolve ID)", style="bold red")
