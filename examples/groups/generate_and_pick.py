"""Generate-and-pick: N attempts at the same artifact, reduced to one by a custom reducer
registered with register_reducer (signature: (by_member, order) -> Any).

    python examples/groups/generate_and_pick.py

On a real model use five copies of one profile (["writer"] * 5); the offline model answers the
same profile identically, so this example mixes five personas to get five different candidates.
"""

import asyncio

from _project import ensure_project, fresh, short

import rooms_cli


def longest_on_topic(by_member, order):
    """The longest candidate that mentions the topic (cache); ties go to the earlier arrival."""
    candidates = [by_member[h].text for h in order if by_member[h].status == "ok"]
    on_topic = [t for t in candidates if "cache" in t.lower()] or candidates
    return max(on_topic, key=len, default="")


async def main() -> None:
    rooms_cli.register_reducer("longest_on_topic", longest_on_topic)
    await fresh("outlines")
    await rooms_cli.spawn_group("outlines", ["writer", "analyst", "hustler", "wildcard", "boss"])
    await rooms_cli.broadcast(
        "outlines",
        objective="outline a 3000-word essay on cache invalidation",
        output_format="markdown headings with one-sentence summaries; include at least one worked example",
        tool_guidance="prose only; no tools",
        boundaries="≤500 words; no bibliography",
    )
    pick = await rooms_cli.wait_all("outlines", timeout=240, reducer="longest_on_topic")
    for handle in pick.order:
        print(f"{handle:>9}: {short(pick.by_member[handle].text, 80)}")
    print(f"picked: {short(pick.reduced)}")


if __name__ == "__main__":
    ensure_project()
    asyncio.run(main())
