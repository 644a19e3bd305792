"""`rooms tick`: the scheduled work, meant to run from cron. No daemon: each run does what is due.

Steps (`rooms_cli.registry.TICK_STEPS`) run in order; each is a function `(project, config, dry_run) -> list[dict]` in its part,
returning what it did (or would do). A step that fails is reported and the next steps still run.
"""

from __future__ import annotations

from rooms_cli.errors import RoomsError


def run_tick(project, config, *, dry_run: bool = False) -> dict:
    """Run every step; return {"dry_run", "steps": {name: [actions] | {"error": …}}}."""
    from rooms_cli.registry import TICK_STEPS, resolve

    steps = {name: resolve(target) for name, target in TICK_STEPS.items()}  # a broken step fails before any runs
    report: dict = {"dry_run": dry_run, "steps": {}}
    for name, step in steps.items():
        try:
            report["steps"][name] = step(project, config, dry_run)
        except RoomsError as err:
            report["steps"][name] = {"error": err.to_json()["error"]}
    return report
