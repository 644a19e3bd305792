"""`rooms tick`: the scheduled work, meant to run from cron. No daemon: each run does what is due.

Steps (`rooms_cli.across.registry.TICK_STEPS`) run in order; each is a function `(project, config, dry_run)
-> list[dict]` in its part, returning what it did (or would do). A step fails when it raises, or when one of its actions carries
an "error" (a roundtable whose provider is down): the next steps still run, and the report lists one
line per failure under "failed" — `rooms tick` prints those on stderr and exits 1, so cron (which
only sees the exit status) can tell. A step that cannot even be imported fails the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from rooms_cli.core.errors import RoomsError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def run_tick(project: Project, config: Config, *, dry_run: bool = False,
             on_event: dict[str, Callable[..., None]] | None = None) -> dict[str, Any]:
    """Run every step; return {"dry_run", "ok", "steps": {name: [actions] | {"error": …}}, "failed": [{step, message}]}.

    `on_event` maps a step name to an observer it is given as `on_event=` (the roundtables step
    reports each roundtable's start and turns: the live status line of `rooms tick` on a terminal).
    """
    from rooms_cli.across.registry import TICK_STEPS

    report: dict[str, Any] = {"dry_run": dry_run, "ok": True, "steps": {}, "failed": []}
    for name, load in TICK_STEPS.items():
        observe = {"on_event": on_event[name]} if on_event and name in on_event else {}
        try:
            actions = load()(project, config, dry_run, **observe)  # a step that cannot be imported fails here
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


def crontab_line(project: Project, *, every: int = 5) -> str:
    """A crontab line that runs this project's `rooms tick` every `every` minutes, as cron runs it.

    Cron starts jobs with a bare PATH (/usr/bin:/bin) in the home directory, so the line names the
    running `rooms` by its absolute path (a venv or pipx bin is not on cron's PATH), `cd`s to the
    project, and appends to `.rooms/run/tick.log` (created here, and by `rooms init`). A `%` is
    escaped: cron would turn it into a newline.
    """
    import shlex

    from rooms_cli.store import files, layout

    log = layout.tick_log(project)
    files.touch(log)
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
