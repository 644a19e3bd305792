"""`rooms sync`: `.rooms/` through a git remote, in one place (docs/git.md).

    engine.py    the sync itself: the ref `refs/rooms/state`, chunks of logs, whole files, the push
    settings.py  the `sync:` section of .rooms.yaml (remote, claims, interval)
    doctor.py    `rooms doctor`'s sync check; tick.py: `rooms tick`'s sync step

It sits in the store because it reads and writes `.rooms/` itself (under the logs' locks), and it is
the only code that runs git.
"""
