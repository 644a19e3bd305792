"""`rooms sync`, round two (issues 41 and 46), with real git: each scenario as it was found.

- a `--sync` write counts once the remote holds it, whoever pushes it (a plain `rooms sync` of the
  same clone, a killed `task next --sync`), and is answered (withdrawn, voided) when it lost;
- git rewriting a log (rebase, pull, stash) never makes sync push a partial or a repeated line;
- a file missing here is not a deletion; hostile content on the ref never reaches `.rooms/`;
- the ref's history stays bounded; errors keep git's reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from gitclones import HAVE_GIT, GitClones

from tests.conftest import rooms_env

pytestmark = pytest.mark.skipif(not HAVE_GIT, reason="needs git")


def world(tmp_path, count=2):
    w = GitClones(tmp_path, example="dev")
    return w, [w.clone(name) for name in "abcdefg"[:count]]


def add_task(clone, title="t") -> str:
    return clone.rooms("task", "add", title, "--lane", "dev", "--done", "d", as_="alice")["id"]


def shown(clone, task: str) -> dict:
    return clone.rooms("task", "show", task)


def remote_lines(w, rel: str) -> list[bytes]:
    """Every line of the log `rel` (under .rooms) on origin's refs/rooms/state."""
    from rooms_cli.store.sync.engine import log_dir

    listing = w.git(w.origin, "ls-tree", "-r", "--name-only", "refs/rooms/state", "--", log_dir(rel) + "/").stdout.split()
    lines: list[bytes] = []
    for path in listing:
        data = subprocess.run(["git", "cat-file", "blob", f"refs/rooms/state:{path}"], cwd=w.origin,
                              capture_output=True, check=True).stdout
        lines += [line for line in data.splitlines() if line.strip()]
    return lines


def inbox_texts(clone, agent="dev") -> list[str]:
    return [m["text"] for m in clone.rooms("inbox", "--peek", as_=agent)["messages"]]


def inbox_rel(agent="dev") -> str:
    return f"inbox/{agent}.jsonl"


# --- claims: the remote decides, whoever pushes ---------------------------------------------------------


def test_a_pending_claim_pushed_by_a_plain_sync_of_its_clone_is_withdrawn_when_another_clone_was_first(tmp_path):
    """Issue 46: a claim still waiting for its check was pushed by another sync of the same clone, and
    both workers were told the task was theirs."""
    from syncrace import claim_left_waiting

    from rooms_cli.across.sync import syncing
    from rooms_cli.board import claims
    from rooms_cli.store.paths import open_project

    w, (a, b) = world(tmp_path)
    task = add_task(a)
    a.rooms("sync")
    b.rooms("sync")
    won = a.rooms("task", "claim", task, "--sync", as_="dev")
    # b's worker claimed on its old view and is still waiting for its check ...
    mine = claim_left_waiting(b.path, task)
    # ... when a plain `rooms sync` of b (cron's tick, another worker) pushes b's log
    b.rooms("sync")
    assert claims.confirm_claim(open_project(b.path), "default", mine, syncing(None)) is not None
    a.rooms("sync")
    for clone in (a, b):
        task_now = shown(clone, task)
        assert task_now["lease"]["lease_id"] == won["lease_id"] and task_now["conflicts"] == []
        assert [e["lease_id"] for e in task_now["withdrawn"]] == [mine.lease.lease_id]


def test_a_claim_left_by_a_killed_task_next_is_settled_by_the_next_sync(tmp_path):
    """A `task next --sync` SIGKILLed after its claim here, before its check: whichever sync of the clone
    pushes that claim checks it first (here a plain `rooms sync`), so it never stands beside the claim
    another clone got to the remote."""
    import socket
    import threading

    w, (a, b) = world(tmp_path)
    task = add_task(a)
    a.rooms("sync")
    b.rooms("sync")
    # a remote that accepts and never answers: b's check hangs until the process is killed
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True).start()
    b.git("remote", "set-url", "origin", f"git://127.0.0.1:{silent.getsockname()[1]}/origin.git")
    proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "task", "next", "--sync", "--json"], cwd=b.path,
                            env=rooms_env(b.env(as_="dev")), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log = b.path / ".rooms" / "rooms" / "default" / "board" / "tasks" / f"{task.lower()}.jsonl"
    deadline = time.monotonic() + 60
    while b'"ev": "claim"' not in log.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # in its sync, waiting for the remote
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    silent.close()
    b.git("remote", "set-url", "origin", str(w.origin))
    won = a.rooms("task", "claim", task, "--sync", as_="dev")
    b.rooms("sync")
    a.rooms("sync")
    for clone in (a, b):
        now = shown(clone, task)
        assert now["lease"]["lease_id"] == won["lease_id"] and now["conflicts"] == [], now
        assert len(now["withdrawn"]) == 1


def test_a_claim_another_clone_reached_first_is_answered_already_claimed_and_next_moves_on(tmp_path):
    w, (a, b) = world(tmp_path)
    first, second = add_task(a, "first"), add_task(a, "second")
    a.rooms("sync")
    b.rooms("sync")
    won = a.rooms("task", "next", "--sync", as_="dev")
    assert won["task"]["id"] == first
    # b has not synced since: its next tries `first` on its old view, loses it at the remote, takes `second`
    got = b.rooms("task", "next", "--sync", as_="dev")
    assert got["task"]["id"] == second
    a.rooms("sync")
    refused = a.rooms("task", "claim", second, "--sync", as_="dev", code=3)["error"]
    assert refused["code"] == "already_claimed"
    for clone in (a, b):
        clone.rooms("sync")
        listed = {t["id"]: t for t in clone.rooms("task", "list")}
        assert listed[first]["lease"]["lease_id"] == won["lease_id"]
        assert listed[second]["lease"]["lease_id"] == got["lease_id"]
        assert all(not t["conflicts"] for t in listed.values())


def test_renew_and_done_with_sync_under_an_overtaken_lease_are_voided_everywhere_and_exit_3(tmp_path):
    """a's lease lapsed and b took the task at the remote; a, not knowing, renews: the remote does not
    take it (exit 3, voided on every clone, no conflict), and a's done after that is refused too."""
    w, (a, b) = world(tmp_path)
    task = add_task(a)
    a.rooms("sync")
    b.rooms("sync")
    t0 = "2030-01-01T10:00:00Z"
    held = a.rooms("task", "claim", task, "--sync", "--lease", "10m", as_="dev", now=t0)
    b.rooms("sync", now="2030-01-01T10:01:00Z")
    taken = b.rooms("task", "claim", task, "--sync", as_="dev", now="2030-01-01T10:11:00Z")  # a's lease lapsed
    renew = a.rooms("task", "renew", task, "--lease-id", held["lease_id"], "--sync", as_="dev",
                    now="2030-01-01T10:05:00Z", code=3)["error"]
    assert renew["code"] == "lease_mismatch" and "not made" in renew["message"]
    for clone in (a, b):
        clone.rooms("sync", now="2030-01-01T10:12:00Z")
        now = clone.rooms("task", "show", task, now="2030-01-01T10:12:00Z")
        assert now["lease"]["lease_id"] == taken["lease_id"] and now["conflicts"] == []
        assert [e["ev"] for e in now["history"]].count("void") == 1


def test_renew_release_and_done_with_sync_and_an_unreachable_remote_are_not_made(tmp_path):
    w, (a,) = world(tmp_path, 1)
    task = add_task(a)
    held = a.rooms("task", "claim", task, "--sync", as_="dev")
    a.git("remote", "set-url", "origin", str(tmp_path / "gone.git"))
    for args in (("renew", task, "--lease", "1h"), ("release", task),
                 ("done", task, "--summary", "finished")):
        err = a.rooms("task", *args, "--lease-id", held["lease_id"], "--sync", as_="dev", code=1)["error"]
        assert err["code"] == "remote_unreachable"
        now = shown(a, task)
        assert now["status"] == "doing" and now["lease"]["expires_at"] == held["expires_at"] and not now["conflicts"]
    a.git("remote", "set-url", "origin", str(w.origin))
    done = a.rooms("task", "done", task, "--lease-id", held["lease_id"], "--summary", "finished", "--sync", as_="dev")
    assert done["summary"] == "finished" and shown(a, task)["status"] == "done"


def test_mcp_task_done_is_pushed_when_sync_claims_is_true(tmp_path):
    from rooms_cli.mcp_server.tools import TOOLS, Session
    from rooms_cli.project.config import load_config
    from rooms_cli.store.paths import open_project

    w, (a, b) = world(tmp_path)
    with open(a.path / ".rooms.yaml", "a") as fh:
        fh.write("\nsync: {remote: origin, claims: true}\n")
    task = add_task(a)
    project = open_project(a.path)
    session = Session(project=project, config=load_config(project), me="dev", default_room="default")
    claim = TOOLS["task_next"].fn(session)
    TOOLS["task_done"].fn(session, task_id=task, summary="finished", lease_id=claim.lease.lease_id)
    b.rooms("sync")
    assert shown(b, task)["status"] == "done", "the done went to the remote with the tool call"


# --- 1. a log git rewrote ----------------------------------------------------------------------------


def test_a_log_rewritten_in_place_with_its_old_inode_is_read_again_whole(tmp_path):
    """After `git pull --rebase` ext4 may give the rewritten log its old inode: sync read it from the old
    offset and pushed half a line; every clone warned `line 4 is not valid JSON`, and the teammate's
    line never reached sync-only clones."""
    w, (a, b, c) = world(tmp_path, 3)
    for text in ("one", "two"):
        a.rooms("send", text, "--to", "dev", as_="carol")
    a.rooms("sync")
    log = a.path / ".rooms" / inbox_rel()
    ours = log.read_bytes()
    teammate = b.run("send", "from a teammate's commit", "--to", "dev", "--json", as_="erin")
    assert teammate.exit_code == 0
    theirs = (b.path / ".rooms" / inbox_rel()).read_bytes()
    # what a rebase leaves: the teammate's line first, ours after; written over the same inode
    with open(log, "r+b") as fh:
        fh.write(theirs + ours)
        fh.truncate()
    a.rooms("send", "three", "--to", "dev", as_="carol")
    a.rooms("sync")
    c.rooms("sync")
    got = c.run("inbox", "--peek", "--json", as_="dev")
    assert "not valid JSON" not in got.stderr
    assert sorted(m["text"] for m in got.json()["messages"]) == ["from a teammate's commit", "one", "three", "two"]
    assert all(json.loads(line) for line in remote_lines(w, inbox_rel()))


def test_a_plain_git_pull_does_not_make_sync_push_the_lines_it_repeated(tmp_path):
    """Both clones commit .rooms/ and sync: a union merge of the two commits repeats lines both sides
    have; sync pushed them again (3 duplicate lines)."""
    w, (a, b) = world(tmp_path)
    a.rooms("send", "from a", "--to", "dev", as_="carol")
    b.rooms("send", "from b", "--to", "dev", as_="erin")
    a.rooms("sync")
    b.rooms("sync")
    a.rooms("sync")
    a.commit("a's rooms")
    a.push()
    b.pull()  # union merge: each side's lines were appended in a different order
    b.rooms("send", "after the pull", "--to", "dev", as_="erin")
    assert b.rooms("sync")["sent"] == 1
    on_remote = remote_lines(w, inbox_rel())
    assert len(on_remote) == len(set(on_remote)) == 3
    assert sorted(inbox_texts(b)) == ["after the pull", "from a", "from b"]


# --- a log sync makes here ----------------------------------------------------------------------------

# a sync in a process of its own that is SIGKILLed in the middle of its first write into .rooms/inbox/
_KILLED_MID_WRITE = """
import os, signal, sys
from rooms_cli.across.sync import sync
from rooms_cli.store.paths import open_project

write = os.write
def dying(fd, data):
    if "/.rooms/inbox/" in os.readlink(f"/proc/self/fd/{fd}"):
        write(fd, bytes(data)[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    return write(fd, data)
os.write = dying
sync(open_project(sys.argv[1]))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names a descriptor's file through /proc")
def test_a_sync_killed_while_writing_a_log_new_here_leaves_no_empty_or_partial_log(tmp_path):
    """The log was opened with O_CREAT and written after: a kill between left an empty or half-written
    log, whose name was taken (readers warned; the sync after it appended to a torn file). It is made
    aside and linked into place: a kill leaves at most a temp file, and the next sync makes it whole."""
    w, (a, b) = world(tmp_path)
    a.rooms("sync")
    b.rooms("sync")  # b has synced before: the inbox is new to it, not its first sync
    for text in ("one", "two", "three", "four"):
        a.rooms("send", text, "--to", "dev", as_="carol")
    a.rooms("sync")
    log = b.path / ".rooms" / inbox_rel()
    killed = subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(b.path)], env=rooms_env(b.env()),
                            capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not log.exists() or all(json.loads(line) for line in log.read_bytes().splitlines())
    b.rooms("sync")
    got = b.run("inbox", "--peek", "--json", as_="dev")
    assert "not valid JSON" not in got.stderr
    assert [m["text"] for m in got.json()["messages"]] == ["one", "two", "three", "four"]
    assert len(log.read_bytes().splitlines()) == 4


# --- 2. a missing file ---------------------------------------------------------------------------------


def test_checking_out_a_branch_from_before_init_and_syncing_deletes_nothing_anywhere(tmp_path):
    w, (a, b) = world(tmp_path)
    a.rooms("send", "hello", "--to", "dev", as_="carol")
    a.rooms("sync")
    b.rooms("sync")
    kept = sorted(p.name for p in (b.path / ".rooms" / "agents").iterdir())
    a.git("checkout", "-q", "--orphan", "before-init")  # what checking out a branch from before `rooms init` leaves
    a.git("rm", "-rfq", ".")
    (a.path / "README.md").write_text("before rooms\n")
    a.git("add", "README.md")
    a.git("commit", "-q", "-m", "before init")
    a.rooms("sync")
    b.rooms("sync")
    assert sorted(p.name for p in (b.path / ".rooms" / "agents").iterdir()) == kept
    assert (b.path / ".rooms" / ".gitattributes").exists() and (b.path / ".rooms" / ".gitignore").exists()
    assert not (a.path / ".rooms" / "agents").exists(), "nothing brought back on the old branch"
    a.git("checkout", "-q", "main")  # and nothing sync wrote is in the way back
    assert sorted(p.name for p in (a.path / ".rooms" / "agents").iterdir()) == kept
    assert inbox_texts(a) == ["hello"]


# --- 3. sync and committed .rooms/ ---------------------------------------------------------------------


def test_a_stash_holding_rooms_changes_refuses_the_sync_and_nothing_is_lost(tmp_path):
    """`git stash; rooms sync; git stash pop` failed, and the message written before the stash was gone."""
    w, (a, b) = world(tmp_path)
    a.rooms("send", "committed", "--to", "dev", as_="carol")
    a.rooms("sync")
    a.commit("rooms")
    b.rooms("send", "from b", "--to", "dev", as_="erin")
    b.rooms("sync")
    a.rooms("send", "written before the stash", "--to", "dev", as_="carol")
    a.git("stash", "-q")
    refused = a.rooms("sync", code=1)["error"]
    assert refused["code"] == "stash_holds_rooms" and "git stash pop" in refused["message"]
    a.git("stash", "pop", "-q")
    a.rooms("sync")
    b.rooms("sync")
    assert "written before the stash" in inbox_texts(b)
    assert sorted(inbox_texts(a)) == ["committed", "from b", "written before the stash"]


def test_committed_rooms_and_sync_together_commit_before_pull_and_every_line_counts_once(tmp_path):
    """The route docs/git.md gives for both: commit .rooms/ (what sync wrote too) before `git pull`."""
    w, (a, b) = world(tmp_path)
    task = add_task(a)
    a.rooms("send", "from a", "--to", "dev", as_="carol")
    a.rooms("sync")
    a.commit("a")
    a.push()
    b.rooms("sync")  # writes the task's log and the inbox here, untracked
    failed = b.git("pull", "-q", "--no-rebase", "origin", "main", check=False)
    assert failed.returncode != 0 and "untracked working tree files would be overwritten" in failed.stderr
    b.pull()  # commits first, then merges: the union driver takes both
    b.rooms("sync")
    assert inbox_texts(b) == ["from a"] and [t["id"] for t in b.rooms("task", "list")] == [task]
    assert b.rooms("sync")["sent"] == 0


# --- 4. what comes in is checked ----------------------------------------------------------------------


def _push_state_commit(w, clone, changes: dict[str, bytes]) -> None:
    """Someone pushes a commit of their own on top of origin's refs/rooms/state, changing `changes`
    (paths on the ref -> content)."""
    env = {"GIT_INDEX_FILE": str(clone.path / ".git" / "hostile-index")}
    run = lambda *args, data=None: subprocess.run(["git", *args], cwd=clone.path, input=data, capture_output=True,  # noqa: E731
                                                  check=True, env={**os.environ, **env, "GIT_AUTHOR_NAME": "x",
                                                                   "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
                                                                   "GIT_COMMITTER_EMAIL": "x@x"}).stdout
    run("fetch", "-q", "origin", "refs/rooms/state:refs/hostile")
    run("read-tree", "refs/hostile")
    for path, data in changes.items():
        blob = run("hash-object", "-w", "--stdin", data=data).decode().strip()
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = run("write-tree").decode().strip()
    commit = run("commit-tree", tree, "-p", "refs/hostile", "-m", "garbage").decode().strip()
    run("push", "-q", "origin", f"{commit}:refs/rooms/state")


def test_garbage_pushed_on_the_state_ref_is_quarantined_and_never_reaches_rooms(tmp_path):
    """A garbage commit was taken (exit 0, "3 lines in"): non-JSON lines in every inbox, an agent replaced."""
    from rooms_cli.store.sync.engine import file_path, log_dir

    w, (a, b, c) = world(tmp_path, 3)
    a.rooms("send", "real", "--to", "dev", as_="carol")
    a.rooms("sync")
    b.rooms("sync")
    agent = (b.path / ".rooms" / "agents" / "researcher.md").read_bytes()
    good = json.dumps({"from": "eve", "hlc": "2030-01-01T00:00:00.000Z-0000-000001", "id": "i-GOOD", "kind": "direct",
                       "n": 7, "text": "a good line in a bad chunk", "to": "dev", "ts": "2030-01-01T00:00:00Z"})
    _push_state_commit(w, a, {
        f"{log_dir(inbox_rel())}/9999999999999-00000000": f"not json at all\n{{\"broken\": \n{good}\n".encode(),
        file_path("agents/researcher.md"): b"---\nid: [unclosed\n---\n",
        "README.md": b"foreign\n",
    })
    synced = b.rooms("sync")
    assert synced["received"] == 1 and len(synced["quarantined"]) == 3
    assert sorted(inbox_texts(b)) == ["a good line in a bad chunk", "real"]
    assert (b.path / ".rooms" / "agents" / "researcher.md").read_bytes() == agent
    kept = (b.path / ".rooms" / "run" / "sync" / "quarantine" / "origin.jsonl").read_text()
    assert "not json at all" in kept and "id: [unclosed" in kept
    # b's push took the garbage off the ref: a clone syncing afresh reads it clean
    tree = w.git(w.origin, "ls-tree", "-r", "--name-only", "refs/rooms/state").stdout.split()
    assert "README.md" not in tree
    got = c.run("sync", "--json")
    assert got.exit_code == 0 and got.json()["quarantined"] == [] and "not valid JSON" not in got.stderr
    assert (c.path / ".rooms" / "agents" / "researcher.md").read_bytes() == agent
    assert sorted(inbox_texts(c)) == ["a good line in a bad chunk", "real"]


# --- 5. a branch force-pushed onto the ref ---------------------------------------------------------------


def test_a_branch_force_pushed_onto_the_ref_never_enters_the_state_tree(tmp_path):
    w, (a, b) = world(tmp_path)
    (a.path / "src").mkdir()
    (a.path / "src" / "app.py").write_text("print('hi')\n")
    (a.path / "README.md").write_text("the project\n")
    a.commit("code")
    a.rooms("send", "hello", "--to", "dev", as_="carol")
    a.rooms("sync")
    b.rooms("sync")
    a.git("push", "-q", "--force", "origin", "main:refs/rooms/state")
    err = b.rooms("sync", code=1)["error"]
    assert err["code"] == "remote_rewritten"
    (b.path / ".rooms" / "run" / "sync" / "origin.json").unlink()  # the documented recovery
    b.rooms("sync")
    a.rooms("sync")  # a state commit again: the other clones follow without the recovery
    tops = set(w.git(w.origin, "ls-tree", "--name-only", "refs/rooms/state").stdout.split())
    assert tops == {"format", "log", "file"}, "no README.md, no src/"
    history = w.git(w.origin, "log", "--format=%s", "refs/rooms/state").stdout.splitlines()
    assert "code" not in history and "seed" not in history, "the branch's history is not the state's"
    assert inbox_texts(a) == inbox_texts(b) == ["hello"]


# --- 6. the ref stays small -----------------------------------------------------------------------------


def test_the_refs_history_and_a_hot_logs_chunks_stay_bounded(tmp_path, monkeypatch):
    """1 000 syncs made the remote 38 MB: a hot log's chunk folder, rewritten by each sync, and a
    history nothing could drop. Here with small bounds: 8 commits, 4 chunks."""
    from rooms_cli.store.sync import engine as gitsync

    monkeypatch.setattr(gitsync, "HISTORY_MAX", 8)
    monkeypatch.setattr(gitsync, "CHUNKS_MAX", 4)
    w, (a, b) = world(tmp_path)
    for n in range(20):
        a.rooms("send", f"m{n}", "--to", "dev", as_="carol")
        a.rooms("sync")
        if n % 5 == 4:
            b.rooms("sync")
        depth = int(w.git(w.origin, "rev-list", "--count", "refs/rooms/state").stdout)
        assert depth <= 8
        chunks = w.git(w.origin, "ls-tree", "--name-only", "refs/rooms/state", gitsync.log_dir(inbox_rel()) + "/").stdout
        assert len(chunks.split()) <= 5
    b.rooms("sync")
    assert inbox_texts(b) == [f"m{n}" for n in range(20)]
    assert sorted(set(remote_lines(w, inbox_rel()))) == sorted(remote_lines(w, inbox_rel()))


def test_compaction_merges_the_newest_chunks_and_rewrites_a_big_old_one_only_when_as_much_came_after():
    from rooms_cli.store.sync.engine import _to_merge

    names = [f"{n:013d}-00000000" for n in range(17)]
    # a big first chunk and sixteen small ones: the small ones are merged, the big one is left
    assert _to_merge({names[0]: 100_000, **{n: 300 for n in names[1:]}}) == names[1:]
    # sixteen of a size: no run of the newest is smaller than what is before it, so all of them
    assert _to_merge({n: 300 for n in names[:16]}) == names[:16]
    # the longest run of the newest that fits under the chunk before it (the biggest, oldest stays)
    sizes = dict(zip(names[:6], (20_000, 4000, 2000, 1000, 500, 300), strict=True))
    assert _to_merge(sizes) == names[1:6]
    sizes = dict(zip(names[:6], (5000, 4000, 900, 1000, 500, 300), strict=True))
    assert _to_merge(sizes) == names[2:6]


# --- 7. the rest -----------------------------------------------------------------------------------------


def test_the_sync_section_of_rooms_yaml_is_a_known_key(tmp_path):
    w, (a,) = world(tmp_path, 1)
    with open(a.path / ".rooms.yaml", "a") as fh:
        fh.write("\nsync: {remote: origin, claims: true, tick: false, warn_after: 2h}\n")
    got = a.run("board")
    assert got.exit_code == 0 and "unknown key" not in got.stderr
    with open(a.path / ".rooms.yaml", "a") as fh:
        fh.write("\n")
    (a.path / ".rooms.yaml").write_text((a.path / ".rooms.yaml").read_text().replace("tick: false", "tik: false"))
    got = a.run("task", "next", "--json", as_="dev")
    assert "unknown key 'sync.tik' ignored" in got.stderr


def test_doctor_names_an_unreachable_remote_this_clone_syncs_with_even_without_a_sync_section(tmp_path):
    w, (a,) = world(tmp_path, 1)
    a.rooms("sync")
    a.git("remote", "set-url", "origin", str(tmp_path / "gone.git"))
    found = [f for f in json.loads(a.run("doctor", "--offline", "--json").stdout)["findings"] if f["check"] == "sync"]
    assert found and "cannot reach git remote 'origin'" in found[0]["message"]


def test_errors_keep_gits_reason(tmp_path):
    """`unable to connect to 127.0.0.1:;` lost why; a corrupt object on the remote was not named."""
    from syncrace import free_port

    w, (a, b) = world(tmp_path)
    a.git("remote", "set-url", "origin", f"git://127.0.0.1:{free_port()}/origin.git")
    refused = a.rooms("sync", code=1)["error"]
    assert refused["code"] == "remote_unreachable" and "Connection refused" in refused["message"], refused
    b.rooms("send", "x", "--to", "dev", as_="carol")
    b.rooms("sync")
    for path in (w.origin / "objects").glob("??/*"):
        path.chmod(0o644)
        path.write_bytes(b"garbage")
    a.git("remote", "set-url", "origin", str(w.origin))
    broken = a.rooms("sync", code=1)["error"]["message"]
    assert "is corrupt" in broken, broken
    # the same remote served by git daemon: what its upload-pack says comes through (it was `not our ref`)
    from syncrace import Daemon

    daemon = Daemon(w.origin.parent)
    try:
        a.git("remote", "set-url", "origin", daemon.url)
        served = a.rooms("sync", code=1)["error"]["message"]
    finally:
        daemon.close()
    assert "unable to unpack" in served and "header" in served, served


# --- the race, small -----------------------------------------------------------------------------------


@pytest.mark.slow  # real processes racing through one remote; the full race is bench/sync.py race
def test_two_clones_racing_task_next_and_done_with_plain_syncs_and_kills_never_hand_a_task_to_two(tmp_path):
    """Issue 41's race, small: 2 clones × 2 workers × 6 tasks through `git daemon` on 127.0.0.1, with a
    plain `rooms sync` loop in each clone meanwhile and a `task next --sync` killed with SIGKILL: no task
    handed to two workers, none done twice, no sync_rejected, every clone's board the same after one
    more sync, branches untouched."""
    from syncrace import race

    got = race(2, 2, 6, base=tmp_path / "race", network=True, syncers=True, kills=1)
    assert got.doubles == 0 and got.double_completions == 0, got
    assert got.errors.get("sync_rejected", 0) == 0 and not [e for e in got.errors if e != "killed"], got.errors
    assert got.boards_alike and got.conflicts == 0 and got.user_refs_kept
    assert got.board_done == 6 - got.held_by_killed
