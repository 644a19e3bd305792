"""`rooms watch`: follow rooms, boards, groups, inboxes and spawns, and turn each new record into an event.

    from rooms_cli.watch import Selection, watch
    for event in watch(project, Selection(all=True), timeout=10):
        print(event["type"], event["ts"])

An event is a JSON-ready dict with at least `type` (`chat.message`, `task.claimed`, `group.reply`,
`inbox.direct`, `spawn.finish`…) and `ts`, plus `room`, `group` or `agent` where they apply.
"""

from rooms_cli.watch.follow import Follower, watch
from rooms_cli.watch.sources import Selection

__all__ = ["Follower", "Selection", "watch"]
