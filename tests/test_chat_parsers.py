"""Property tests for the chat parsers: mentions, slash commands, saved transcripts on disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.chat import slash
from rooms_cli.chat.addressing import mentions, parse
from rooms_cli.core.errors import InvalidData, UsageError

ROSTER = ["architect", "researcher", "reviewer", "ops"]
KNOWN = [*ROSTER, "judge"]
WORDS = st.sampled_from(["@everyone", "@jam", "@channel", "@ops", "@reseacher", "@agents/reviewer", "@xyz", "@", "a@b.c",
                         "/pass", "hello", "\n", "@@ops", "@ops.", "@Architect!"])
TEXT = st.one_of(st.text(), st.lists(st.one_of(WORDS, st.text(max_size=5)), max_size=8).map(" ".join))


@given(TEXT)
@settings(max_examples=400, deadline=None)
def test_addressing_is_total_and_only_names_roster_agents(text):
    person = parse(text, ROSTER, KNOWN)
    agent = parse(text, ROSTER, KNOWN, from_person=False)
    for result in (person, agent):
        assert result.mode in ("open", "direct", "everyone", "jam")
        assert set(result.targets) <= set(ROSTER)
        assert len(result.targets) == len(set(result.targets))
        assert (result.mode == "direct") == bool(result.targets)
        assert set(result.outside) <= {"judge"}
    assert agent.mode in ("open", "direct"), "agent text never broadcasts"
    for word in mentions(text):
        assert word and not word.startswith("@")


@given(st.text(max_size=40))
@settings(max_examples=400, deadline=None)
def test_slash_parse_returns_a_known_command_or_a_usage_error(body):
    try:
        name, args = slash.parse("/" + body)
    except UsageError as err:
        assert "/" in err.message
        return
    assert name in slash.COMMANDS and isinstance(args, list)


def test_a_damaged_saved_transcript_is_a_clear_error(project, cli):
    path = Path(project.path("chat", "broken", "s-01broken.md"))
    path.parent.mkdir(parents=True)
    for text, words in [
        ("no frontmatter at all", "starts with a --- frontmatter block"),
        ("---\nclass: deliberation\n---\nbody\n", "expected class: transcript"),
        ("---\nclass: transcript\nboundary: abc\n---\n\n<!-- rooms:abc {not json} -->\n**a** at t\n\nx\n<!-- /rooms:abc -->\n",
         "does not hold valid JSON"),
        ("---\nclass: transcript\nboundary: abc\n---\n\n<!-- rooms:abc {} -->\n**a** at t\n\nnever closed\n", "is not closed"),
    ]:
        path.write_text(text)
        run = cli("room", "join", "chat/broken")
        assert run.exit_code == 1 and words in run.stderr and ".rooms/chat/broken/s-01broken.md" in run.stderr, run.stderr
        with pytest.raises(InvalidData):
            from rooms_cli.chat.lifecycle import load_saved

            load_saved(project, "broken")
