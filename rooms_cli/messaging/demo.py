"""The messaging section of `rooms demo`: announce, spawn a detached helper, wait, read its output."""

from __future__ import annotations

import os
import sys

from rooms_cli.core.text import count

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable

    from rooms_cli.store.paths import Project

# The spawned helper: a tiny program that works on any machine (the real thing would be
# `runner: [claude, -p]` or similar). It reads the prompt on stdin and knows who it is from ROOMS_*.
HELPER = (
    "import os, sys\n"
    "prompt = sys.stdin.read().strip()\n"
    "words = prompt.split()\n"
    "print(f\"{os.environ['ROOMS_AGENT']} here (spawned by {os.environ['ROOMS_PARENT']}): \"\n"
    "      f\"read your {len(words)}-word task; the longest word is {max(words, key=len)!r}.\")\n"
)


def run(project: Project, show: Callable[[str, str], None]) -> None:
    from rooms_cli.messaging.attention import build_attention, message_line, render_attention
    from rooms_cli.messaging.inbox import take_unread
    from rooms_cli.messaging.send import send_message
    from rooms_cli.messaging.spawn import start_spawn
    from rooms_cli.messaging.status import set_status
    from rooms_cli.messaging.wait import wait_for_spawns
    from rooms_cli.messaging.wake import wake_recipients
    from rooms_cli.project.config import identity, load_config

    config = load_config(project)
    me = identity(os.environ.get("ROOMS_AGENT"), config)

    show("cmd", 'rooms status set "Planning the release"')
    set_status(project, me, "Planning the release")
    show("cmd", "rooms send \"I'm on the release notes; shout if you need me\"")
    sent = send_message(project, config, me, "I'm on the release notes; shout if you need me")
    show("line", f"delivered to {count(len(sent.delivered), 'inbox')}")

    prompt = "Check the changelog for unreleased entries"
    show("cmd", f'rooms spawn "{prompt}" --description "changelog check"')
    spawn = start_spawn(project, config, me, prompt, description="changelog check", runner=[sys.executable, "-c", HELPER])
    show("line", f"spawned {spawn.alias} ({spawn.id}): a detached process; `rooms spawn` returned at once")

    show("cmd", "rooms wait")
    waited = wait_for_spawns(project, me, timeout=60)
    for message in take_unread(project, me):
        show("line", message_line(message))
    if waited.timed_out:
        show("italic", "(the helper did not finish within a minute)")
    else:
        show("italic", "the spawn's output came back to the spawner's inbox as a message from its alias")

    show("cmd", "rooms attention --as researcher   # what a prompt hook injects into every model call")
    for line in render_attention(build_attention(project, config, "researcher", mark_read=False)).splitlines()[:4]:
        show("line", line if len(line) <= 160 else line[:159] + "…")

    question = "what rate limits should the release notes mention?"
    show("cmd", f'rooms send --to researcher --wake "{question}"')
    sent = send_message(project, config, me, question, to="researcher")
    woken = wake_recipients(project, config, sent.delivered)
    for message in take_unread(project, me):
        show("line", message_line(message))
    if woken:
        show("italic", "an LLM-backed agent woke on its unread message; its reply came back through the inboxes")
