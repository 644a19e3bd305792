"""Fastest-answer race: two analysts read the same question; the first answer wins and the loser's
in-flight model call is cancelled at once (wait_any, cancel_losers=True).

    python examples/groups/fastest_answer_race.py
"""

import asyncio

from _project import ensure_project, fresh, short

import rooms_cli


async def main() -> None:
    await fresh("quick-lookup")
    await rooms_cli.spawn_group("quick-lookup", ["researcher", "analyst"])
    await rooms_cli.broadcast(
        "quick-lookup",
        objective="what does worker.py:_run_turn return on harness error?",
        output_format="one-paragraph answer plus the relevant code excerpt",
        tool_guidance="Read + Grep; one file only",
        boundaries="no edits, no other files",
    )
    winner = await rooms_cli.wait_any("quick-lookup", timeout=120, cancel_losers=True)
    print(f"winner: {winner.metadata['winner_handle']} after {winner.metadata['elapsed_s']}s")
    print(f"answer: {short(winner.reduced)}")
    for handle, reply in winner.by_member.items():
        print(f"{handle:>12}: {reply.status}")


if __name__ == "__main__":
    ensure_project()
    asyncio.run(main())
