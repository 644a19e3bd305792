"""Helpers shared by the chat tests (not fixtures: plain functions)."""

from __future__ import annotations

from rooms_cli.agents.definitions import Agent, create_agent
from rooms_cli.chat.coordinator import continue_room, run_message
from rooms_cli.chat.rooms import create_room, load_room
from rooms_cli.chat.transcript import read_transcript
from rooms_cli.project.config import load_config

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

