"""Lessons from roundtables reach chat prompts, capped by memory.max_per_prompt."""

from __future__ import annotations

from rooms_cli.agents.definitions import list_agents, load_agent
from rooms_cli.agents.memories import add_lessons
from rooms_cli.chat.context import system_prompt
from rooms_cli.chat.rooms import load_room


def test_chat_prompts_carry_recent_lessons_capped_by_config(project_dir, project):
    (project_dir / ".rooms.yaml").write_text("memory: {max_per_prompt: 2}\n")
    add_lessons(project, "researcher", [f"lesson number {i}" for i in range(10)], source="rt-x")
    agents = {a.id: a for a in list_agents(project)}
    prompt = system_prompt(project, load_room(project, "default"), load_agent(project, "researcher"), agents)
    assert "lesson number 9" in prompt and "lesson number 8" in prompt
    assert "lesson number 7" not in prompt


def test_an_oversized_message_is_clipped_to_fit_the_agents_window(project):
    from rooms_cli.chat.context import build_prompt
    from rooms_cli.chat.transcript import append_message, tail

    append_message(project, "default", "alice", "@researcher " + "x" * 200_000)
    agents = {a.id: a for a in list_agents(project)}
    agent = load_agent(project, "researcher")
    snapshot = tail(project, "default", 50)
    messages = build_prompt(project, load_room(project, "default"), agent, agents, snapshot, snapshot[-1])
    assert sum(len(m.content) for m in messages) < agent.context_window * 4  # fits (4 characters a token)
    assert messages[-1].content.startswith("alice: @researcher xxx") and "…[clipped: " in messages[-1].content
