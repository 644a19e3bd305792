"""Agents: their definitions (`.rooms/agents/<id>.md`), the lessons they learned, the providers they run on."""
