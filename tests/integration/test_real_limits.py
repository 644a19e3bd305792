"""Every model call is bounded (issue 24, item 1), checked on the engine's side: SmolLM2-135M-Instruct
on llama.cpp, asked for long answers, never generates past the configured limit.

How many tokens each request generated is read from the engine's own log (`LlamaServer.generated`),
not from what `rooms` reports, so a limit that was never sent cannot pass.
"""

from __future__ import annotations

import pytest

from .conftest import SMOL_AGENTS

pytestmark = [pytest.mark.integration, pytest.mark.realmodel]

MEMBERS = ",".join(sorted(SMOL_AGENTS))


def limit_provider(root, max_tokens: int) -> None:
    """`providers.smol.max_tokens` in the project's .rooms.yaml."""
    config = root / ".rooms.yaml"
    text = config.read_text("utf-8").replace("max_retries: 0}", f"max_retries: 0, max_tokens: {max_tokens}}}")
    config.write_text(text, "utf-8")


def test_the_providers_max_tokens_bounds_every_agent_of_a_jam(smol_server, smol_project, rooms):
    limit_provider(smol_project(smol_server), 6)
    mark = smol_server.log_mark()
    run = rooms("chat", "@jam describe your week in detail, at least five paragraphs", "--json", timeout=300)
    assert run.exit_code == 0, run.stderr
    # at temperature 0 the four agents' first six tokens are often the same line: the first is spoken,
    # the others are stored as repeats of it (a reader sees it once); every agent answered either way
    answered = [r for r in run.json()["replies"] if r["kind"] in ("message", "repeat")]
    spoken = [r for r in answered if r["kind"] == "message"]
    assert sorted(r["speaker"] for r in answered) == sorted(SMOL_AGENTS) and spoken, answered
    assert all(r["usage"]["output_tokens"] <= 6 for r in spoken), spoken
    generated = smol_server.generated(mark)
    assert len(generated) == len(SMOL_AGENTS) and max(generated) <= 6, generated


def test_every_member_and_ballot_call_of_a_rank_is_bounded(smol_server, smol_project, rooms):
    limit_provider(smol_project(smol_server), 16)
    mark = smol_server.log_mark()
    run = rooms("group", "ask", "--profiles", MEMBERS, "--objective", "Write a long plan for launch week, at least "
                "ten steps.", "--reducer", "rank", "--json", timeout=300)
    assert run.stdout.strip(), run.stderr
    assert run.json()["metadata"]["replied"] == len(SMOL_AGENTS), run.stderr
    generated = smol_server.generated(mark)
    assert len(generated) >= 2 * len(SMOL_AGENTS)  # the answers, then a ballot each (retries allowed)
    assert max(generated) <= 16, generated
