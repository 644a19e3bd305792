"""Roundtables: formats, speaker selection, schedule, memories (see shared design roundtable.md)."""
