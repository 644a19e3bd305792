"""Resuming LLM-backed agents that have unread messages (`rooms tick` with `wake: true`, `rooms send --wake`).

A woken agent reads the messages that woke it in one model call, and its reply goes to each sender
of one, as an ordinary inbox message that answers it. Group envelopes are left to the groups part.
A woken agent's reply (marked `meta.auto`) never wakes its recipient by itself, so two LLM agents
cannot keep each other talking forever; it is read the next time that agent is woken by something else.

Only messages newer than the agent's last turn wake it: unread ones (a wake turn marks what it
answered read) that arrived while wake was on for it. `rooms send` stamps `meta.wake: false` on a
message to an LLM-backed agent whose wake is off, so turning wake on later never makes it answer
what waited in its inbox before (a `--wake` send still wakes it for that message). The prompt holds
the senders and texts, no inbox numbers or record ids: the reply goes back automatically.
"""

from __future__ import annotations

from rooms_cli.agents.definitions import Agent, agent_ids, load_agent
from rooms_cli.core.errors import RoomsError
from rooms_cli.core.passes import is_pass
from rooms_cli.messaging.inbox import InboxMessage, deliver, mark_read, unread_messages
from rooms_cli.messaging.status import mark_announced, touch
from rooms_cli.store import layout
from rooms_cli.store.locks import try_lock
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config

WAKE_KINDS = ("direct", "broadcast", "spawn_output", "spawn_error")


def wakes(message: InboxMessage) -> bool:
    """Whether this message is reason enough to resume its recipient (by `rooms tick`)."""
    return message.kind in WAKE_KINDS and not message.meta.get("auto") and message.meta.get("wake") is not False


def wake_enabled(agent: Agent, config: Config) -> bool:
    """`wake: true` in `.rooms.yaml` or in the agent's definition."""
    return bool(config.get("wake", False) or agent.wake)


def asleep_on_arrival(project: Project, config: Config, agent_id: str) -> bool:
    """Whether a message to `agent_id` arriving now should never wake it: an LLM-backed agent with wake off."""
    try:
        agent = llm_backed(project, config, agent_id)
    except RoomsError:
        return False  # a broken definition: `rooms agent show` reports it
    return agent is not None and not wake_enabled(agent, config)


def llm_backed(project: Project, config: Config, agent_id: str) -> Agent | None:
    """The agent's definition if rooms runs it with a model (not external, not a session), else None."""
    if agent_id not in agent_ids(project):
        return None
    agent = load_agent(project, agent_id)
    return None if agent.is_external(config.default_model) else agent


def due_agents(project: Project, config: Config) -> list[tuple[str, int]]:
    """(agent id, messages to answer) of every LLM-backed agent with wake on and a message that wakes it."""
    due = []
    for agent_id in agent_ids(project):
        try:
            agent = llm_backed(project, config, agent_id)
        except RoomsError:
            continue  # a broken definition: `rooms agent show` reports it
        if agent is None or not wake_enabled(agent, config):
            continue
        unread = unread_messages(project, agent_id)
        if any(wakes(m) for m in unread):
            due.append((agent_id, sum(wakes(m) for m in unread)))
    return due


def _system_prompt(agent: Agent) -> str:
    return (
        f"{agent.directive}\n\nYou are {agent.id}. Other agents wrote to your inbox; your reply is delivered to "
        "each of them. Answer what they need; be brief."
    )


def wake_prompt(messages: list[InboxMessage]) -> str:
    """The messages as the woken agent reads them: who wrote what, no numbers or ids."""
    return "\n\n".join(f"From {m.sender}: {m.text}" for m in messages)


def wake_agent(project: Project, config: Config, agent: Agent, also: str | None = None) -> dict[str, Any] | None:
    """Run one turn of `agent` on the unread messages that wake it, plus message id `also` (the one
    `send --wake` just delivered); None when there was nothing to do or it is already awake."""
    import asyncio

    from rooms_cli.models import provider_for
    from rooms_cli.models.limits import mark_cut
    from rooms_cli.models.prompt import conversation
    from rooms_cli.models.repetition import drop_echoes, guarded

    lock = try_lock(layout.wake_lock(project, agent.id))
    if lock is None:
        return None
    try:
        unread = unread_messages(project, agent.id)
        woke = [m for m in unread if wakes(m) or m.id == also]
        if not woke:
            return None
        prompt = wake_prompt(woke)
        provider, model = provider_for(agent.model_string(config.default_model), config)
        completion = asyncio.run(guarded(provider, conversation(_system_prompt(agent), [("user", prompt)]),
                                         model=model, temperature=agent.temperature, agent=agent, purpose="answer"))
        # what it read back of its instructions is not a reply (a small model echoes "Answer what they need")
        text = drop_echoes(completion.text, _system_prompt(agent))[0].strip() if not completion.offline else completion.text.strip()
        if (completion.cut or completion.finish_reason == "repetition") and text:
            text = mark_cut(text)
        targets = {m.sender: m for m in woke if m.sender != agent.id}
        replies = []
        if text and not is_pass(text):
            for sender, original in targets.items():
                meta: dict[str, object] = {"auto": "wake", "reply_to_id": original.id, "quote": original.text[:120]}
                if completion.cut:
                    meta["cut"] = True
                replies.append(deliver(project, sender, agent.id, text, kind="direct", reply_to=original.n, meta=meta))
            mark_announced(project, agent.id)
        # what came before the last message that woke it is read too (as "read up to" did)
        last = max(unread.index(m) for m in woke)
        mark_read(project, agent.id, unread[: last + 1])
        touch(project, agent.id)
        return {
            "agent": agent.id, "read": [m.n for m in woke], "model": completion.model, "text": text,
            "replies": [{"to": r.to, "n": r.n} for r in replies],
        }
    finally:
        lock.release()


def wake_recipients(project: Project, config: Config, delivered: list[InboxMessage]) -> list[dict[str, Any]]:
    """`rooms send --wake`: run each LLM-backed recipient now on the message just delivered to it (and
    any other unread message that wakes it); people and sessions are left to read their inbox."""
    woken = []
    for message in delivered:
        agent = llm_backed(project, config, message.to)
        result = wake_agent(project, config, agent, also=message.id) if agent else None
        if result is not None:
            woken.append(result)
    return woken
