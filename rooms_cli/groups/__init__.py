"""Groups: broadcast one four-field prompt to a named set of members and gather the replies.

    model.py     Member, Broadcast, Group, MemberResult, GroupResult and the envelope text
    log.py       the append-only `.rooms/groups/<name>.jsonl` and its replay
    roster.py    spawn, spawn-mixed, move-member, rename, dissolve, list
    broadcasts.py broadcast, reply, cancel (one broadcast in flight)
    gather.py    wait-all / wait-any: runs model-backed members concurrently, polls for the rest
    reducers.py  concat, join_by_handle, last_wins, majority_vote, rank and custom reducers
    rank.py      the ballots of the `rank` reducer (each member ranks the others' anonymised replies)
    votes.py     the options of a vote and reading a reply as one (the `majority_vote` reducer)
    presets.py   groups.presets / overlays / groups.defaults
    doctor.py    `rooms doctor` findings about merged clones (duplicate creations, double renames…)
    status.py    member states and the `▣ name [busy/total state]` label
    api.py       the public Python workflow API (re-exported by `rooms_cli`)
"""
