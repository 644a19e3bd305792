"""`rooms chat` against a real instruct model (SmolLM2-135M-Instruct on llama.cpp), as a user runs it.

Issue 24, items 1-3 and 5: replies are bounded and say why they ended; one oversized message never
jams a room; prompts alternate user/assistant, so a strict (Gemma/Mistral-style) chat template
accepts every agent's prompt; an open message lets agents pass, and a pass is never stored as a
message. A 135M model's words vary: these assert structure (lengths, kinds, counts, exit codes,
what the server accepted), never wording. Agents run at temperature 0 with ROOMS_SEED set.
"""

from __future__ import annotations

import random
import re

import pytest

from .conftest import SMOL_AGENTS

pytestmark = [pytest.mark.integration, pytest.mark.realmodel]

AGENTS = sorted(SMOL_AGENTS)


def chat(rooms, *args, expect: int = 0) -> dict:
    run = rooms("chat", *args, "--json", timeout=300)
    assert run.exit_code == expect, (run.exit_code, run.stderr, run.stdout[-2000:])
    return run.json() if expect == 0 else {}


def replies(turn: dict, kind: str | None = None) -> list[dict]:
    return [r for r in turn["replies"] if kind is None or r["kind"] == kind]


ANSWERS = ("message", "pass", "flavor", "repeat")  # an agent's own record: it was prompted and answered


def failures(turn: dict) -> list[str]:
    """System lines: an agent that could not answer (an HTTP 400, a context overflow…)."""
    return [r["text"] for r in turn["replies"] if r["kind"] == "system"]


def answered(turn: dict) -> list[str]:
    """Who answered, sorted, once each (a cascade may prompt an agent twice): a message, a pass, a
    flavor line, or a reply that copied another's (a 135M model at temperature 0 often does; the room
    keeps it out of the count, not out of the turn)."""
    return sorted({r["speaker"] for r in turn["replies"] if r["kind"] in ANSWERS})


def finish_reason(record: dict) -> str | None:
    return record.get("finish_reason") or (record.get("meta") or {}).get("finish_reason")


def hex_dump(size: int = 10_000) -> str:
    """`xxd`-style lines of seeded random bytes, about `size` characters: the message of issue 24 item 2."""
    rng = random.Random(0)
    lines = []
    for offset in range(0, size, 50):
        chunk = bytes(rng.randrange(256) for _ in range(16))
        lines.append(f"{offset // 50 * 16:08x}: " + " ".join(chunk[i:i + 2].hex() for i in range(0, 16, 2)))
    return "\n".join(lines)


# -- 1. bounded replies -------------------------------------------------------------------------

def test_a_reply_stops_at_the_agents_max_tokens_and_is_marked_cut(smol_server, smol_project, rooms):
    smol_project(smol_server, max_tokens=14)
    # asked for something long, it speaks ("write a 300-word essay about…" made SmolLM2 read the request
    # back — "Courier, write a 300-word essay about" — which is an echo, stored as a repeat, not a reply)
    turn = chat(rooms, "@courier explain deploy latency to us in depth, with headings")
    records = replies(turn)
    assert [r["speaker"] for r in records] == ["courier"], records
    reply = records[0]
    assert reply["kind"] == "message", reply
    assert reply["usage"]["output_tokens"] <= 14
    assert finish_reason(reply) == "length"
    assert reply["meta"].get("cut") is True
    assert reply["text"].endswith("]") and "cut" in reply["text"].rsplit("…", 1)[-1], reply["text"]
    stored = rooms("transcript", "--json").json()[-1]
    assert stored["id"] == reply["id"] and finish_reason(stored) == "length"


# -- 2. one oversized message never jams a room -------------------------------------------------

def test_a_10_kb_hex_dump_leaves_the_room_answerable_for_every_agent(smol_server, smol_project, rooms):
    smol_project(smol_server, max_tokens=12)
    dump = rooms("chat", "@courier what is wrong in this dump?\n" + hex_dump(), "--json", timeout=300)
    if dump.exit_code == 0:  # answered (the message clipped to fit), or an honest failure: never exit 0 with none
        turn = dump.json()
        assert answered(turn) == ["courier"], failures(turn)
    else:
        assert dump.exit_code == 1 and "\n" not in dump.stderr.strip(), dump.stderr
    after = chat(rooms, "@jam one line each: are we ready?")
    assert answered(after) == AGENTS, failures(after)


# -- 3. prompts every chat template accepts -----------------------------------------------------

def test_everyone_and_open_messages_on_a_strict_alternation_template_get_every_answer(
        strict_server, smol_project, rooms):
    """Gemma/Mistral-style templates raise "Conversation roles must alternate" (HTTP 400) for two
    user messages in a row: the later agents' prompts, which hold the earlier replies, must still
    alternate. Then an open message, whose prompts hold each agent's own earlier turn too."""
    smol_project(strict_server, max_tokens=12)
    turn = chat(rooms, "@everyone one line each: are we ready for Friday?")
    assert failures(turn) == []
    assert answered(turn) == AGENTS
    assert rooms("room", "continue").exit_code == 0  # a fresh turn budget: every eligible agent is prompted
    turn = chat(rooms, "the deploy latency is bad, what now?")
    assert failures(turn) == []
    assert answered(turn) == sorted(turn["eligible"]) and turn["eligible"]


def test_everyone_on_plain_chatml_gets_every_agents_answer_with_no_speaker_label_stored(
        chatml_server, smol_project, rooms):
    """Item 4 too: a small model often starts its reply with a speaker label (`courier: …`,
    `Archer: …`, `assistant: …`); what is stored starts with none."""
    smol_project(chatml_server, max_tokens=16)
    turn = chat(rooms, "@everyone one line each: are we ready for Friday?")
    assert failures(turn) == []
    assert answered(turn) == AGENTS
    spoken = replies(turn, "message")
    assert spoken
    labels = re.compile(rf"^\W*({'|'.join([*AGENTS, 'tester', 'user', 'assistant', 'system'])})\W*:", re.I)
    for reply in spoken:
        assert not labels.match(reply["text"]), reply["text"]
        assert "<|im_" not in reply["text"]


# -- 5. passing --------------------------------------------------------------------------------

def test_an_open_message_charges_only_spoken_replies_and_never_stores_a_pass_as_a_message(
        smol_server, smol_project, rooms):
    smol_project(smol_server, max_tokens=24)
    turn = chat(rooms, "the release notes have a typo in the second heading; who fixes it?")
    assert turn["mode"] == "open" and failures(turn) == []
    spoken = replies(turn, "message")
    assert answered(turn) == sorted(turn["eligible"])
    assert turn["budget"]["remaining"] == turn["budget"]["total"] - len(spoken)
    for reply in spoken:  # "/pass — nothing to add", "courier: /pass", "\"/pass\"" are passes
        assert "/pass" not in reply["text"].lower()[:40], reply["text"]


def test_an_open_messages_replies_are_not_about_the_reply_format(smol_server, smol_project, rooms):
    """The `{speak, message}` schema gives the shape (the server's grammar); the prompt says in plain
    words to speak or pass. Told about JSON, SmolLM2 answered "This is a JSON object that contains…",
    or copied the placeholder "your one short message"."""
    smol_project(smol_server, max_tokens=24)
    turn = chat(rooms, "what should we ship first this week?")
    assert failures(turn) == []
    for reply in replies(turn, "message"):
        text = reply["text"].lower()
        assert "json" not in text and "one short message" not in text, reply["text"]
        if finish_reason(reply) in ("length", "repetition") or reply["meta"].get("repeated"):
            assert reply["meta"].get("cut") is True, reply  # cut: stopped by the limit or by the guard
