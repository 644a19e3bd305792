"""`rooms tick`: the scheduled work, meant to run from cron. No daemon: each run does what is due.

Steps run in order; each is a function `(project, config, dry_run) -> list[dict]` in its part,
returning what it did (or would do). A step fails when it raises, or when one of its actions carries
an "error" (a roundtable whose provider is down): the next steps still run, and the report lists one
line per failure under "failed" — `rooms tick` prints those on stderr and exits 1, so cron (which
only sees the exit status) can tell.
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
    """Run every step; return {"dry_run", "ok", "steps": {name: [actions] | {"error": …}}, "failed": [{step, message}]}."""
    report: dict = {"dry_run": dry_run, "ok": True, "steps": {}, "failed": []}
    for name, target in STEPS:
        step = _resolve(target)
        if step is None:
            continue
        try:
            actions = step(project, config, dry_run)
        except RoomsError as err:
            report["steps"][name] = {"error": err.to_json()["error"]}
            report["failed"].append({"step": name, "message": err.message})
            continue
        except Exception as exc:  # noqa: BLE001 - one broken step must not stop the others
            message = f"internal error: {type(exc).__name__}: {exc}"
            report["steps"][name] = {"error": {"code": "internal", "message": message}}
            report["failed"].append({"step": name, "message": message})
            continue
        report["steps"][name] = actions
        report["failed"].extend({"step": name, "message": a["error"]} for a in actions or [] if a.get("error"))
    report["ok"] = not report["failed"]
    return report


TICK_LOG = ("run", "tick.log")  # under .rooms/; git-ignored like the rest of run/


def crontab_line(project, *, every: int = 5) -> str:
    """A crontab line that runs this project's `rooms tick` every `every` minutes, as cron runs it.

    Cron starts jobs with a bare PATH (/usr/bin:/bin) in the home directory, so the line names the
    running `rooms` by its absolute path (a venv or pipx bin is not on cron's PATH), `cd`s to the
    project, and appends to `.rooms/run/tick.log` (created here, and by `rooms init`). A `%` is
    escaped: cron would turn it into a newline.
    """
    import shlex

    log = project.path(*TICK_LOG)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.touch(exist_ok=True)
    command = f"cd {shlex.quote(str(project.root))} && {rooms_command()} tick >> {shlex.quote(project.relative(log))} 2>&1"
    return f"*/{every} * * * * " + command.replace("%", "\\%")


def rooms_command() -> str:
    """The running `rooms`, by absolute path: its console script when that is what runs, else this
    Python with `-m rooms_cli` (python -m rooms_cli, or rooms called from Python)."""
    import os
    import shlex
    import sys

    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(script) == "rooms" and os.path.isfile(script) and os.access(script, os.X_OK):
        return shlex.quote(script)
    return f"{shlex.quote(os.path.abspath(sys.executable))} -m rooms_cli"
