"""The file store: the only code that builds paths under `.rooms/` and touches its files.

    from rooms_cli.store import open_project
    project = open_project()            # nearest .rooms/ upwards, or --dir / ROOMS_DIR
    path = layout.transcript_file(project, room)   # store/layout.py names every file
    jsonl.append(path, record)          # whole line, under lock, fsynced
"""

from rooms_cli.store.paths import Project, find_project, init_project, open_project

__all__ = ["Project", "find_project", "init_project", "open_project"]
