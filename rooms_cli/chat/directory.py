"""Facts about agents that span parts: which rooms an agent has joined, /whois."""

from __future__ import annotations

from rooms_cli.agents.definitions import load_agent
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config


def joined_rooms(project: Project, agent_id: str) -> list[str]:
    """Ids of the rooms whose roster holds `agent_id`."""
    from rooms_cli.chat.rooms import list_room_states

    return [state.id for state in list_room_states(project) if agent_id in state.roster]


def whois(project: Project, config: Config, agent_id: str) -> dict[str, Any]:
    agent = load_agent(project, agent_id)
    data = agent.to_json()
    data["name"] = agent.display_name
    data["effective_model"] = agent.model_string(config.default_model)
    data["rooms"] = joined_rooms(project, agent.id)
    return data
