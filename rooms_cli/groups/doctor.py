"""Groups' checks for `rooms doctor`: what merging two clones' group logs did that a person should know.

Replay resolves every merge on its own (see groups/log.py) and loses nothing; these findings say
which resolution it chose and the command that undoes it when it was not what was meant:
a group created in two clones (merged into one), one member handle added with two profiles (the
second renamed), a dissolve another clone never saw coming (overruled), one group renamed to two
names (both kept), renamed in one clone and dissolved in the other (kept under the new name), a
broadcast gathered or cancelled in two clones (the first close kept), several broadcasts in flight.
"""

from __future__ import annotations

from rooms_cli.core.errors import RoomsError
from rooms_cli.core.findings import Finding
from rooms_cli.core.text import count
from rooms_cli.groups import log
from rooms_cli.groups.model import Group

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def check(project: Project, config: Config) -> list[Finding]:
    findings: list[Finding] = []

    for name in log.log_names(project):
        try:
            group = log.load_any(project, name)
        except RoomsError:
            continue  # a broken log: check_files names it
        if group is not None:
            rel = project.relative(log.log_path(project, name))
            findings += [Finding("warning", "group-merge", message, fix, rel) for message, fix in merge_effects(name, group)]
    from rooms_cli.core.findings import typed_findings

    findings += typed_findings(project, "group", "group-event", [log.log_path(project, n) for n in log.log_names(project)], key="eid")
    return findings


def merge_effects(name: str, group: Group) -> list[tuple[str, str]]:
    """(what happened, the fix) for each merge effect replay resolved in group log `name`."""
    found = []
    if len(set(group.renamed_to)) > 1:
        targets = " and ".join(repr(t) for t in dict.fromkeys(group.renamed_to))
        found.append((f"group {name!r} was renamed to {targets} in different clones; each now holds its history",
                      f"keep one: rooms group dissolve {group.renamed_to[-1]} (move members first with rooms group move-member)"))
    if group.renamed_to and group.dissolved_by:
        found.append((f"group {name!r} was dissolved in one clone and renamed to {group.renamed_to[0]!r} in another; "
                      f"{group.renamed_to[0]!r} is kept", f"if it should go: rooms group dissolve {group.renamed_to[0]}"))
    if group.gone:
        return found
    for note in group.merge_notes:
        kind = note["kind"]
        if kind == "duplicate_created":
            found.append((f"group {name!r} was created in two clones; their members and broadcasts are merged into one group",
                          f"nothing to do if one group was meant; else move members out with rooms group move-member HANDLE --from {name} --to OTHER"))
        elif kind == "handle_clash":
            found.append((f"two clones added member {note['handle']!r} to group {name!r} with different profiles; the one with "
                          f"profile {note['profile']!r} is kept as {note['kept_as']!r}",
                          f"keep it, or move it: rooms group move-member {note['kept_as']} --from {name} --to OTHER"))
        elif kind == "dissolve_overruled":
            found.append((f"group {name!r} was dissolved in one clone while another clone kept using it "
                          f"({count(note['events'] - note['seen'], 'event')} the dissolve never saw); the group is kept",
                          f"if it should go: rooms group dissolve {name}"))
        elif kind == "closed_twice":
            found.append((f"broadcast {note['broadcast_id']} of group {name!r} was {note['was']} in one clone and "
                          f"{note['as']} in another; the first is kept", "nothing to do; the later result is left out"))
    flying = [b.id for b in group.broadcasts if b.in_flight]
    if len(flying) > 1:
        found.append((f"group {name!r} has {len(flying)} broadcasts in flight ({', '.join(flying)}): two clones broadcast at once",
                      f"gather each with rooms group wait {name} (once per broadcast), or rooms group cancel {name}"))
    return found
