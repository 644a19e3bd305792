"""Messaging: inboxes, send/reply, spawn, wait, attention, hooks (see shared design messaging.md)."""
