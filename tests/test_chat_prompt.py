"""The prompt of a chat call (rooms_cli/chat/context.py): a shape every chat template accepts,
the message being answered once, and a tail fitted to the window (property tests)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.chat.context import Line, arrange, clip, fit
from rooms_cli.models.base import estimate_tokens

TRIGGER = "QQ-the-message-being-answered-QQ"
speakers = st.sampled_from(["me", "alice", "ops", "architect"])
texts = st.text(alphabet="abc xyz\n.:", min_size=1, max_size=40)
transcripts = st.lists(st.tuples(speakers, texts), max_size=30)


def roles_alternate(messages) -> bool:
    roles = [m.role for m in messages]
    body = roles[1:]
    return (roles[0] == "system" and "system" not in body and body[0] == "user" and body[-1] == "user"
            and all(a != b for a, b in zip(body, body[1:], strict=False)))


@settings(max_examples=300, deadline=None)
@given(transcripts, st.data(), speakers)
def test_any_transcript_gives_alternating_roles_ending_with_the_trigger_once(transcript, data, trigger_speaker):
    lines = [Line(s, t) for s, t in transcript]
    at = data.draw(st.integers(min_value=0, max_value=len(lines)))
    lines.insert(at, Line(trigger_speaker, TRIGGER))
    messages = arrange("sys", "me", lines, at, "(answer or /pass)")
    assert roles_alternate(messages)
    assert sum(m.content.count(TRIGGER) for m in messages) == 1
    assert messages[-1].content.endswith("(answer or /pass)")
    assert TRIGGER in messages[-1].content
    assert messages[-1].answering == TRIGGER  # the offline model reads it from there


@settings(max_examples=200, deadline=None)
@given(transcripts)
def test_without_a_trigger_the_shape_holds_too(transcript):
    messages = arrange("sys", "me", [Line(s, t) for s, t in transcript], None)
    assert roles_alternate(messages)


@settings(max_examples=200, deadline=None)
@given(transcripts, st.integers(min_value=40, max_value=400), st.integers(min_value=0, max_value=10_000))
def test_fitting_keeps_the_trigger_newest_first_within_the_budget(transcript, budget, size):
    lines = [Line(s, t) for s, t in transcript] + [Line("alice", "f" * size)]
    kept, at = fit(lines, len(lines) - 1, budget, estimate_tokens)
    assert at == len(kept) - 1 and kept[at].text.startswith("f" * min(size, 8))
    others = [line for i, line in enumerate(kept) if i != at]
    tail = transcript[len(transcript) - len(others):] if others else []
    assert [line.speaker for line in others] == [s for s, _ in tail], "the newest messages, none skipped"
    assert sum(estimate_tokens(line.text) + 8 for line in others) <= budget


def test_an_agents_own_turns_are_assistant_and_others_are_packed_with_labels():
    lines = [Line("alice", "hi all"), Line("ops", "hello"), Line("architect", "plan A"), Line("alice", "@ops and you?")]
    messages = arrange("sys", "ops", lines, 3)
    assert [(m.role, m.content) for m in messages] == [
        ("system", "sys"), ("user", "alice: hi all"), ("assistant", "hello"),
        ("user", "architect: plan A\n\nalice: @ops and you?")]


def test_replies_already_given_come_before_the_message_being_answered():
    lines = [Line("alice", "@everyone ideas?"), Line("architect", "cache it")]
    messages = arrange("sys", "ops", lines, 0)
    assert messages[-1].content == "Replies so far to alice's message below:\n\narchitect: cache it\n\nalice: @everyone ideas?"


def test_a_hex_dump_is_clipped_by_its_token_count_with_a_visible_marker():
    dump = "deadbeef" * 1250  # 10 KB
    clipped = clip(dump, 200, estimate_tokens(dump))
    assert len(clipped) < 1000 and "…[clipped: " in clipped
