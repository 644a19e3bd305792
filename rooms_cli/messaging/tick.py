"""The messaging steps of `rooms tick`: reap lost spawns, wake LLM-backed agents with unread messages."""

from __future__ import annotations

from rooms_cli.core.errors import RoomsError
from rooms_cli.core.text import count
from rooms_cli.messaging.spawn import reap_all
from rooms_cli.messaging.wake import due_agents, llm_backed, wake_agent

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def reap_spawns(project: Project, config: Config, dry_run: bool) -> list[dict[str, Any]]:
    """Mark spawns whose process died without finishing as lost (their parent is told)."""
    return [
        {"action": "reap", "detail": f"{s.alias} ({s.id}, spawned by {s.parent}): its process ended without finishing"}
        for s in reap_all(project, dry_run=dry_run)
    ]


def wake_agents(project: Project, config: Config, dry_run: bool) -> list[dict[str, Any]]:
    """Resume every LLM-backed agent with `wake` on that has a message waiting; replies go to the senders."""
    actions = []
    for agent_id, unread in due_agents(project, config):
        if dry_run:
            actions.append({"action": "wake", "detail": f"{agent_id} ({unread} to answer)"})
            continue
        try:
            agent = llm_backed(project, config, agent_id)
            result = wake_agent(project, config, agent) if agent else None
        except RoomsError as err:
            actions.append({"action": "failed", "detail": f"{agent_id}: {err.message}"})
            continue
        if result is not None:
            to = ", ".join(r["to"] for r in result["replies"]) or "nobody (it passed)"
            actions.append({"action": "wake", "detail": f"{agent_id} read {count(len(result['read']), 'message')}, replied to {to}"})
    return actions
