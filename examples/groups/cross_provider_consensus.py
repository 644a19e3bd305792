"""Cross-provider consensus: the same prompt to three models, voted (majority_vote). Agreement ships;
disagreement is evidence to look closer. Uses an ephemeral group, so nothing is left behind.

    python examples/groups/cross_provider_consensus.py                      # three offline oracles
    python examples/groups/cross_provider_consensus.py ollama:llama3.2 openai:gpt-4o-mini offline

Each argument is a model string; one agent per model is created (oracle-1, oracle-2…).
"""

import asyncio
import sys

from _project import ensure_project, short

import rooms_cli
from rooms_cli.agents.definitions import Agent, create_agent


def oracles(project, models: list[str]) -> list[str]:
    ids = []
    for n, model in enumerate(models, start=1):
        agent = Agent(id=f"oracle-{n}", name=f"Oracle {n}", tags=["regex", "review"], model=model,
                      directive="Answer with exactly one token from the allowed set. No prose.")
        create_agent(project, agent, overwrite=True)
        ids.append(agent.id)
    return ids


async def main(profiles: list[str]) -> None:
    async with rooms_cli.ephemeral_group(profiles=profiles) as g:
        await g.broadcast(
            objective=r"is the regex r'^\d{4}-\d{2}-\d{2}$' anchored?",
            output_format="exactly one of: ANCHORED | UNANCHORED | AMBIGUOUS",
            tool_guidance="answer from knowledge; no tools needed",
            boundaries="single token only — no prose, no quoting",
        )
        verdict = await g.wait_all(timeout=60, reducer="majority_vote")
    for handle, reply in verdict.by_member.items():
        print(f"{handle:>9}: {short(reply.text)}")
    if verdict.reduced is None:
        print(f"no consensus: the answers differ — look closer (votes: {list(verdict.metadata['votes'].values())})")
    else:
        print(f"consensus: {verdict.reduced}")


if __name__ == "__main__":
    project = ensure_project()
    asyncio.run(main(oracles(project, sys.argv[1:] or ["offline", "offline", "offline"])))
