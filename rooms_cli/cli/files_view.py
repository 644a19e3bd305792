"""How the command line shows file reservations (operations/files.py): `rooms files reserve|release|list|check`."""

from __future__ import annotations

from rooms_cli.cli.views import prepares, renders
from rooms_cli.operations import files as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.cli.shared import Run
    from rooms_cli.reservations.ledger import CheckResult, Reservation


@renders(ops.reserve)
def _reserved(run: Run, r: Reservation, values: dict[str, Any]) -> None:
    run.emit(r, f"reserved {' '.join(r.patterns)} for {r.agent} ({'exclusive' if r.exclusive else 'shared'}) "
                f"until {r.expires_at}  [{r.id}]")


@renders(ops.release)
def _released(run: Run, released: list[Reservation], values: dict[str, Any]) -> None:
    run.emit(released, "\n".join(f"released {r.id} ({' '.join(r.patterns)})" for r in released))


def _line(r: Reservation) -> str:
    how = "exclusive" if r.exclusive else "shared"
    extra = f" — {r.reason}" if r.reason else ""
    lost = f" [LOST to {r.lost_to}: not enforced]" if r.lost_to else ""
    return f"{r.id}  {r.agent:<12} {how:<9} until {r.expires_at}  {' '.join(r.patterns)}{extra}{lost}"


@renders(ops.list_reservations)
def _listed(run: Run, held: list[Reservation], values: dict[str, Any]) -> None:
    run.emit(held, "\n".join(_line(r) for r in held) or "no active reservations")


@prepares(ops.check)
def _paths_from_here(run: Run, values: dict[str, Any]) -> dict[str, Any]:
    """The paths given on the command line are relative to the working directory; the check takes them
    relative to the project root."""
    from rooms_cli.reservations.ledger import project_paths

    if not values["paths"]:  # --staged or --range: the operation finds them
        return values
    return {**values, "paths": project_paths(run.project, values["paths"])}


@renders(ops.check)
def _checked(run: Run, result: CheckResult, values: dict[str, Any]) -> None:
    problem = result.problem()
    if problem is not None:  # another agent holds one: exit 3 naming the holder
        raise problem
    run.emit(result, f"free: {' '.join(result.paths)}")
