"""Where every part plugs into the commands that run them all: `rooms tick`, `rooms doctor`, `rooms demo`.

Each table maps a name to a loader: a function that imports its part with a plain import and returns
the function to call. The import sits inside the loader so that a command imports only what it runs
(`rooms tick` loads no demo, `rooms doctor` no tick step), and so that one broken part is one
failure — doctor reports a check that cannot be loaded, tick fails that step and runs the others —
never a part silently skipped. mypy and the import graph follow every loader.

Only the commands that run every part (tick.py, doctor.py, demo.py) import this module; a part never
does (`tests/test_architecture.py`, which also calls every loader). The CLI's commands are listed in
cli/app.py, and what other parts add to a chat prompt in prompt_sections.py.

To add a part's step, check or section: write its function, then one loader and one line here.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.core.findings import Finding

    TickStep = Callable[..., list[dict[str, Any]]]  # (project, config, dry_run, [on_event=]) -> what it did
    DoctorCheck = Callable[..., list[Finding]]  # (project, config) -> findings
    DemoSection = Callable[..., None]  # (project, show) -> None


# -- `rooms tick` -------------------------------------------------------------------------------------

def _fire_schedule() -> TickStep:
    from rooms_cli.roundtable.tick import fire_schedule

    return fire_schedule


def _run_roundtables() -> TickStep:
    from rooms_cli.roundtable.tick import run_pending

    return run_pending


def _expire_leases() -> TickStep:
    from rooms_cli.board.tick import expire_leases

    return expire_leases


def _expire_reservations() -> TickStep:
    from rooms_cli.reservations.tick import expire_reservations

    return expire_reservations


def _reap_spawns() -> TickStep:
    from rooms_cli.messaging.tick import reap_spawns

    return reap_spawns


def _wake_agents() -> TickStep:
    from rooms_cli.messaging.tick import wake_agents

    return wake_agents


def _sync() -> TickStep:
    from functools import partial

    from rooms_cli.across.sync import hooks
    from rooms_cli.store.sync.tick import sync_step

    return partial(sync_step, hooks=hooks())  # a --sync claim waiting here is checked by cron's sync too


# run in this order
TICK_STEPS: dict[str, Callable[[], TickStep]] = {
    "schedule": _fire_schedule,
    "roundtables": _run_roundtables,
    "leases": _expire_leases,
    "reservations": _expire_reservations,
    "spawns": _reap_spawns,
    "wake": _wake_agents,
    "sync": _sync,
}


# -- `rooms doctor`: each part's own checks -----------------------------------------------------------

def _chat_checks() -> DoctorCheck:
    from rooms_cli.chat.doctor import check

    return check


def _board_checks() -> DoctorCheck:
    from rooms_cli.board.doctor import check

    return check


def _messaging_checks() -> DoctorCheck:
    from rooms_cli.messaging.doctor import check

    return check


def _groups_checks() -> DoctorCheck:
    from rooms_cli.groups.doctor import check

    return check


def _roundtable_checks() -> DoctorCheck:
    from rooms_cli.roundtable.doctor import check

    return check


def _reservations_checks() -> DoctorCheck:
    from rooms_cli.reservations.doctor import check

    return check


def _sync_checks() -> DoctorCheck:
    from rooms_cli.store.sync.doctor import check

    return check


DOCTOR_CHECKS: dict[str, Callable[[], DoctorCheck]] = {
    "chat": _chat_checks,
    "board": _board_checks,
    "messaging": _messaging_checks,
    "groups": _groups_checks,
    "roundtable": _roundtable_checks,
    "reservations": _reservations_checks,
    "sync": _sync_checks,
}


# -- `rooms demo`: one section a part ------------------------------------------------------------------

def _chat_demo() -> DemoSection:
    from rooms_cli.chat.demo import run

    return run


def _board_demo() -> DemoSection:
    from rooms_cli.board.demo import run

    return run


def _roundtable_demo() -> DemoSection:
    from rooms_cli.roundtable.demo import run

    return run


def _groups_demo() -> DemoSection:
    from rooms_cli.groups.demo import run

    return run


def _messaging_demo() -> DemoSection:
    from rooms_cli.messaging.demo import run

    return run


# run in this order
DEMO_SECTIONS: dict[str, Callable[[], DemoSection]] = {
    "chat": _chat_demo,
    "board": _board_demo,
    "roundtable": _roundtable_demo,
    "groups": _groups_demo,
    "messaging": _messaging_demo,
}
