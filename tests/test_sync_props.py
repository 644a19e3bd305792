"""Random work in three clones with random syncs, some killed mid-way with SIGKILL (hypothesis).

After a final round of syncs every clone replays to the same state, nothing acknowledged is lost, no
task is held under two leases (claims go through `task next --sync`), and no file holds a conflict
marker. `SYNC_PROPS_EXAMPLES=50` for a long run; CI runs a few (bounded to well under a minute).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from gitclones import HAVE_GIT, GitClones
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import rooms_env

pytestmark = [pytest.mark.skipif(not HAVE_GIT, reason="needs git"), pytest.mark.slow]

OPS = st.sampled_from(["send", "add", "next", "status", "sync", "sync", "killed_sync"])


def killed_sync(clone, delay: float) -> None:
    """`rooms sync` as a real process, SIGKILLed after `delay` seconds (its git children run on, as
    they would when only rooms is killed), then a moment for them to finish."""
    proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "sync"], cwd=clone.path, env=rooms_env(clone.env()),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    time.sleep(0.2)


def state(clone) -> dict:
    tasks = clone.rooms("task", "list")
    return {
        "board": sorted((t["id"], t["title"], t["status"], (t["lease"] or {}).get("lease_id"), len(t["conflicts"]))
                        for t in tasks),
        "inbox": [(m["id"], m["text"]) for m in clone.rooms("inbox", "--peek", as_="dev")["messages"]],
    }


@settings(max_examples=int(os.environ.get("SYNC_PROPS_EXAMPLES", "3")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.integers(0, 2), OPS, st.floats(0.05, 0.6)), min_size=4, max_size=12))
def test_three_clones_with_random_syncs_and_kills_converge_without_losing_anything(tmp_path_factory, ops):
    base = tmp_path_factory.mktemp("props")
    world = GitClones(base, example="dev")
    clones = [world.clone(name) for name in "abc"]
    acked_messages: set[str] = set()
    acked_tasks: set[str] = set()
    claims: dict[str, str] = {}  # task -> lease acknowledged by `task next --sync`
    for n, (who, op, delay) in enumerate(ops):
        clone = clones[who]
        if op == "send":
            text = f"m{n} from {clone.name}"
            clone.rooms("send", text, "--to", "dev", as_="carol")
            acked_messages.add(text)
        elif op == "add":
            acked_tasks.add(clone.rooms("task", "add", f"t{n}", "--lane", "dev", "--done", "d", as_="alice")["id"])
        elif op == "next":
            result = clone.run("task", "next", "--sync", "--json", as_="dev")
            assert result.exit_code in (0, 1, 3), result.stderr  # 1: a killed sync's git child still busy
            if result.exit_code == 0 and result.stdout.strip() != "null":
                got = result.json()
                assert got["task"]["id"] not in claims, "a task handed out twice"
                claims[got["task"]["id"]] = got["lease_id"]
        elif op == "status":
            clone.rooms("status", "set", f"s{n}", as_="alice")
        elif op == "sync":
            result = clone.run("sync", "--json")
            assert result.exit_code in (0, 3), result.stderr
        else:
            killed_sync(clone, delay)
    for _ in range(2):  # a final round of syncs, twice: the first clone sees the last one's work
        for clone in clones:
            clone.rooms("sync")
    states = [state(c) for c in clones]
    assert states[0] == states[1] == states[2]
    board = {t[0]: t for t in states[0]["board"]}
    assert acked_tasks <= set(board), "every acknowledged task is on every board"
    assert acked_messages <= {text for _, text in states[0]["inbox"]}, "every acknowledged message arrived"
    for task_id, lease_id in claims.items():
        assert board[task_id][3] == lease_id, "an acknowledged --sync claim holds on every clone"
    assert all(t[4] == 0 for t in states[0]["board"]), "no double claims or stale writes"
    world.assert_no_conflicts()
