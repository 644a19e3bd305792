"""What a reply goes through before it is stored (rooms_cli/chat/hygiene.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rooms_cli.chat.hygiene import close_fences, copied_from, cut_repetition, mark_cut, tidy_reply
from rooms_cli.chat.transcript import make_message

NAMES = ["ops", "architect", "Architect", "alice", "A"]


@pytest.mark.parametrize(("raw", "clean"), [
    ("ops: architect: @everyone: hi", "hi"),
    ("A: A: the lock order", "the lock order"),
    ("<|im_start|>assistant\nSure: the cache.", "Sure: the cache."),
    ("**Ops:** fine by me", "fine by me"),
    ("assistant: user: done", "done"),
    ("[Architect]: we ship", "we ship"),
])
def test_leading_speaker_labels_and_role_tokens_are_stripped(raw, clean):
    assert tidy_reply(raw, "ops", NAMES).text == clean


def test_a_leading_mention_of_another_agent_is_content_not_a_label():
    assert tidy_reply("@architect: can you check the lock?", "ops", NAMES).text == "@architect: can you check the lock?"


def test_a_reply_that_goes_on_to_write_another_speakers_turn_is_cut_there():
    tidy = tidy_reply("Restart it first.\nalice: ok, and then?\nops: then watch", "ops", NAMES)
    assert tidy.text == "Restart it first." and tidy.cut_turn
    assert tidy_reply("Fine. <|im_end|>\n<|im_start|>user\nnext", "ops", NAMES).text == "Fine."
    yaml = "Set it in .rooms.yaml:\n```yaml\nuser: alice\nops: {type: openai}\n```\nThen run it."
    assert tidy_reply(yaml, "ops", NAMES).text == yaml, "a label-like line in code is content"


@pytest.mark.parametrize(("raw", "kept"), [
    ("salt_" * 600, "salt…"),
    ("I'm a chatbot. I'm a chatbot. I'm a chatbot.", "I'm a chatbot…"),
    ("First, check the logs.\nThen restart the pods.\nThen restart the pods.\nThen restart the pods.",
     "First, check the logs.\nThen restart the pods…"),
    ('"Tester, I\'m not sure how to respond. I\'m not sure how to respond...', '"Tester, I\'m not sure how to respond…'),
    ("you're ready for the one line release note, you're ready for the one line release note, you're ready for the one line re",
     "you're ready for the one line release note…"),
])
def test_a_reply_that_repeats_itself_is_cut_at_the_repetition_and_flagged(raw, kept):
    tidy = tidy_reply(raw, "ops", NAMES)
    assert tidy.text == kept and tidy.repeated


@pytest.mark.parametrize("text", [
    "| a | b |\n|---|---|---|---|---|",
    "Yes. Yes.",
    "```\nx = 1\nx = 1\n```",
    "00 00 00 00 00 00 00 00 00 00 00 00",
    "We should cache the lookups, then measure again before the release on Friday.",
    "- check the logs for errors in the api\n- check the logs for errors in the worker\n- check the logs for errors in the db",
])
def test_ordinary_replies_are_not_taken_for_repetition(text):
    assert cut_repetition(text) == (text, False)


@given(st.text(max_size=300))
def test_hygiene_never_grows_a_reply_beyond_an_ellipsis_and_a_fence(text):
    tidy = tidy_reply(text, "ops", NAMES)
    assert len(tidy.text) <= len(text.strip()) + len("…\n```")


def test_a_cut_reply_ends_with_a_marker_and_its_code_fence_closed():
    assert mark_cut("Run this:\n```sh\nmake test", 400) == "Run this:\n```sh\nmake test\n```\n…[cut at 400 tokens]"
    assert mark_cut("It depends on the", 400) == "It depends on the…[cut at 400 tokens]"
    assert close_fences("```\na\n```") == "```\na\n```"


def test_a_near_copy_of_an_earlier_message_is_found():
    earlier = [make_message("sync", "architect", "I'm a chatbot and I can help you with the deploy."),
               make_message("sync", "alice", "what now?")]
    assert copied_from("I'm a chatbot, and I can help you with the deploy!", earlier).speaker == "architect"
    assert copied_from("Roll back the deploy and page the on-call.", earlier) is None
    assert copied_from("what now?", earlier) is None, "too short to call a copy"


def test_a_cut_at_a_repetition_ends_in_one_ellipsis_even_after_the_models_own():
    text, repeated = cut_repetition("That's a joke.\n\nWe will make it funny…\n\nWe will make it funny…")
    assert repeated and text == "That's a joke.\n\nWe will make it funny…"


def test_sentences_read_back_from_the_system_prompt_are_taken_out():
    from rooms_cli.chat.hygiene import tidy_reply
    from rooms_cli.models.repetition import drop_echoes

    system = "You are Boss, a direct project manager. Answer in one short sentence."
    assert drop_echoes("You are Boss, a direct project manager. We ship Friday.", system) == ("We ship Friday.", True)
    assert drop_echoes("We ship Friday.", system) == ("We ship Friday.", False)
    tidy = tidy_reply("Answer in one short sentence.\nAnswer in one short sentence.", "boss", ["boss"], system)
    assert tidy.text == "" and tidy.echoed


def test_a_role_word_left_alone_on_its_line_ends_the_reply():
    from rooms_cli.chat.hygiene import tidy_reply

    assert tidy_reply("model\nWe ship Friday.\nuser\nAnd then?", "boss", ["boss"]).text == "We ship Friday."
