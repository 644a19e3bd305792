"""The domain code of the commands agents run in loops imports only what it uses (issue 16).

`rooms task next|claim|done|renew|release`, `board --json`, `send` and `inbox` run without typer
(cli/fast.py), so what is left of their start-up is the domain code they call. Each test runs that
code as a real process, the way a command calls it (Context.open, then the part's function), and
fails when it imports a module it does not use: socket for a host name, tempfile for a temp file's
name, the chat part to check that a room exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import checkout_path

# each was imported by one of these paths without being used (cost a process: socket ~5 ms, tempfile
# ~5 ms with shutil and random, typing ~2 ms, subprocess ~3 ms)
UNUSED = ("socket", "tempfile", "shutil", "random", "typing", "subprocess", "selectors", "rooms_cli.chat",
          "yaml", "frontmatter", "typer", "click", "rich")

SCRIPT = """
import json, os, sys
from rooms_cli.project.context import Context
ctx = Context.open(None, as_=os.environ["AS"], room=None)
{body}
print(json.dumps({{"modules": sorted(sys.modules)}}))
"""

PATHS = {
    "task next": ("dev", """
from rooms_cli.board.claims import next_task
assert next_task(ctx.project, ctx.room, agent=ctx.me, lease=None) is not None"""),
    "task claim": ("dev", """
from rooms_cli.board.claims import claim_task
claim_task(ctx.project, ctx.room, os.environ["FREE"], agent=ctx.me, lease=None)"""),
    "task done": ("dev", """
from rooms_cli.board.claims import finish_task
finish_task(ctx.project, ctx.room, os.environ["HELD"], os.environ["LEASE"], summary="done", holder=ctx.me)"""),
    "task renew": ("dev", """
from rooms_cli.board.claims import renew_lease
renew_lease(ctx.project, ctx.room, os.environ["HELD"], os.environ["LEASE"], lease="5m", holder=ctx.me)"""),
    "task release": ("dev", """
from rooms_cli.board.claims import release_task
release_task(ctx.project, ctx.room, os.environ["HELD"], os.environ["LEASE"], holder=ctx.me)"""),
    "board --json": ("dev", """
from rooms_cli.board.render import board_view
assert board_view(ctx.project, ctx.room, lane=None, status=None)["lanes"]"""),
    "send": ("alice", """
from rooms_cli.messaging.send import send_message
assert send_message(ctx.project, ctx.config, ctx.me, "the API is yours", to="researcher").delivered"""),
    "inbox": ("researcher", """
from rooms_cli.messaging.inbox import open_inbox
from rooms_cli.messaging.status import touch
touch(ctx.project, ctx.me)
assert open_inbox(ctx.project, ctx.me, unread_only=False, peek=False).messages"""),
}


@pytest.fixture
def project(tmp_path):
    """A project of the dev example with three tasks in lane dev (one held) and a message for researcher.

    Its YAML files are dated 10 s back and read once here, so that their parsed copy is kept (a file
    written less than a second ago is parsed again: store/parsed.py), as in a project in use."""
    from rooms_cli.board import claims, tasks
    from rooms_cli.messaging.send import send_message
    from rooms_cli.project.config import load_config
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    root = tmp_path / "proj"
    root.mkdir()
    initialize(root, "dev")
    long_ago = time.time() - 10
    for path in [root / ".rooms.yaml", *(root / ".rooms" / "agents").iterdir()]:
        os.utime(path, (long_ago, long_ago))
    project = open_project(root)
    held, free, _ = (tasks.add_task(project, "default", f"task {n}", lane="dev", done="done", by="alice").id for n in range(3))
    claim = claims.claim_task(project, "default", held, agent="dev", lease="1h")
    send_message(project, load_config(project), "alice", "hello", to="researcher")
    return root, {"HELD": held, "FREE": free, "LEASE": claim.lease.lease_id}


def imports_of(root: Path, agent: str, body: str, values: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    env.update(PYTHONPATH=checkout_path(), ROOMS_DIR=str(root), AS=agent, **values)
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(body=body)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("command", list(PATHS))
def test_hot_domain_path_imports_nothing_it_does_not_use(project, command):
    root, values = project
    agent, body = PATHS[command]
    report = imports_of(root, agent, body, values)
    modules = set(report["modules"])
    assert {m for m in modules if m in UNUSED or m.split(".")[0] in UNUSED} == set()
