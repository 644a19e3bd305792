"""Messaging and spawn: inboxes (inbox.py), send/reply (send.py), status and roster (status.py),
detached spawns (spawn.py, worker.py), waiting for spawn trees (wait.py), the attention block
(attention.py), host hooks (hooks.py), waking LLM-backed agents (wake.py), tick steps (tick.py)."""
