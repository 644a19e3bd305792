"""A roundtable turn the orchestrator asks again never prints the re-ask's instruction (issue 45, item 7):
the re-ask keeps what the turn is about, so the offline model — which reads one message — answers the
topic, not "That reply repeats an earlier turn…"."""

from __future__ import annotations

import asyncio
import types

from rooms_cli.agents.definitions import parse_agent
from rooms_cli.models.base import Message
from rooms_cli.project.config import Config
from rooms_cli.roundtable import orchestrator
from rooms_cli.roundtable.formats import get_format
from rooms_cli.store import files


def test_a_turn_asked_again_is_about_the_topic_not_the_instruction():
    agent = parse_agent(files.package_text("data", "agents", "roundtable", "hustler.md"), "hustler", "hustler")
    providers = orchestrator._Providers(Config())
    messages = [Message("system", "You are Hustler."), Message("user", f"launch week{orchestrator.CUE_OVER}")]
    provider, model = providers.get(agent)
    first = asyncio.run(provider.acomplete(messages, model=model, agent=agent, purpose="roundtable")).text
    # the turn repeats an earlier one word for word: the orchestrator asks once more
    earlier = [types.SimpleNamespace(speaker="boss", text=first)]  # said by another: a copy of it is a repeat
    text, _completion, why = asyncio.run(orchestrator._speak(providers, agent, messages, get_format(Config(), "debate"), 200,
                                                             ["hustler"], ["Boss"], earlier, "launch week"))
    assert why == "" and text and text != first
    assert "launch week" in text
    assert not any(words in text.lower() for words in ("reply", "earlier turn", "word for word", "say something new"))
