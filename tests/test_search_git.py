"""A search after `git pull` or `rooms sync` sees what they brought: real git clones (tests/gitclones.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitclones import HAVE_GIT, GitClones

from rooms_cli.chat.transcript import append_message
from rooms_cli.search.engine import search
from rooms_cli.store import ftsindex, layout
from rooms_cli.store.paths import open_project

pytestmark = pytest.mark.skipif(not HAVE_GIT, reason="needs git")


def found(clone, query: str) -> list[tuple[str, str]]:
    return sorted((hit.kind, hit.who) for hit in search(open_project(clone.path), query).hits)


def test_a_search_after_git_pull_sees_what_the_pull_brought_reading_on_where_the_transcript_was(tmp_path, monkeypatch):
    world = GitClones(tmp_path, example="dev")
    a, b = world.clone("a"), world.clone("b")
    append_message(open_project(b.path), "default", "bob", "the zebra plan, first draft")
    assert found(b, "zebra") == [("chat", "bob")]  # b's index is built before the pull

    append_message(open_project(a.path), "default", "alice", "zebra plan approved")
    a.rooms("send", "zebra crossing at noon", "--to", "reviewer", as_="alice")
    a.rooms("task", "add", "Paint the zebra", "--lane", "architect", "--done", "striped", as_="alice")
    b.pull(a)  # both appended to the transcript: git writes b's file anew, b's lines then a's (a union merge)

    transcript = Path(layout.transcript_file(open_project(b.path), "default"))
    starts = []
    real = ftsindex.read_log

    def recording(path, after=None):
        result = real(path, after)
        if Path(path) == transcript and result is not None:
            starts.append(result.start)
        return result

    monkeypatch.setattr(ftsindex, "read_log", recording)
    assert found(b, "zebra") == [("chat", "alice"), ("chat", "bob"), ("message", "alice"), ("task", "alice")]
    assert starts and starts[0] > 0  # only the lines after b's own were read


def test_a_search_after_a_pull_that_rewrote_history_drops_what_is_gone(tmp_path):
    world = GitClones(tmp_path, example="dev")
    a, b = world.clone("a"), world.clone("b")
    a.rooms("send", "walrus meeting moved", "--to", "reviewer", as_="alice")
    a.sync()
    b.pull()
    assert found(b, "walrus") == [("message", "alice")]
    b.git("reset", "-q", "--hard", "HEAD~1")  # the commit that brought it, undone
    assert found(b, "walrus") == []


def test_a_search_after_rooms_sync_sees_what_the_sync_brought(tmp_path):
    world = GitClones(tmp_path, example="dev")
    a, b = world.clone("a"), world.clone("b")
    assert found(b, "narwhal") == []
    a.rooms("send", "narwhal sighting logged", "--to", "reviewer", as_="alice")
    a.rooms("task", "add", "Count the narwhals", "--lane", "architect", "--done", "counted", as_="alice")
    a.rooms("sync")
    b.rooms("sync")
    assert found(b, "narwhal") == [("message", "alice"), ("task", "alice")]
