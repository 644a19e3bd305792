"""The board: lanes of tasks in a room that agents claim under fenced leases and finish with a record.

    from rooms_cli.board import tasks, claims
    task = tasks.add_task(project, "default", "Write the spec", lane="researcher", done="specs/auth.md exists")
    claim = claims.claim_task(project, "default", task.id, agent="researcher")
    claims.finish_task(project, "default", task.id, claim.lease.lease_id, summary="spec written")

State lives in one append-only event log per task (see store.py and docs/board.md); every read
replays it (replay.py), so files merge in git and a double claim made offline shows as a conflict.
"""
