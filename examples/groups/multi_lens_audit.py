"""Multi-lens code audit: three reviewers with distinct lenses see the same PR; every voice is kept,
keyed by who said it (wait_all + join_by_handle).

    python examples/groups/multi_lens_audit.py
"""

import asyncio

from _project import ensure_project, fresh, short

import rooms_cli


async def main() -> None:
    await fresh("audit")
    await rooms_cli.spawn_group("audit", ["reviewer", "architect", "ops"])
    await rooms_cli.broadcast(
        "audit",
        objective="review PR #214 on branch feat/rate-limit",
        output_format="markdown bullet list, each item severity-tagged (high/med/low) and file:line-anchored",
        tool_guidance="prefer Read + Grep; avoid Bash and Edit",
        boundaries="report only — no patches, no commits",
    )
    result = await rooms_cli.wait_all("audit", timeout=300, reducer="join_by_handle")
    for reviewer, report in result.reduced.items():
        print(f"{reviewer:>10}: {short(report)}")


if __name__ == "__main__":
    ensure_project()
    asyncio.run(main())
