"""How the command line shows groups (operations/groups.py): members, broadcasts, gathered results."""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.views import prepares, renders
from rooms_cli.operations import groups as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.cli.shared import Run
    from rooms_cli.groups.model import GroupResult


@renders(ops.group_spawn, ops.group_spawn_mixed)
def _members(run: Run, added: dict[str, Any], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(added)
        return
    for m in added["members"]:
        output.say(f"{added['group']}: + {m.handle} ({m.profile})")


@renders(ops.group_broadcast)
def _broadcast(run: Run, sent: dict[str, Any], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(sent)
        return
    output.say(f"{sent['group']}: broadcast {sent['broadcast_id']} sent to {', '.join(sent['members'])}")
    output.note(f"gather with: rooms group wait {sent['group']}")


def show_result(run: Run, result: GroupResult, name: str) -> None:
    """A gathered result (JSON, or the reduced text and a summary on stderr), exiting with its problem's code."""
    import json

    if run.json:
        output.print_json(result)
    else:
        meta = result.metadata
        reduced = result.reduced if isinstance(result.reduced, str) else json.dumps(result.reduced, ensure_ascii=False, indent=2)
        output.say("(no result: nothing to reduce)" if result.reduced is None else reduced)
        output.note(f"{name} · {result.broadcast_id} · {meta['reducer']} · {meta['replied']}/{meta['members']} replied · {meta['elapsed_s']}s"
                    + (f" · winner {meta['winner_handle']}" + (" (a tie, by arrival)" if meta.get("tie") else "") if meta.get("winner_handle") else ""))
        for line in _tally_lines(meta):
            output.note(line)
        for handle, r in result.by_member.items():
            if r.status != "ok":
                output.note(f"  {handle}: {r.status}")
            elif r.cut:
                output.note(f"  {handle}: cut at its max_tokens limit")
    problem = result.problem()
    if problem is not None:
        from rooms_cli.cli.guard import Quiet

        if problem.code == "no_result":
            output.print_error(problem, run.json)
        raise Quiet(problem.exit_code)


def _tally_lines(meta: dict[str, Any]) -> list[str]:
    """How many votes or ballots were read, and why each of the others was not."""
    from rooms_cli.groups.model import tally

    counted = tally(meta)
    if counted is None:
        return []
    votes = meta.get("votes")
    lines = [counted + (f" ({', '.join(f'{o} {n}' for o, n in votes.items())})" if votes else "")]
    why = "ballot" if meta.get("reducer") == "rank" else "vote"
    lines += [f"  {handle}: {why} not read — {reason}" for handle, reason in (meta.get("unparsed") or {}).items()]
    lines += [f"  {handle}: {why} failed — {error}" for handle, error in (meta.get("ballot_errors") or {}).items()]
    return lines


@renders(ops.group_wait)
def _gathered(run: Run, result: GroupResult, values: dict[str, Any]) -> None:
    show_result(run, result, values["name"])


@renders(ops.group_ask)
def _asked(run: Run, asked: ops.Asked, values: dict[str, Any]) -> None:
    show_result(run, asked.result, asked.name)


@prepares(ops.group_reply)
def _reply_text(run: Run, values: dict[str, Any]) -> dict[str, Any]:
    """`group reply NAME -`: the reply is on stdin."""
    if values["text"] != "-":
        return values
    from rooms_cli.core import terminal

    return {**values, "text": terminal.read_stdin("the reply")}


@renders(ops.group_reply)
def _replied(run: Run, outcome: Any, values: dict[str, Any]) -> None:
    name, handle = values["name"], values["handle"]
    if run.json:
        output.print_json(outcome)
    elif outcome.accepted:
        output.say(f"{name}: reply from {handle} recorded for {outcome.broadcast_id}")
    else:
        output.say(f"{name}: reply from {handle} dropped — {outcome.reason}")


@renders(ops.group_cancel)
def _cancelled(run: Run, cancelled: dict[str, Any], values: dict[str, Any]) -> None:
    run.emit(cancelled, f"{cancelled['group']}: broadcast {cancelled['broadcast_id']} cancelled")


@renders(ops.group_status)
def _status(run: Run, info: dict[str, Any], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(info)
        return
    from rooms_cli.groups.status import EMOJI

    output.say(info["label"], style="bold")
    for m in info["members"]:
        output.say(f"  {EMOJI[m['state']]} {m['handle']:<16} {m['state']:<8} {m['profile']}")
    if info["in_flight"]:
        f = info["in_flight"]
        output.say(f"in flight: {f['broadcast_id']} · {f['objective']} · waiting for {', '.join(f['pending']) or 'the gather'}")
    if info["recent"]:
        output.say("recent:")
    for b in info["recent"]:
        tallied = f" · {b['tally']}" if b.get("tally") else ""
        output.say(f"  {b['broadcast_id']} {b['status']:<9} {len(b['replied'])}/{len(b['members'])} {b.get('reducer') or '-'}{tallied} · {b['objective']}")
        why = "ballot" if b.get("reducer") == "rank" else "vote"
        for handle, reason in (b.get("unparsed") or {}).items():
            output.say(f"      {handle}: {why} not read — {reason}")


@renders(ops.group_list)
def _groups(run: Run, rows: list[dict[str, Any]], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(rows)
        return
    if not rows:
        output.say("No groups yet. Create one with rooms group spawn NAME --profile AGENT.")
    for row in rows:
        output.say(f"{row['label']}  {', '.join(row['members'])}" + (f"  (in flight: {row['in_flight']})" if row["in_flight"] else ""))


@renders(ops.group_dissolve)
def _dissolved(run: Run, info: dict[str, Any], values: dict[str, Any]) -> None:
    run.emit(info, f"{info['group']}: dissolved" + (f" (cancelled {info['cancelled_broadcast']})" if info["cancelled_broadcast"] else ""))


@renders(ops.group_rename)
def _renamed(run: Run, renamed: dict[str, str], values: dict[str, Any]) -> None:
    run.emit(renamed, f"{renamed['from']} → {renamed['to']}")
