"""`rooms sync` through real git remotes (issue 25 items 3-5): records travel both ways on
refs/rooms/state, the user's branches, index and work tree are never touched, errors are one
sentence, and `--sync` claims hold across clones (the remote ref's update decides).

Real git only: a bare origin on disk (tests/gitclones.py) and `git daemon` on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
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


def user_view(clone) -> dict:
    """What rooms sync must never change: refs, HEAD, the index, and every path outside .rooms/."""
    refs = clone.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/remotes").stdout
    status = [line for line in clone.git("status", "--porcelain", "--untracked-files=all").stdout.splitlines()
              if not line[3:].startswith(".rooms/")]
    return {"refs": refs, "head": clone.git("symbolic-ref", "HEAD").stdout, "status": status,
            "staged": clone.git("diff", "--cached", "--", ".", ":!.rooms").stdout,
            "unstaged": clone.git("diff", "--", ".", ":!.rooms").stdout}


def board(clone) -> list[dict]:
    return [(t["id"], t["status"], (t["lease"] or {}).get("lease_id")) for t in clone.rooms("task", "list")]


def test_sync_carries_records_both_ways_and_never_touches_the_users_branches_index_or_work_tree(tmp_path):
    w, (a, b) = world(tmp_path)
    # the user's own work in a: an unpushed commit, a staged change, an unstaged change, an untracked file
    (a.path / "code.py").write_text("x = 1\n")
    a.git("add", "code.py")
    a.git("commit", "-q", "-m", "local work, not pushed")
    (a.path / "code.py").write_text("x = 2\n")
    (a.path / "staged.txt").write_text("staged\n")
    a.git("add", "staged.txt")
    (a.path / "staged.txt").write_text("staged, then edited\n")
    (a.path / "untracked.txt").write_text("mine\n")
    origin_main = w.git(w.origin, "rev-parse", "main").stdout
    before = user_view(a)

    task = a.rooms("task", "add", "Write the spec", "--lane", "dev", "--done", "it exists", as_="alice")["id"]
    b.rooms("send", "hello from b", "--to", "dev", as_="carol")
    first = a.rooms("sync")
    assert first["pushed"] and first["sent"] >= 1
    assert b.rooms("sync")["received"] >= 1
    assert a.rooms("sync")["received"] >= 1

    assert board(a) == board(b) and board(a)[0][0] == task
    assert [m["text"] for m in a.rooms("inbox", "--peek", as_="dev")["messages"]] == ["hello from b"]
    assert user_view(a) == before
    assert w.git(w.origin, "rev-parse", "main").stdout == origin_main, "the user's unpushed commit stays unpublished"
    assert (a.path / "code.py").read_text() == "x = 2\n" and (a.path / "untracked.txt").read_text() == "mine\n"
    assert w.git(w.origin, "rev-parse", "--verify", "refs/rooms/state").returncode == 0
    w.assert_no_conflicts()


def test_a_sync_with_nothing_new_pushes_nothing_and_the_state_survives_a_git_pull(tmp_path):
    w, (a, b) = world(tmp_path)
    a.rooms("task", "add", "t", "--lane", "dev", "--done", "d", as_="alice")
    a.rooms("sync")
    again = a.rooms("sync")
    assert not again["pushed"] and again["sent"] == 0 and again["received"] == 0
    # the same records also arrive by an ordinary commit + pull: they count once
    a.commit("rooms state")
    a.push()
    b.pull()
    b.rooms("sync")
    b.rooms("sync")
    assert board(a) == board(b) and len(board(b)) == 1
    lines = [json.loads(line) for p in (b.path / ".rooms").rglob("t-*.jsonl") for line in p.read_text().splitlines()]
    assert len(lines) == 1, "a pulled log is not appended to again by sync"


def test_three_clones_syncing_at_once_all_succeed_and_read_alike(tmp_path):
    w, clones = world(tmp_path, 3)
    for n, clone in enumerate(clones):
        for k in range(3):
            clone.rooms("send", f"{clone.name} {k}", "--to", "dev", as_=f"user{n}")
    procs = [subprocess.Popen([sys.executable, "-m", "rooms_cli", "sync", "--json"], cwd=c.path, env=rooms_env(c.env()),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in clones]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    for c in clones:
        c.rooms("sync")
    inboxes = [[m["text"] for m in c.rooms("inbox", "--peek", as_="dev")["messages"]] for c in clones]
    assert inboxes[0] == inboxes[1] == inboxes[2] and len(inboxes[0]) == 9


def test_a_whole_file_changed_in_two_clones_ends_the_same_everywhere_and_the_loser_is_kept(tmp_path):
    w, (a, b) = world(tmp_path)
    agent = ".rooms/agents/ops.md"
    (a.path / agent).write_text((a.path / agent).read_text() + "\nfrom a\n")
    (b.path / agent).write_text((b.path / agent).read_text() + "\nfrom b\n")
    a.rooms("sync")
    conflicts = b.rooms("sync")["conflicts"]
    a.rooms("sync")
    assert (a.path / agent).read_text() == (b.path / agent).read_text()
    assert [c["path"] for c in conflicts] == ["agents/ops.md"]
    kept = list((b.path / ".rooms" / "run" / "sync" / "conflicts").rglob("*"))
    losing = "from b" if "from a" in (b.path / agent).read_text() else "from a"
    if losing == "from b":
        assert any(p.is_file() and "from b" in p.read_text() for p in kept)


# --- errors: one sentence, the documented exit code, nothing lost --------------------------------------


def test_no_git_no_remote_and_an_unreachable_remote_are_one_sentence_each_exit_1(tmp_path, cli, project_dir):
    plain = cli("sync", "--json")
    assert plain.exit_code == 1 and plain.err_json()["error"]["code"] == "not_a_git_repo"
    w, (a,) = world(tmp_path, 1)
    a.rooms("task", "add", "t", "--lane", "dev", "--done", "d", as_="alice")
    before = sorted((p.relative_to(a.path), p.read_bytes()) for p in (a.path / ".rooms").rglob("*.jsonl"))
    nowhere = a.rooms("sync", "--remote", "nowhere", code=1)["error"]
    assert nowhere["code"] == "no_remote" and "nowhere" in nowhere["message"]
    a.git("remote", "set-url", "origin", str(tmp_path / "gone.git"))
    gone = a.run("sync")
    assert gone.exit_code == 1 and gone.stderr.count("\n") == 1 and "cannot reach git remote 'origin'" in gone.stderr
    assert "Traceback" not in gone.stderr
    after = sorted((p.relative_to(a.path), p.read_bytes()) for p in (a.path / ".rooms").rglob("*.jsonl"))
    assert after == before


def test_a_remote_ref_rewritten_by_hand_is_refused_and_nothing_local_is_lost(tmp_path):
    w, (a, b) = world(tmp_path)
    a.rooms("task", "add", "t", "--lane", "dev", "--done", "d", as_="alice")
    a.rooms("sync")
    # someone force-pushes an unrelated commit over the state ref
    b.git("push", "-q", "--force", "origin", "main:refs/rooms/state")
    a.rooms("send", "still here", "--to", "dev", as_="carol")
    err = a.rooms("sync", code=1)["error"]
    assert err["code"] == "remote_rewritten" and "nothing local is lost" in err["message"]
    assert a.rooms("inbox", "--peek", as_="dev")["messages"][0]["text"] == "still here"


def test_task_claim_sync_with_an_unreachable_remote_claims_nothing(tmp_path):
    w, (a,) = world(tmp_path, 1)
    task = a.rooms("task", "add", "t", "--lane", "dev", "--done", "d", as_="alice")["id"]
    a.git("remote", "set-url", "origin", str(tmp_path / "gone.git"))
    err = a.rooms("task", "claim", task, "--sync", as_="dev", code=1)["error"]
    assert err["code"] == "remote_unreachable"
    assert a.rooms("task", "show", task)["status"] == "todo"
    nxt = a.rooms("task", "next", "--sync", as_="dev", code=1)["error"]
    assert nxt["code"] == "remote_unreachable" and a.rooms("task", "show", task)["status"] == "todo"


# --- claims across clones -----------------------------------------------------------------------------


def test_two_clones_claiming_one_task_with_sync_have_one_winner_and_the_loser_withdraws(tmp_path):
    from syncrace import claim_left_waiting

    from rooms_cli.across.sync import syncing
    from rooms_cli.board import claims
    from rooms_cli.store.paths import open_project

    w, (a, b) = world(tmp_path)
    task = a.rooms("task", "add", "t", "--lane", "dev", "--done", "d", as_="alice")["id"]
    a.rooms("sync")
    b.rooms("sync")
    # b claimed while it had not seen a's claim (offline, or the same instant); a's claim reached the remote first
    mine = claim_left_waiting(b.path, task)
    won = a.rooms("task", "claim", task, "--sync", as_="dev")
    lost = claims.confirm_claim(open_project(b.path), "default", mine, syncing(None))
    assert lost is not None and won["lease_id"] in lost
    a.rooms("sync")
    for clone in (a, b):
        shown = clone.rooms("task", "show", task)
        assert shown["lease"]["lease_id"] == won["lease_id"] and shown["conflicts"] == []
        assert [e["lease_id"] for e in shown["history"] if e["ev"] == "withdraw"] == [mine.lease.lease_id]
        assert [e["lease_id"] for e in shown["withdrawn"]] == [mine.lease.lease_id]
    # a clone that already saw the winner's claim is refused before it writes anything
    again = b.rooms("task", "claim", task, "--sync", as_="dev", code=3)["error"]
    assert again["code"] == "already_claimed" and won["lease_id"] in again["message"]


@pytest.mark.slow  # real processes racing through one remote
def test_task_next_sync_in_racing_clones_never_hands_one_task_to_two(tmp_path):
    w, clones = world(tmp_path, 3)
    ids = [clones[0].rooms("task", "add", f"t{n}", "--lane", "dev", "--done", "d", as_="alice")["id"] for n in range(6)]
    clones[0].rooms("sync")
    for c in clones[1:]:
        c.rooms("sync")
    loop = ('for i in 1 2; do "$PY" -m rooms_cli task next --sync --as dev --json || exit 1; done')
    procs = [subprocess.Popen(["sh", "-c", loop], cwd=c.path, env=rooms_env({**c.env(), "PY": sys.executable}),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in clones]
    claimed = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        claimed += [json.loads(line)["task"]["id"] for line in out.splitlines() if line.strip() and line.strip() != "null"]
    assert len(claimed) == len(set(claimed)) == 6 and set(claimed) == set(ids)
    for c in clones:
        c.rooms("sync")
    views = [sorted((t["id"], t["lease"]["lease_id"]) for t in c.rooms("task", "list") if t["lease"]) for c in clones]
    assert views[0] == views[1] == views[2] and len(views[0]) == 6
    assert all(not t["conflicts"] for c in clones for t in c.rooms("task", "list"))


# --- a networked remote ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sync_through_git_daemon_on_a_local_port(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    w, (a, b) = world(tmp_path)
    port = _free_port()
    daemon = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
                               f"--base-path={tmp_path}", "--listen=127.0.0.1", f"--port={port}", str(tmp_path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"git://127.0.0.1:{port}/origin.git"
        for clone in (a, b):
            clone.git("remote", "set-url", "origin", url)
        for _ in range(50):
            if a.git("ls-remote", "origin", check=False).returncode == 0:
                break
            time.sleep(0.1)
        a.rooms("task", "add", "over the network", "--lane", "dev", "--done", "d", as_="alice")
        a.rooms("sync")
        b.rooms("sync")
        assert [t["title"] for t in b.rooms("task", "list")] == ["over the network"]
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


# --- around it -------------------------------------------------------------------------------------------


def test_tick_syncs_when_configured_and_doctor_flags_an_unreachable_remote_and_old_unsynced_state(tmp_path):
    w, (a, b) = world(tmp_path)
    with open(a.path / ".rooms.yaml", "a") as fh:
        fh.write("\nsync: {remote: origin, warn_after: 1h}\n")
    a.rooms("send", "by tick", "--to", "dev", as_="carol")
    [step] = a.rooms("tick")["steps"]["sync"]
    assert step["action"] == "sync" and step["pushed"]
    b.rooms("sync")
    assert [m["text"] for m in b.rooms("inbox", "--peek", as_="dev")["messages"]] == ["by tick"]
    # an old local change, never synced, and a remote out of reach
    a.rooms("send", "waiting", "--to", "dev", as_="carol")
    old = time.time() - 7200
    for p in (a.path / ".rooms" / "inbox").glob("*.jsonl"):
        os.utime(p, (old, old))
    a.git("remote", "set-url", "origin", str(tmp_path / "gone.git"))
    found = [f for f in json.loads(a.run("doctor", "--offline", "--json").stdout)["findings"] if f["check"] == "sync"]
    messages = " ".join(f["message"] for f in found)
    assert "cannot reach git remote 'origin'" in messages and "waited 2h" in messages


def test_the_readme_two_machines_section_runs_as_written(tmp_path):
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("### Two machines", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    bindir = Path(sys.executable).parent
    env = rooms_env({"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
                     "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                     "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"})
    env.pop("ROOMS_DIR", None)
    proc = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    claimed = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("claimed ")]
    assert len(claimed) == 2 and len(set(claimed)) == 2, proc.stdout
    assert "Write the spec" in proc.stdout and "Review the spec" in proc.stdout


def test_rooms_watch_shows_records_that_arrived_by_sync_and_a_withdrawn_claim(tmp_path):
    from syncrace import claim_left_waiting

    from rooms_cli.across.sync import syncing
    from rooms_cli.board import claims
    from rooms_cli.store.paths import open_project

    w, (a, b) = world(tmp_path)
    task = a.rooms("task", "add", "t", "--lane", "dev", "--done", "d", as_="alice")["id"]
    a.rooms("sync")
    b.rooms("sync")
    watcher = subprocess.Popen([sys.executable, "-m", "rooms_cli", "watch", "--board", "--inbox", "dev", "--json",
                                "--timeout", "20"], cwd=b.path, env=rooms_env(b.env()),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)  # the watcher is following
        mine = claim_left_waiting(b.path, task)
        won = a.rooms("task", "claim", task, "--sync", as_="dev")
        a.rooms("send", "arrived by sync", "--to", "dev", as_="carol")
        a.rooms("sync")
        assert claims.confirm_claim(open_project(b.path), "default", mine, syncing(None)) is not None
        deadline = time.time() + 15
        seen: list[dict] = []
        while time.time() < deadline:
            line = watcher.stdout.readline()
            if not line:
                break
            seen.append(json.loads(line))
            kinds = {(e["type"], e.get("lease_id")) for e in seen}
            if ("task.claim_withdrawn", mine.lease.lease_id) in kinds and ("task.claimed", won["lease_id"]) in kinds \
                    and any(e.get("text") == "arrived by sync" for e in seen):
                break
        kinds = {(e["type"], e.get("lease_id")) for e in seen}
        assert ("task.claimed", won["lease_id"]) in kinds, seen
        assert ("task.claim_withdrawn", mine.lease.lease_id) in kinds, seen
        assert any(e.get("text") == "arrived by sync" for e in seen), seen
    finally:
        watcher.kill()
        watcher.wait(timeout=10)
