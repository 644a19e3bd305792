"""`rooms agent list|show|new`: agent definitions."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands, complete_agents
from rooms_cli.cli.shared import Run, shared

agent_app = commands(GROUPS["agent"])


@agent_app.command("list")
@shared()
def list_cmd(run: Run) -> None:
    """List every agent with its model and flags.

    Example: rooms agent list --json
    """
    from rooms_cli.agents.definitions import list_agents

    agents = list_agents(run.project)
    default = run.config.default_model
    if run.json:
        output.print_json([{**a.to_json(), "effective_model": a.model_string(default)} for a in agents])
        return
    if not agents:
        output.say("No agents yet. Create one with `rooms agent new ID`, or `rooms init --example roundtable`.")
        return
    from rich.table import Table

    table = Table("id", "name", "model", "tags", "flags", box=None, pad_edge=False)
    for a in agents:
        flags = " ".join(f for f, on in (("quiet", a.quiet), ("idle", a.idle), ("wake", a.wake)) if on)
        table.add_row(a.id, a.display_name, a.model_string(default), ", ".join(a.tags), flags)
    output.console().print(table)


@agent_app.command("show")
@shared()
def show_cmd(run: Run, agent_id: Annotated[str, typer.Argument(autocompletion=complete_agents, help="Agent id.")]) -> None:
    """Show one agent (= /whois): model, capabilities, joined rooms, source path.

    Example: rooms agent show researcher
    """
    from rooms_cli.chat.directory import whois

    info = whois(run.project, run.config, agent_id)
    if run.json:
        output.print_json(info)
        return
    output.say(f"{info['name']} ({info['id']})", style="bold")
    output.say(f"  model:        {info['effective_model']}")
    output.say(f"  capabilities: {', '.join(info['capabilities']) or '-'}")
    output.say(f"  tags:         {', '.join(info['tags']) or '-'}")
    output.say(f"  rooms:        {', '.join(info['rooms']) or '-'}")
    output.say(f"  source:       {info['path']}")


@agent_app.command("new")
@shared()
def new_cmd(
    run: Run,
    agent_id: Annotated[str, typer.Argument(help="Agent id (lowercase letters, digits, . _ -).")],
    tags: Annotated[str, typer.Option(metavar="TAGS", help="Comma-separated tags, e.g. search,api.")] = "",
    disposition: Annotated[str, typer.Option(metavar="WORDS", help="A few words of temperament.")] = "",
    model: Annotated[str | None, typer.Option(metavar="MODEL", help="provider:model, e.g. ollama:llama3.2 (default: default_model).")] = None,
    name: Annotated[str, typer.Option(metavar="NAME", help="Display name.")] = "",
    directive: Annotated[str | None, typer.Option(metavar="TEXT", help="The system directive (default: a one-line stub to edit).")] = None,
    quiet: Annotated[bool, typer.Option(help="Left out of open messages while a non-quiet agent is present.")] = False,
    idle: Annotated[bool, typer.Option(help="Not joined to new rooms until invited.")] = False,
    owner: Annotated[str | None, typer.Option(metavar="PERSON", help="The person the agent works for.")] = None,
) -> None:
    """Create an agent definition file.

    Example: rooms agent new researcher --tags search,api,rate-limits --disposition "curious, thorough"
    """
    from rooms_cli.agents.definitions import Agent, create_agent
    from rooms_cli.store.ids import validate_name

    validate_name(agent_id, "agent id")
    agent = Agent(
        id=agent_id,
        name=name,
        tags=[t.strip() for t in tags.split(",") if t.strip()],
        disposition=disposition,
        model=model,
        quiet=quiet,
        idle=idle,
        owner=owner,
        directive=directive or f"You are {name or agent_id}. Say what you know, briefly; answer /pass when you have nothing to add.",
    )
    path = create_agent(run.project, agent)
    run.emit({"created": agent.id, "path": run.project.relative(path)}, f"Created agent {agent.id} at {run.project.relative(path)}")
