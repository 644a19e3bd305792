"""Property tests: task records round-trip, and replay survives any event a merge or a person can leave."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.board.model import Lease, Task
from rooms_cli.board.replay import replay

names = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
times = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.000Z"))
text = st.text(max_size=30)

leases = st.builds(
    Lease, lease_id=st.from_regex(r"l-[0-9A-Z]{6}", fullmatch=True), fence=st.integers(1, 99), holder=names,
    plate=text, claimed_at=times, expires_at=times,
)
task_records = st.builds(
    Task, id=st.from_regex(r"t-[0-9A-Z]{26}", fullmatch=True), room=names, lane=names, title=text,
    definition_of_done=text, detail=text, order=st.integers(-5, 1000), status=st.sampled_from(["todo", "doing", "done"]),
    lease=st.none() | leases, lapsed_lease=st.none() | leases, fence=st.integers(0, 99),
    pending=st.none() | st.fixed_dictionaries({"from": names, "to": names, "owner": names}),
    record=st.none() | st.fixed_dictionaries({"summary": text}), archived=st.booleans(), created_at=times,
)


@given(task_records)
def test_task_json_round_trips(task):
    assert Task.from_json(task.to_json()).to_json() == task.to_json()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
events = st.fixed_dictionaries(
    {"ev": st.sampled_from(["create", "claim", "renew", "release", "done", "expire", "status", "update", "assign",
                            "accept", "reject", "archive", "resolve", "bogus"])},
    optional={
        "at": times | json_values, "lease_id": st.sampled_from(["l-A", "l-B"]) | json_values,
        "fence": st.integers(0, 3) | json_values, "expires_at": times | json_values,
        "status": st.sampled_from(["todo", "blocked", "done"]) | json_values, "changes": json_values,
        "pending": json_values, "to": json_values, "record": json_values, "lane": json_values, "title": json_values,
        "order": json_values,
    },
)


@settings(max_examples=120, deadline=None)
@given(st.lists(events, max_size=12))
def test_replay_never_fails_on_any_event_sequence(log):
    task = replay("t-X", "default", log, "2026-11-21T09:00:00.000Z")
    assert task.status in ("todo", "doing", "done", "blocked", "failed", "cancelled")
    assert (task.status == "doing") == (task.lease is not None)
    Task.from_json(task.to_json())


@settings(max_examples=80, deadline=None)
@given(ref=st.text(max_size=40) | st.builds(
    lambda head, tail: head + tail,
    st.sampled_from(["file:", "file:./", "file:../", "file:.rooms/", "file:/", "msg:", "msg:m-"]),
    st.text(alphabet="./abr-", max_size=14),
))
def test_a_reference_is_file_or_msg_or_refused(tmp_path_factory, ref):
    import pytest

    from rooms_cli.board.records import validate_ref
    from rooms_cli.core.errors import InvalidInput, NotFound
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    root = tmp_path_factory.mktemp("refs")
    initialize(root)
    project = open_project(root)
    try:
        normalized = validate_ref(project, "default", ref)
    except (InvalidInput, NotFound):
        return
    # accepted: it names something that exists inside the project
    kind, _, target = normalized.partition(":")
    assert kind == "file", "the room has no messages, so no msg: reference can be valid"
    full = (root / target).resolve()
    assert full.exists() and root.resolve() in full.parents
    with pytest.raises((InvalidInput, NotFound)):
        validate_ref(project, "default", "file:../" + root.name + "-elsewhere")
