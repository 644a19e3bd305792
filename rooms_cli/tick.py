"""`rooms tick`: the scheduled work, meant to run from cron. No daemon: each run does what is due.

Steps run in order; each is a function `(project, config, dry_run) -> list[dict]` in its part,
returning what it did (or would do). A step that fails is reported and the next steps still run.
"""

from __future__ import annotations

from importlib import import_module

from rooms_cli.errors import RoomsError

STEPS = (
    ("schedule", "rooms_cli.roundtable.tick:fire_schedule"),
    ("roundtables", "rooms_cli.roundtable.tick:run_pending"),
    ("leases", "rooms_cli.board.tick:expire_leases"),
    ("spawns", "rooms_cli.messaging.tick:reap_spawns"),
    ("wake", "rooms_cli.messaging.tick:wake_agents"),
)


def _resolve(target: str):
    module, _, func = target.partition(":")
    try:
        return getattr(import_module(module), func)
    except (ImportError, AttributeError):
        return None


def run_tick(project, config, *, dry_run: bool = False) -> dict:
    """Run every step; return {"dry_run", "steps": {name: [actions] | {"error": …}}}."""
    report: dict = {"dry_run": dry_run, "steps": {}}
    for name, target in STEPS:
        step = _resolve(target)
        if step is None:
            continue
        try:
            report["steps"][name] = step(project, config, dry_run)
        except RoomsError as err:
            report["steps"][name] = {"error": err.to_json()["error"]}
    return report
