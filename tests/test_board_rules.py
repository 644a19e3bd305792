"""The rules of board.md through the Python API: transitions, leases, fencing, expiry, records, proposals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooms_cli.board import claims, proposals, store, tasks
from rooms_cli.board.errors import (
    AlreadyClaimed,
    InvalidTransition,
    LeaseExpired,
    LeaseFenced,
    LeaseMismatch,
    NotOwner,
)
from rooms_cli.board.render import board_markdown, board_view
from rooms_cli.board.tick import expire_leases
from rooms_cli.board.transitions import TRANSITIONS
from rooms_cli.core.errors import Conflict, InvalidInput, NotFound

ROOM = "default"
T0 = "2026-11-21T09:00:00.000Z"


@pytest.fixture
def at(monkeypatch):
    """Set the clock: at("2026-11-21T09:11:00Z")."""

    def set_clock(moment: str) -> None:
        monkeypatch.setenv("ROOMS_NOW", moment)

    set_clock(T0)
    return set_clock


def add(project, title="Write the spec", lane="researcher", **kw):
    return tasks.add_task(project, ROOM, title, lane=lane, done=kw.pop("done", "specs/auth.md exists"), by="alice", **kw)


def status_of(project, task_id):
    return tasks.load_task(project, ROOM, task_id).status


# --- creating ---------------------------------------------------------------------------------

def test_add_requires_a_definition_of_done(project):
    with pytest.raises(InvalidInput, match="definition of done"):
        tasks.add_task(project, ROOM, "x", lane="researcher", done="  ", by="alice")


def test_add_appends_to_the_end_of_the_lane_by_default(project):
    first, second = add(project, "a"), add(project, "b")
    assert (first.order, second.order) == (1, 2)


def test_task_in_a_room_that_does_not_exist_is_refused(project):
    with pytest.raises(NotFound, match="no room"):
        tasks.add_task(project, "nope", "x", lane="researcher", done="d", by="alice")


def test_title_must_be_one_line(project):
    with pytest.raises(InvalidInput, match="one line"):
        add(project, "two\nlines")


def test_lane_with_path_characters_is_refused(project):
    with pytest.raises(InvalidInput):
        add(project, lane="../etc")


def test_any_unique_prefix_finds_a_task(project):
    task = add(project)
    assert tasks.load_task(project, ROOM, task.id[:14].lower()).id == task.id


def test_update_changes_fields_and_keeps_history(project):
    task = add(project)
    tasks.update_task(project, ROOM, task.id, by="alice", title="New title", order=7)
    again = tasks.load_task(project, ROOM, task.id)
    assert (again.title, again.order) == ("New title", 7)
    assert [e["ev"] for e in tasks.task_history(project, ROOM, task.id)] == ["create", "update"]


def test_archived_task_leaves_the_board_but_stays_in_the_files(project):
    task = add(project)
    tasks.archive_task(project, ROOM, task.id, by="alice")
    assert board_view(project, ROOM)["counts"]["todo"] == 0
    assert tasks.load_task(project, ROOM, task.id).archived
    with pytest.raises(InvalidTransition, match="archived"):
        claims.claim_task(project, ROOM, task.id, agent="researcher")


# --- claims and leases --------------------------------------------------------------------------

def test_claim_moves_todo_to_doing_with_a_ten_minute_lease(project, at):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    assert claim.task.status == "doing" and status_of(project, task.id) == "doing"
    assert claim.lease.expires_at == "2026-11-21T09:10:00.000Z"
    assert claim.lease.lease_id.startswith("l-") and claim.lease.fence == 1


def test_claim_takes_a_custom_lease_length(project, at):
    claim = claims.claim_task(project, ROOM, add(project).id, agent="researcher", lease="15m")
    assert claim.lease.expires_at == "2026-11-21T09:15:00.000Z"


def test_second_claim_is_already_claimed_naming_holder_and_expiry(project, at):
    task = add(project)
    claims.claim_task(project, ROOM, task.id, agent="researcher", plate="researcher/1")
    with pytest.raises(AlreadyClaimed) as err:
        claims.claim_task(project, ROOM, task.id, agent="researcher", plate="researcher/2")
    assert "researcher/1" in str(err.value) and "2026-11-21T09:10:00.000Z" in str(err.value)
    assert err.value.exit_code == 3 and err.value.code == "already_claimed"


def test_lapsed_lease_reads_as_todo_and_can_be_claimed_again(project, at):
    task = add(project)
    first = claims.claim_task(project, ROOM, task.id, agent="researcher")
    at("2026-11-21T09:10:00.000Z")
    seen = tasks.load_task(project, ROOM, task.id)
    assert seen.status == "todo" and seen.lapsed_lease.lease_id == first.lease.lease_id
    second = claims.claim_task(project, ROOM, task.id, agent="researcher")
    assert second.lease.fence == 2


def test_renew_extends_from_now(project, at):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    at("2026-11-21T09:08:00.000Z")
    renewed = claims.renew_lease(project, ROOM, task.id, claim.lease.lease_id, lease="10m")
    assert renewed.lease.expires_at == "2026-11-21T09:18:00.000Z"
    at("2026-11-21T09:15:00.000Z")
    assert status_of(project, task.id) == "doing"


def test_release_returns_the_task_to_its_lane(project, at):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    assert claims.release_task(project, ROOM, task.id, claim.lease.lease_id).status == "todo"
    with pytest.raises(LeaseMismatch):
        claims.renew_lease(project, ROOM, task.id, claim.lease.lease_id)


def test_wrong_lease_id_is_lease_mismatch(project, at):
    task = add(project)
    claims.claim_task(project, ROOM, task.id, agent="researcher")
    with pytest.raises(LeaseMismatch, match="held by"):
        claims.renew_lease(project, ROOM, task.id, "l-01NOTALEASE")


def test_lapsed_lease_id_is_lease_expired(project, at):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    at("2026-11-21T09:30:00.000Z")
    for write in (
        lambda: claims.renew_lease(project, ROOM, task.id, claim.lease.lease_id),
        lambda: claims.release_task(project, ROOM, task.id, claim.lease.lease_id),
        lambda: claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary="x"),
    ):
        with pytest.raises(LeaseExpired, match="expired at 2026-11-21T09:10:00.000Z"):
            write()


def test_missing_lease_id_is_a_clear_error(project, at):
    task = add(project)
    claims.claim_task(project, ROOM, task.id, agent="researcher")
    with pytest.raises(InvalidInput, match="ROOMS_LEASE"):
        claims.release_task(project, ROOM, task.id, None)


# --- fencing --------------------------------------------------------------------------------------

def test_fence_grows_with_each_claim_of_a_task(project, at):
    task = add(project)
    fences = []
    for _ in range(3):
        claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
        fences.append(claim.lease.fence)
        claims.release_task(project, ROOM, task.id, claim.lease.lease_id)
    assert fences == [1, 2, 3]


def test_overtaken_lease_is_refused_even_when_its_clock_says_valid(project, at):
    task = add(project)
    old = claims.claim_task(project, ROOM, task.id, agent="researcher", plate="researcher/1")
    at("2026-11-21T09:20:00.000Z")
    new = claims.claim_task(project, ROOM, task.id, agent="researcher", plate="researcher/2")
    # the first holder's clock is behind: by its clock the lease is still valid
    at("2026-11-21T09:05:00.000Z")
    for write in (
        lambda: claims.renew_lease(project, ROOM, task.id, old.lease.lease_id),
        lambda: claims.finish_task(project, ROOM, task.id, old.lease.lease_id, summary="mine"),
        lambda: claims.release_task(project, ROOM, task.id, old.lease.lease_id),
        lambda: claims.set_status(project, ROOM, task.id, "blocked", by="researcher", lease_id=old.lease.lease_id),
    ):
        with pytest.raises(LeaseFenced, match="fence 2") as err:
            write()
        assert err.value.exit_code == 3
    at("2026-11-21T09:21:00.000Z")
    done = claims.finish_task(project, ROOM, task.id, new.lease.lease_id, summary="theirs")
    assert done.record["plate"] == "researcher/2"


# --- transitions ---------------------------------------------------------------------------------

def _task_in(project, status, at):
    """A task brought to `status` through the public API."""
    task = add(project)
    if status == "todo":
        return task
    if status in ("doing", "done"):
        claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
        if status == "done":
            claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary="ok")
        return task
    claims.set_status(project, ROOM, task.id, status, by="alice")
    return task


@pytest.mark.parametrize(
    ("start", "target"),
    [(s, t) for s in ("todo", "blocked", "failed", "done", "cancelled") for t in ("todo", "blocked", "failed", "cancelled") if s != t],
)
def test_set_status_allows_exactly_the_transitions_of_the_table(project, at, start, target):
    task = _task_in(project, start, at)
    if target in TRANSITIONS[start]:
        assert claims.set_status(project, ROOM, task.id, target, by="alice").status == target
    else:
        with pytest.raises(InvalidTransition) as err:
            claims.set_status(project, ROOM, task.id, target, by="alice")
        assert err.value.exit_code == 3
        assert (", ".join(TRANSITIONS[start]) or "final") in str(err.value)
        assert status_of(project, task.id) == start


@pytest.mark.parametrize("start", ["blocked", "failed", "done", "cancelled"])
def test_claiming_a_task_that_is_not_todo_is_invalid_transition(project, at, start):
    task = _task_in(project, start, at)
    with pytest.raises(InvalidTransition, match=f"from {start} to doing"):
        claims.claim_task(project, ROOM, task.id, agent="researcher")


@pytest.mark.parametrize("target", ["todo", "blocked", "failed", "cancelled"])
def test_holder_sets_status_of_a_claimed_task_with_its_lease(project, at, target):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    with pytest.raises(AlreadyClaimed):
        claims.set_status(project, ROOM, task.id, target, by="alice")
    moved = claims.set_status(project, ROOM, task.id, target, by="researcher", lease_id=claim.lease.lease_id,
                              summary="stuck on keys")
    assert moved.status == target and moved.lease is None
    assert moved.record["summary"] == "stuck on keys"


def test_set_status_refuses_doing_and_done(project, at):
    task = add(project)
    for target in ("doing", "done", "archived"):
        with pytest.raises(InvalidInput, match="set-status takes"):
            claims.set_status(project, ROOM, task.id, target, by="alice")


def test_failed_task_can_be_retried(project, at):
    task = _task_in(project, "failed", at)
    claims.set_status(project, ROOM, task.id, "todo", by="alice")
    assert claims.claim_task(project, ROOM, task.id, agent="researcher").task.status == "doing"


# --- next ---------------------------------------------------------------------------------------

def test_next_claims_the_first_todo_by_order_in_the_agents_lane(project, at):
    late = add(project, "late", order=5)
    early = add(project, "early", order=2)
    add(project, "other lane", lane="reviewer", order=1)
    blocked = add(project, "blocked", order=1)
    claims.set_status(project, ROOM, blocked.id, "blocked", by="alice")
    assert claims.next_task(project, ROOM, agent="researcher").task.id == early.id
    assert claims.next_task(project, ROOM, agent="researcher").task.id == late.id
    assert claims.next_task(project, ROOM, agent="researcher") is None


def test_next_picks_up_a_task_whose_lease_lapsed(project, at):
    task = add(project)
    claims.claim_task(project, ROOM, task.id, agent="researcher")
    assert claims.next_task(project, ROOM, agent="researcher") is None
    at("2026-11-21T09:11:00.000Z")
    assert claims.next_task(project, ROOM, agent="researcher").task.id == task.id


# --- tick ---------------------------------------------------------------------------------------

def test_tick_records_each_lapsed_lease_once(project, at):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    assert expire_leases(project, None, False) == []
    at("2026-11-21T09:12:00.000Z")
    assert [a["task_id"] for a in expire_leases(project, None, True)] == [task.id]
    assert "expire" not in [e["ev"] for e in tasks.task_history(project, ROOM, task.id)]
    actions = expire_leases(project, None, False)
    assert len(actions) == 1 and actions[0]["action"] == "expire" and claim.lease.lease_id in actions[0]["detail"]
    assert expire_leases(project, None, False) == []
    assert [e["ev"] for e in tasks.task_history(project, ROOM, task.id)][-1] == "expire"
    with pytest.raises(LeaseExpired):
        claims.renew_lease(project, ROOM, task.id, claim.lease.lease_id)


def test_rooms_tick_runs_the_board_step(project, at, cli):
    add(project)
    claims.claim_task(project, ROOM, tasks.load_board(project, ROOM)[0].id, agent="researcher")
    at("2026-11-21T10:00:00.000Z")
    result = cli("tick", "--json")
    assert result.exit_code == 0, result.stderr
    assert len(result.json()["steps"]["leases"]) == 1


# --- records ------------------------------------------------------------------------------------

def test_done_writes_the_compact_record(project, at):
    from rooms_cli.chat.transcript import append_message

    (Path(project.root) / "specs").mkdir()
    (Path(project.root) / "specs" / "auth.md").write_text("spec")
    msg = append_message(project, ROOM, "alice", "tokens live 15 minutes")
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher", plate="researcher/7")
    done = claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary="spec written",
                              artifacts=["file:specs/auth.md", f"msg:{msg.id[:12]}"], next_step="review it",
                              result_ref="file:./specs/../specs/auth.md")
    assert done.record == {
        "task_id": task.id, "plate": "researcher/7", "status": "done", "summary": "spec written",
        "artifacts": ["file:specs/auth.md", f"msg:{msg.id}"], "next": "review it", "result_ref": "file:specs/auth.md",
    }
    assert done.status == "done" and done.lease is None


def test_an_unknown_message_reference_names_the_rooms_transcript_in_plain_words(project, at):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    with pytest.raises(NotFound) as err:
        claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary="x", artifacts=["msg:m-01NOSUCH"])
    assert err.value.message == f"artifact msg:m-01NOSUCH is not a message in the transcript of room {ROOM!r} nor of any other room"


@pytest.mark.parametrize(
    ("ref", "error"),
    [
        ("file:missing.md", NotFound),
        ("file:../outside.txt", InvalidInput),
        ("file:/etc/passwd", InvalidInput),
        ("msg:m-01NOSUCHMESSAGE", NotFound),
        ("http://example.com", InvalidInput),
        ("specs/auth.md", InvalidInput),
        ("file:", InvalidInput),
    ],
)
def test_bad_references_are_refused_and_nothing_is_written(project, at, ref, error):
    (Path(project.root).parent / "outside.txt").write_text("x")
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    before = tasks.task_history(project, ROOM, task.id)
    with pytest.raises(error):
        claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary="x", result_ref=ref)
    with pytest.raises(error):
        claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary="x", artifacts=[ref])
    assert tasks.task_history(project, ROOM, task.id) == before


def test_symlink_escaping_the_project_is_refused(project, at):
    (Path(project.root).parent / "secret.txt").write_text("x")
    (Path(project.root) / "link.txt").symlink_to(Path(project.root).parent / "secret.txt")
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    with pytest.raises(InvalidInput, match="outside the project"):
        claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary="x", result_ref="file:link.txt")


@pytest.mark.parametrize("summary", ["", "two\nlines", "x" * 281])
def test_summary_is_one_short_line(project, at, summary):
    task = add(project)
    claim = claims.claim_task(project, ROOM, task.id, agent="researcher")
    with pytest.raises(InvalidInput):
        claims.finish_task(project, ROOM, task.id, claim.lease.lease_id, summary=summary)


# --- proposals ----------------------------------------------------------------------------------

@pytest.fixture
def owned(project):
    """bob-bot is owned by bob; alice-bot by alice; free-bot has no owner."""
    for agent, owner in (("bob-bot", "bob"), ("alice-bot", "alice"), ("free-bot", None)):
        head = f"owner: {owner}\n" if owner else ""
        Path(project.path("agents", f"{agent}.md")).write_text(f"---\nid: {agent}\n{head}---\nYou help.\n")
    return project


def test_assign_within_one_owner_moves_the_task(owned, at):
    task = add(owned, lane="alice-bot")
    moved = proposals.assign_task(owned, ROOM, task.id, to="researcher", by="alice")
    assert (moved.lane, moved.pending) == ("researcher", None)
    assert proposals.assign_task(owned, ROOM, task.id, to="free-bot", by="alice").pending is None


def test_cross_owner_assign_is_pending_and_not_claimable_until_accepted(owned, at):
    task = add(owned, lane="alice-bot")
    proposed = proposals.assign_task(owned, ROOM, task.id, to="bob-bot", by="alice")
    assert proposed.lane == "bob-bot" and proposed.pending["owner"] == "bob" and proposed.pending["from"] == "alice-bot"
    assert board_view(owned, ROOM, status="pending")["lanes"][0]["tasks"][0]["id"] == task.id
    with pytest.raises(InvalidTransition, match="pending"):
        claims.claim_task(owned, ROOM, task.id, agent="bob-bot")
    assert claims.next_task(owned, ROOM, agent="bob-bot") is None
    with pytest.raises(NotOwner):
        proposals.answer_proposal(owned, ROOM, task.id, by="alice", accept=True)
    accepted = proposals.answer_proposal(owned, ROOM, task.id, by="bob", accept=True)
    assert accepted.pending is None and accepted.lane == "bob-bot"
    assert claims.next_task(owned, ROOM, agent="bob-bot").task.id == task.id


def test_an_agent_assigning_to_another_owner_also_proposes(owned, at):
    task = add(owned, lane="alice-bot")
    assert proposals.assign_task(owned, ROOM, task.id, to="bob", by="alice-bot").pending["owner"] == "bob"


def test_reject_leaves_the_task_where_it_was(owned, at):
    task = add(owned, lane="alice-bot")
    proposals.assign_task(owned, ROOM, task.id, to="bob-bot", by="alice")
    rejected = proposals.answer_proposal(owned, ROOM, task.id, by="bob", accept=False)
    assert (rejected.lane, rejected.pending, rejected.status) == ("alice-bot", None, "todo")
    assert claims.next_task(owned, ROOM, agent="alice-bot").task.id == task.id


def test_accept_without_a_proposal_is_refused(owned, at):
    task = add(owned, lane="alice-bot")
    with pytest.raises(InvalidTransition, match="no pending proposal"):
        proposals.answer_proposal(owned, ROOM, task.id, by="alice", accept=True)


def test_claimed_task_cannot_be_reassigned(owned, at):
    task = add(owned, lane="alice-bot")
    claims.claim_task(owned, ROOM, task.id, agent="alice-bot")
    with pytest.raises(AlreadyClaimed):
        proposals.assign_task(owned, ROOM, task.id, to="researcher", by="alice")


# --- reading ------------------------------------------------------------------------------------

def test_board_groups_open_tasks_by_lane_then_the_done_view(project, at):
    a = add(project, "a", lane="researcher")
    add(project, "b", lane="reviewer")
    claim = claims.claim_task(project, ROOM, a.id, agent="researcher")
    claims.finish_task(project, ROOM, a.id, claim.lease.lease_id, summary="did a")
    view = board_view(project, ROOM)
    assert [lane["lane"] for lane in view["lanes"]] == ["reviewer"]
    assert [t["id"] for t in view["done"]] == [a.id]
    assert view["counts"]["done"] == 1 and view["counts"]["todo"] == 1
    assert board_view(project, ROOM, lane="researcher")["lanes"] == []
    with pytest.raises(InvalidInput):
        board_view(project, ROOM, status="bogus")


def test_markdown_board_is_compact_and_names_holders_and_records(project, at):
    assert board_markdown(project, ROOM) == ""
    a = add(project, "Write the spec")
    b = add(project, "Review", lane="reviewer", done="approved")
    claims.claim_task(project, ROOM, b.id, agent="reviewer", plate="reviewer/1")
    claim = claims.claim_task(project, ROOM, a.id, agent="researcher")
    claims.finish_task(project, ROOM, a.id, claim.lease.lease_id, summary="spec written")
    md = board_markdown(project, ROOM)
    assert md.startswith("## Board of room default (1 doing · 1 done)")
    assert "### reviewer" in md and "held by reviewer/1 until 2026-11-21T09:10:00.000Z" in md
    assert "### done" in md and "spec written" in md
    assert len(md) < 600


def test_markdown_board_stays_short_on_a_long_lane(project, at):
    for n in range(25):
        add(project, f"task {n}", order=n)
    claims.claim_task(project, ROOM, tasks.load_board(project, ROOM)[20].id, agent="researcher")
    md = board_markdown(project, ROOM)
    assert md.count("- todo ") == 10 and md.count("- doing ") == 1
    assert "… and 14 more todo (rooms board --lane researcher)" in md


def test_event_lines_have_sorted_keys(project, at):
    task = add(project)
    claims.claim_task(project, ROOM, task.id, agent="researcher")
    for line in Path(store.task_path(project, ROOM, task.id)).read_text().splitlines():
        record = json.loads(line)
        assert list(record) == sorted(record)


def test_board_cache_never_serves_stale_state(project, at):
    ids = [add(project, f"t{n}").id for n in range(12)]
    assert board_view(project, ROOM)["counts"]["todo"] == 12
    cache = Path(project.path("run", "board", "default.open.json"))
    assert cache.exists(), "the board reads through its open index (board/openindex.py)"
    claims.claim_task(project, ROOM, ids[3], agent="researcher")
    assert board_view(project, ROOM)["counts"]["doing"] == 1
    tasks.update_task(project, ROOM, ids[4], by="alice", title="renamed")
    assert [t.title for t in tasks.load_board(project, ROOM) if t.id == ids[4]] == ["renamed"]
    cache.write_text("{not json")
    assert board_view(project, ROOM)["counts"] == {**board_view(project, ROOM)["counts"], "doing": 1, "todo": 11}


def test_errors_are_conflicts_with_exit_code_3(project):
    for err in (AlreadyClaimed, LeaseMismatch, LeaseExpired, LeaseFenced, InvalidTransition):
        assert issubclass(err, Conflict) and err("x").exit_code == 3
    codes = {e.code for e in (AlreadyClaimed, LeaseMismatch, LeaseExpired, LeaseFenced, InvalidTransition)}
    assert codes == {"already_claimed", "lease_mismatch", "lease_expired", "lease_fenced", "invalid_transition"}


def test_doctor_reports_lapsed_leases_until_tick_records_them(project, at, cli):
    task = add(project)
    claims.claim_task(project, ROOM, task.id, agent="researcher")
    at("2026-11-21T10:00:00.000Z")
    found = [f for f in cli("doctor", "--json").json()["findings"] if f["check"] == "board"]
    assert len(found) == 1 and "lapsed" in found[0]["message"] and found[0]["fix"].startswith("rooms tick")
    expire_leases(project, None, False)
    assert not [f for f in cli("doctor", "--json").json()["findings"] if f["check"] == "board"]


def test_next_moves_on_past_a_task_another_process_is_claiming(project, at):
    first, second = add(project, "first"), add(project, "second")
    with store.task_lock(project, ROOM, first.id):  # someone is mid-claim on the first task
        claim = claims.next_task(project, ROOM, agent="researcher")
    assert claim.task.id == second.id
    assert claims.next_task(project, ROOM, agent="researcher").task.id == first.id


def test_short_ids_are_the_shortest_unique_prefixes():
    from rooms_cli.board.render import short_ids

    ids = ["t-01AAAAAAAAX1", "t-01AAAAAAAAX2", "t-01AAAAAAAAY1", "t-01BBBBBBBBB1"]
    assert short_ids(ids) == {
        "t-01AAAAAAAAX1": "t-01AAAAAAAAX1", "t-01AAAAAAAAX2": "t-01AAAAAAAAX2",
        "t-01AAAAAAAAY1": "t-01AAAAAAAAY", "t-01BBBBBBBBB1": "t-01BBBBBBBB",
    }
