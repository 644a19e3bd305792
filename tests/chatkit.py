"""Helpers shared by the chat tests (not fixtures: plain functions)."""

from __future__ import annotations

from rooms_cli.agents import Agent, create_agent
from rooms_cli.chat.coordinator import continue_room, run_message
from rooms_cli.chat.rooms import create_room, load_room
from rooms_cli.chat.transcript import read_transcript
from rooms_cli.config import load_config

DEV = ["architect", "researcher", "reviewer", "ops"]


def room(project, name="sync", agents=None):
    return create_room(project, name, agents or list(DEV))


def say(project, text, room="sync", speaker="alice"):
    return run_message(project, load_config(project), room, speaker, text)


def cont(project, room="sync", speaker="alice"):
    return continue_room(project, load_config(project), room, speaker)


def state(project, room="sync"):
    return load_room(project, room)


def records(project, room="sync", kind=None):
    msgs = read_transcript(project, room)
    return [m for m in msgs if kind is None or m.kind == kind]


def new_agent(project, agent_id, **fields):
    fields.setdefault("directive", f"You are {agent_id}.")
    create_agent(project, Agent(id=agent_id, **fields))


def chat_server(**kwargs):
    """A FakeServer for chat tests: model calls take the scripted replies; what a provider asks the
    server besides (llama.cpp's /props and /tokenize, Ollama's /api/show, /v1/models) is answered
    apart — 404, or like llama.cpp when `n_ctx` is given — and recorded in `probes`, not `requests`.
    `chars_per_token`: how /tokenize counts."""
    import json

    from fakeserver import FakeServer, Reply

    class ChatServer(FakeServer):
        n_ctx: int | None = None
        chars_per_token: float = 4.0

        def _record(self, request):
            if request.protocol is not None:
                return super()._record(request)
            with self._lock:
                self.probes.append(request)
            if self.n_ctx and request.path.endswith("/props"):
                return Reply(body=json.dumps({"default_generation_settings": {"n_ctx": self.n_ctx}}))
            if self.n_ctx and request.path.endswith("/tokenize"):
                text = (request.json or {}).get("content", "")
                return Reply(body=json.dumps({"tokens": list(range(int(len(text) / self.chars_per_token) + 1))}))
            return Reply()

    n_ctx = kwargs.pop("n_ctx", None)
    chars_per_token = kwargs.pop("chars_per_token", 4.0)
    server = ChatServer(**kwargs)
    server.probes = []
    server.n_ctx, server.chars_per_token = n_ctx, chars_per_token
    return server
