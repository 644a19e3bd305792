"""The groups section of `rooms demo`: a majority vote and a fastest-answer race (offline model)."""

from __future__ import annotations

import asyncio

from rooms_cli.groups import broadcasts, gather, roster
from rooms_cli.messaging.inbox import read_inbox

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable

    from rooms_cli.store.paths import Project


def _short(text: str, width: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def run(project: Project, show: Callable[[str, str], None]) -> None:
    from rooms_cli.agents.definitions import Agent, create_agent, load_agent
    from rooms_cli.core.errors import NotFound
    from rooms_cli.groups import log
    from rooms_cli.project.config import load_config

    config = load_config(project)
    for name in ("vote", "race"):  # a re-run in the same directory starts from empty groups
        if log.exists(project, name):
            roster.dissolve(project, config, name, by="demo")
    fields = {"objective": "Should we ship the beta on Friday?", "output_format": "one short paragraph",
              "tool_guidance": "no tools", "boundaries": "no new features"}

    show("italic", "A vote: three members, two of them the same analyst profile; majority_vote keeps the answer they share.")
    show("cmd", "rooms group spawn-mixed vote --profiles analyst,analyst,wildcard")
    members = roster.spawn(project, "vote", ["analyst", "analyst", "wildcard"])
    show("line", "members: " + ", ".join(m.handle for m in members))
    show("cmd", "rooms group broadcast vote --objective 'Should we ship the beta on Friday?' --output-format … --tool-guidance … --boundaries …")
    b = broadcasts.send_broadcast(project, config, "vote", fields, "you")
    show("line", f"broadcast {b.id} → every member's inbox, tagged group:vote/broadcast:{b.id[:8]}…")
    show("cmd", "rooms group wait vote --reducer majority_vote")
    result = asyncio.run(gather.gather(project, config, "vote", reducer="majority_vote"))
    for handle, reply in result.by_member.items():
        show("line", f"{handle:>10}: {_short(reply.text)}")
    show("line", f"  majority: {_short(result.reduced)}  (votes {list(result.metadata['votes'].values())})")

    show("italic", "A race: an offline researcher against an external coding agent; the first answer wins, the loser is told to stop.")
    try:
        load_agent(project, "coder")
    except NotFound:
        create_agent(project, Agent(id="coder", name="Coder", directive="A coding agent session outside rooms.", model="external"))
    show("cmd", "rooms group spawn-mixed race --profiles researcher,coder")
    roster.spawn(project, "race", ["researcher", "coder"])
    race_fields = {**fields, "objective": "What does the rate limiter return when the bucket is empty?"}
    broadcasts.send_broadcast(project, config, "race", race_fields, "you")
    show("cmd", "rooms group wait race --any")
    result = asyncio.run(gather.gather(project, config, "race", any_=True))
    show("line", f"winner {result.metadata['winner_handle']}: {_short(result.reduced)}")
    cancel = [m for m in read_inbox(project, "coder") if m.kind == "group_cancel"][-1]
    show("line", f"coder's inbox: {cancel.tag}")
    show("cmd", "rooms group reply race --as coder 'It returns 429 with Retry-After.'")
    late = broadcasts.reply(project, config, "race", "coder", "It returns 429 with Retry-After.")
    show("line", f"dropped: {late.reason}")
