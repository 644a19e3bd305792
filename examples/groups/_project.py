"""Shared by the group examples: use the current rooms project, or make a temporary one.

A project is found like the CLI finds it (ROOMS_DIR, else the nearest .rooms/ upwards). Without
one, a temporary project with the example agents (roundtable, dev, gamedev) is created, so every
example runs out of the box on the offline model, and removed when the example exits (unless
ROOMS_KEEP_EXAMPLE is set).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile


def ensure_project():
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import find_project, open_project

    project = find_project()
    if project is None:
        root = tempfile.mkdtemp(prefix="rooms-example-")
        for example in ("roundtable", "dev", "gamedev"):
            initialize(root, example=example)
        os.environ["ROOMS_DIR"] = root
        if os.environ.get("ROOMS_KEEP_EXAMPLE"):
            print(f"(using a new temporary project in {root}, kept: ROOMS_KEEP_EXAMPLE is set)", file=sys.stderr)
        else:  # a run leaves nothing behind in /tmp
            atexit.register(shutil.rmtree, root, ignore_errors=True)
            print(f"(using a new temporary project in {root}, removed at exit; "
                  "set ROOMS_KEEP_EXAMPLE=1 to keep it)", file=sys.stderr)
        project = open_project(root)
    return project


async def fresh(name: str) -> None:
    """Start from an empty group `name` (a re-run of the example replaces the old one)."""
    import rooms_cli
    from rooms_cli.groups import log
    from rooms_cli.store.paths import open_project

    if log.exists(open_project(), name):
        await rooms_cli.groups.api.dissolve(name)


def short(text, width: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"
