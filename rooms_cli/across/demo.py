"""`rooms demo`: a short showcase on the offline model, in a temporary directory (or --dir).

The temporary directory (`rooms-demo-*` in the system's temp folder) is removed when the demo ends,
unless `--keep`; a `--dir` is the user's and always stays.

Each part contributes a section: a function `(project, show) -> None` where `show(kind, text)`
prints one line of the demo (kinds: section, cmd, line, italic, and record: a task's done record as
JSON, which the CLI prints as `rooms task done` does). The sections are named in `rooms_cli.across.registry.DEMO_SECTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

Show = Callable[[str, str], None]


def select_sections(only: list[str] | None) -> list[str]:
    """The sections `--only` names — repeated or comma-separated (`board,chat`), run in the demo's
    order — or every section. An unknown name is a usage error naming the known ones."""
    from rooms_cli.across.registry import DEMO_SECTIONS

    known = list(DEMO_SECTIONS)
    if not only:
        return known
    asked = [part.strip().lower() for item in only for part in item.split(",") if part.strip()]
    unknown = [name for name in asked if name not in known]
    if unknown or not asked:
        from rooms_cli.core.errors import UsageError

        shown = ", ".join(repr(u) for u in unknown) or "nothing"
        raise UsageError(f"--only names {shown}: not a demo section; choose from {', '.join(known)} "
                         "(comma-separated, e.g. --only board,chat)")
    return [name for name in known if name in asked]


@contextmanager
def demo_directory(given: Path | None, keep: bool = False) -> Iterator[Path]:
    """`given`, or a new temporary `rooms-demo-*` directory, removed on the way out unless `keep`."""
    if given is not None:
        yield given
        return
    from rooms_cli.store import files

    target = Path(files.new_temporary_folder("rooms-demo-"))
    try:
        yield target
    finally:
        if not keep:
            files.remove_tree(target)


def run_demo(target: Path, show: Show, only: list[str] | None = None) -> dict[str, Any]:
    """Set up the example agents under `target` and run each section; return a summary."""
    import os

    selected = select_sections(only)  # before anything is created

    from rooms_cli.across.registry import DEMO_SECTIONS
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    initialize(target, example="roundtable")
    initialize(target, example="dev")
    project = open_project(target)
    # the demo's own identity, so it does not depend on $USER
    os.environ.setdefault("ROOMS_AGENT", "you")
    ran = []
    for name, load in DEMO_SECTIONS.items():
        if name not in selected:
            continue
        section = load()
        show("section", name)
        section(project, show)
        ran.append(name)
    return {"dir": str(project.root), "sections": ran}
