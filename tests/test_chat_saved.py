"""Save and rehydrate: `.rooms/chat/<room>.md` gives back exactly the messages that were saved."""

from __future__ import annotations

import itertools
import string
from pathlib import Path

from chatkit import records, room, say, state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooms_cli.chat.lifecycle import join, save, saved_files, stop
from rooms_cli.chat.saved import SavedTranscript, decode, encode
from rooms_cli.chat.transcript import Message, append_message

NASTY = st.sampled_from([
    "", "\n", "\n\n", "**bob** at 2026-01-01T00:00:00.000Z", "# Header\n---\n", "---", "<!-- rooms:x {} -->",
    "<!-- /rooms:", " -->\n", "```\ncode\n```", "\r\n", "trailing\n\n\n", "\x00\x1b[31m", "> quote",
])
TEXT = st.one_of(st.text(), NASTY, st.lists(st.one_of(NASTY, st.text(max_size=8)), max_size=6).map("".join))
NAME = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=12)
COUNTER = itertools.count()
KIND = st.sampled_from(["message", "pass", "flavor", "system", "budget_exhausted", "join"])


@st.composite
def messages(draw):
    count = draw(st.integers(0, 8))
    out = []
    for n in range(count):
        meta = draw(st.one_of(st.just({}), st.dictionaries(NAME, TEXT, max_size=2)))
        out.append(Message(id=f"m-{n:026d}", ts=f"2026-11-21T10:00:{n:02d}.000Z", room="r", speaker=draw(NAME),
                           kind=draw(KIND), text=draw(TEXT), meta=meta))
    return out


@given(messages())
@settings(max_examples=300, deadline=None)
def test_encode_then_decode_gives_back_every_message_exactly(msgs):
    doc = SavedTranscript(room="r", saved="2026-11-21T10:00:00.000Z", roster=["ops"], participants=["[[agents/ops]]"], messages=msgs)
    back = decode(encode(doc), "chat/r.md")
    assert [m.to_json() for m in back.messages] == [m.to_json() for m in msgs]
    assert back.roster == ["ops"] and back.participants == ["[[agents/ops]]"]


@given(st.lists(TEXT, max_size=5))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_save_then_join_gives_back_the_same_messages(project, texts):
    name = f"h{next(COUNTER)}"
    room(project, name)
    for text in texts:
        append_message(project, name, "alice", text)
    stop(project, name, "dropped", "alice", save_first=True)  # drop saves first
    before = [(m.speaker, m.ts, m.kind, m.text) for m in records(project, name)]
    Path(project.path("rooms", name, "transcript.jsonl")).unlink()  # only the saved copy is left
    join(project, f"chat/{name}")
    after = [(m.speaker, m.ts, m.kind, m.text) for m in records(project, name)]
    assert after == before
    assert state(project, name).live


def test_saved_file_is_a_readable_transcript_record(project):
    room(project)
    say(project, "@ops deploy latency?")
    info = save(project, "sync")
    text = (Path(project.root) / info["path"]).read_text()
    assert info["path"].startswith(".rooms/chat/sync/s-") and info["path"].endswith(".md")
    assert text.startswith("---\nclass: transcript\nroom: sync\nsaved: ")
    assert "links:\n  participants:\n  - '[[agents/architect]]'" in text
    assert "'[[people/alice]]'" in text
    assert "**alice** at " in text and "\n@ops deploy latency?\n" in text
    assert info["messages"] == 2


def test_join_rebuilds_the_room_with_the_same_agents_and_history(project):
    room(project, agents=["ops", "reviewer"])
    say(project, "@ops deploy?")
    save(project, "sync")
    stop(project, "sync", "halted", "alice", save_first=False)
    # a fresh project copy: only the saved transcript travels (e.g. through git)
    import shutil

    shutil.rmtree(project.path("rooms", "sync"))
    out = join(project, "chat/sync")
    assert out["outcome"] == "rehydrated" and state(project).roster == ["ops", "reviewer"]
    assert [m.speaker for m in records(project) if m.kind == "message"] == ["alice", "ops"]
    assert say(project, "@reviewer tests for the deploy?").replies[0].speaker == "reviewer"


def test_join_without_a_saved_transcript_makes_a_fresh_room(project):
    out = join(project, "chat/brand-new")
    assert out["outcome"] == "created" and out["messages"] == 0 and state(project, "brand-new").live


def test_halt_keeps_files_and_does_not_save(project):
    room(project)
    say(project, "@ops deploy?")
    result = stop(project, "sync", "halted", "alice", save_first=False)
    assert result["saved"] is None and saved_files(project, "sync") == []
    assert state(project).status == "halted" and len(records(project)) == 3


def test_rehydrating_over_a_changed_stopped_room_keeps_the_old_transcript(project):
    room(project)
    say(project, "@ops first")
    save(project, "sync")
    say(project, "@ops second, never saved")
    stop(project, "sync", "halted", "alice", save_first=False)
    join(project, "chat/sync")
    kept = list(Path(project.path("rooms", "sync")).glob("transcript.*.jsonl"))
    assert len(kept) == 1 and "never saved" in kept[0].read_text()
    assert not any("never saved" in m.text for m in records(project))


def test_join_leaves_out_agents_whose_definition_is_gone(project):
    room(project, agents=["ops", "reviewer"])
    save(project, "sync")
    stop(project, "sync", "halted", "alice", save_first=False)
    Path(project.path("agents", "reviewer.md")).unlink()
    out = join(project, "chat/sync")
    assert out["roster"] == ["ops"] and out["left_out"] == ["reviewer"]
