"""The roundtable part's checks for `rooms doctor`: a scheduled occurrence that ran in two clones.

Two clones whose `rooms tick` both fired one slot occurrence offline each ran it; after the merge
the queue holds both items (the second, if it had not run, is dropped as a duplicate by the replay).
A double run cannot be undone, only avoided: run the schedule from one clone.
"""

from __future__ import annotations


def check(project, config) -> list:
    from rooms_cli.doctor import Finding
    from rooms_cli.roundtable.queue import list_items, queue_path

    by_key: dict[str, list] = {}
    for item in list_items(project):
        if item.key is not None and (item.status in ("running", "done") or item.attempts):
            by_key.setdefault(item.key, []).append(item)
    rel = project.relative(queue_path(project))
    return [
        Finding("warning", "schedule",
                f"scheduled roundtable {key} ran {len(items)} times ({', '.join(i.id for i in items)}): "
                f"rooms tick fired it in more than one clone before they merged",
                "keep both transcripts (nothing is lost); to avoid it, run `rooms tick` (cron) in one clone only", rel)
        for key, items in sorted(by_key.items()) if len(items) > 1
    ]
