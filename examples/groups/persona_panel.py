"""Role-persona panel: PM, engineer and designer personas react to the same RFC, each voice kept
intact (wait_all + join_by_handle), then ranked by each other (the `rank` reducer).

    python examples/groups/persona_panel.py
"""

import asyncio

from _project import ensure_project, fresh, short

import rooms_cli

FIELDS = dict(
    objective="react to RFC-014 (per-tenant rate limits) from your role's lens",
    output_format="three sections — risks, what you'd cut, what you'd add — bullet lists, ≤120 words each",
    tool_guidance="Read the RFC file; no other tools",
    boundaries="speak in your role's voice; no general engineering advice that ignores your role",
)


async def main() -> None:
    await fresh("rfc-panel")
    await rooms_cli.spawn_group("rfc-panel", ["boss", "engineer", "designer"], handles=["pm", "eng", "ux"])
    await rooms_cli.broadcast("rfc-panel", **FIELDS)
    panel = await rooms_cli.wait_all("rfc-panel", timeout=300, reducer="join_by_handle")
    for persona, reaction in panel.reduced.items():
        print(f"{persona:>4}: {short(reaction)}")
    # the same replies, reduced again: each persona ranks the others' anonymised reactions
    best = await rooms_cli.wait_all("rfc-panel", reducer="rank")
    if best.reduced is None:  # no ballot could be read (see best.metadata["unparsed"])
        print(f"no ranking: {best.metadata['parsed']} ballots read (labels {best.metadata['labels']})")
    else:
        print(f"ranked best by the panel: {best.metadata['winner_handle']} (labels {best.metadata['labels']})")


if __name__ == "__main__":
    ensure_project()
    asyncio.run(main())
