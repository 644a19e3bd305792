"""Hand-off: an agent summarises its session into a deliberation, its session is cleared, and the
newest deliberation goes into its next system prompt.

Deliberations: `.rooms/deliberations/<agent>/<id>.md`, frontmatter `class: deliberation` (agent,
room, created, turns, tokens) and the summary as body. Unlike saved transcripts they cannot be
rehydrated into a room; they are notes from an agent's earlier self.
"""

from __future__ import annotations

import os

from rooms_cli.chat import sessions
from rooms_cli.chat.rooms import load_room, update_room
from rooms_cli.core.errors import InvalidInput
from rooms_cli.core.markdown import lines, yaml_fields
from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.store import atomic, files, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.agents.definitions import Agent
    from rooms_cli.chat import transcript
    from rooms_cli.models.base import Completion
    from rooms_cli.project.config import Config

REHYDRATE_MESSAGES = 50
HANDOFF_TEMPERATURE = 0.3  # a summary, not a conversation: when the agent sets no temperature


@dataclass
class Deliberation:
    """An agent's hand-off summary of its session in a room (`.rooms/deliberations/<agent>/<id>.md`)."""

    id: str
    agent: str
    room: str
    created: str
    text: str
    path: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "agent": self.agent, "room": self.room, "created": self.created, "text": self.text, "path": self.path}


deliberation_dir = layout.deliberations_dir


def write_deliberation(project: Project, agent: str, room: str, text: str, extra: dict[str, Any] | None = None) -> Deliberation:
    """Write a hand-off note; the Deliberation as `latest_deliberation` reads it back (its line breaks
    as "\\n": core/markdown.py)."""
    did = new_id("d")
    created = now_iso()
    meta = {"class": "deliberation", "id": did, "agent": agent, "room": room, "created": created, **(extra or {})}
    note = lines(text).strip()
    path = os.path.join(deliberation_dir(project, agent), f"{did.lower()}.md")
    atomic.write_text(path, f"---\n{yaml_fields(meta)}---\n{note}\n")
    return Deliberation(did, agent, room, created, note, project.relative(path))


def latest_deliberation(project: Project, agent: str) -> Deliberation | None:
    """The newest deliberation for `agent` (ids sort by time), or None."""
    found = files.matching(deliberation_dir(project, agent), "d-*.md")
    if not found:
        return None
    path = found[-1]
    import frontmatter  # only when there is one: most agents have none (a chat turn asks for every agent)

    from rooms_cli.store import conflicts

    raw = files.read_bytes(path)
    conflicts.check(project.relative(path), raw)
    post = frontmatter.loads(raw.decode("utf-8"))
    meta = post.metadata
    return Deliberation(str(meta.get("id", os.path.basename(path)[: -len(".md")])), agent, str(meta.get("room", "")), str(meta.get("created", "")),
                        lines(post.content).strip(), project.relative(path))


def handoff(project: Project, config: Config, room: str, agent_id: str) -> dict[str, Any]:
    """Summarise `agent_id`'s session in `room` into a deliberation, clear the session, record it.

    The agent is marked mid-handoff (not eligible) while its summary is being written.
    """
    from rooms_cli.agents.definitions import load_agent
    from rooms_cli.chat.transcript import append_message, tail

    agent = load_agent(project, agent_id)
    state = load_room(project, room)
    if agent.id not in state.roster:
        raise InvalidInput(f"{agent.id} is not in room {room!r}; invite it first")
    update_room(project, room, lambda s: s.handoff.append(agent.id) if agent.id not in s.handoff else None)
    try:
        summary = sessions.summarize_session(project, room, agent.id)
        turns = [r for r in sessions.read_session(project, room, agent.id) if r.get("kind") == "turn"]
        recent = [m for m in tail(project, room, REHYDRATE_MESSAGES) if m.kind == "message"]
        text = _summarise(project, config, agent, room, turns, recent)
        note = write_deliberation(project, agent.id, room, text, {"turns": summary.turns, "tokens": summary.tokens})
        sessions.clear_session(project, room, agent.id)
    finally:
        update_room(project, room, lambda s: s.handoff.remove(agent.id) if agent.id in s.handoff else None)
    record = append_message(project, room, "rooms", f"{agent.id} handed off: session summarised into {note.path}",
                            kind="handoff", meta={"agent": agent.id, "deliberation": note.id})
    return {"agent": agent.id, "room": room, "deliberation": note.to_json(), "session": summary.to_json(),
            "record": record.to_json()}


def _summarise(project: Project, config: Config, agent: Agent, room: str, turns: list[dict[str, Any]],
               recent: list[transcript.Message]) -> str:
    """Ask the agent's model for a hand-off note (bounded by the "handoff" reply limit; a note the limit
    cut ends with `…[cut at N tokens]`); with no words from it, an extractive note."""
    from rooms_cli.core.text import summarize
    from rooms_cli.models import provider_for

    lines = [f"{m.speaker}: {m.text}" for m in recent]
    lines += [f"(you answered) {t.get('reply', '')}" for t in turns[-20:]]
    material = "\n".join(lines) or "(nothing was said yet)"
    if agent.is_external(config.default_model):
        return summarize(material) or "No session to summarise."
    system = (f"{agent.directive}\n\nYou are handing off your seat in room {room} to a fresh copy of "
              "yourself. Write a short hand-off note: what was discussed, what you said, what is open.")
    from rooms_cli.chat.hygiene import mark_cut
    from rooms_cli.models.limits import reply_limit
    from rooms_cli.models.prompt import conversation
    from rooms_cli.models.repetition import guarded
    from rooms_cli.models.tokens import clip_to_tokens, estimate_tokens

    provider, model = provider_for(agent.model_string(config.default_model), config)
    limit = reply_limit("handoff", agent=agent, provider_spec=provider.spec)
    temperature = agent.temperature if agent.temperature is not None else HANDOFF_TEMPERATURE

    async def call() -> Completion:
        try:
            window = await provider.context_window(model, agent=agent) or agent.context_window
            limit_here = min(limit, max(16, window // 2))
            # the material fitted to the window (a 10 KB hex dump in the room once made the note overflow it)
            budget = max(64, int((window - limit_here) * 0.8) - estimate_tokens(system) - 16)
            kept: list[str] = []
            for line in reversed(lines):  # the newest lines that fit, each clipped to a third of the budget
                line = clip_to_tokens(line, budget // 3)
                budget -= estimate_tokens(line) + 1
                if budget < 0:
                    break
                kept.append(line)
            messages = conversation(system, [("user", "\n".join(reversed(kept)) or material)])
            return await guarded(provider, messages, model=model, temperature=temperature, max_tokens=limit_here,
                                 agent=agent, purpose="summary")
        finally:
            await provider.aclose()

    import asyncio  # a handoff calls a model; a chat turn only reads the latest deliberation here

    completion = asyncio.run(call())
    text = completion.text.strip()
    if not completion.offline:  # what it read back of its instructions is no note (Gemma 3 270M wrote its directive)
        from rooms_cli.chat.hygiene import cut_repetition
        from rooms_cli.models.repetition import drop_echoes

        text = cut_repetition(drop_echoes(text, system)[0])[0].strip()
    if text and completion.cut:
        text = mark_cut(text, limit)
    return text or summarize(material) or "No session to summarise."
