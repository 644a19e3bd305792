"""Every MCP tool, called once on its happy path by the SDK client over stdio: its structuredContent is
an object that validates against the outputSchema it lists (the list of tools called must be the list
the server offers, so a new tool without a call here fails)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the extra rooms-cli[mcp] (in the test extras)")

from tests.test_mcp import server  # noqa: E402


def test_every_tool_returns_structured_content_that_validates_against_its_output_schema(project_dir, monkeypatch):
    import subprocess

    from jsonschema import Draft202012Validator

    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "t")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "t@example.com")
    remote = project_dir.parent / "remote.git"
    for args in (["init", "-q", "--bare", str(remote)], ["-C", str(project_dir), "init", "-q"],
                 ["-C", str(project_dir), "remote", "add", "origin", str(remote)]):
        subprocess.run(["git", *args], check=True, capture_output=True)

    (project_dir / ".rooms" / "agents" / "outside.md").write_text(
        "---\nid: outside\nmodel: external\n---\nA coding agent in another terminal.\n")
    (project_dir / "spec.md").write_text("# Spec\n")
    results: dict[str, object] = {}

    async def go():
        async with server(project_dir, "alice") as a, server(project_dir, "bob") as b:
            async def call(t, tool, **arguments):
                result = await t.raw(tool, **arguments)
                assert not result.is_error, (tool, result.content[0].text)
                results[tool] = result.structured_content
                return result.structured_content

            tools = {tool.name: tool for tool in (await a.client.list_tools()).tools}
            # board
            await call(a, "board")
            task = await call(a, "task_add", title="Write the spec", lane="alice", done="spec exists")
            await call(a, "task_list")
            after = await call(a, "task_add", title="Review the spec", lane="bob", done="reviewed", depends_on=[task["id"]])
            assert after["blocked_by"] == [task["id"]]
            assert [t["id"] for t in (await call(a, "task_ready"))["tasks"]] == [task["id"]]
            await call(a, "task_show", task_id=task["id"])
            await call(a, "task_update", task_id=task["id"], detail="two pages")
            assert (await call(a, "task_update", task_id=after["id"], depends_on=[]))["depends_on"] == []
            claim = await call(a, "task_claim", task_id=task["id"], lease="5m")
            await call(a, "task_renew", task_id=task["id"], lease_id=claim["lease_id"])
            await call(a, "task_release", task_id=task["id"], lease_id=claim["lease_id"])
            claim = await call(a, "task_next")
            await call(a, "task_done", task_id=task["id"], lease_id=claim["lease_id"], summary="written",
                       artifacts=["file:spec.md"], next_step="review it")
            await call(a, "task_archive", task_id=task["id"])
            other = await a.ok("task_add", title="Review", lane="alice", done="reviewed")
            await call(a, "task_status", task_id=other["id"], status="blocked", summary="waiting")
            await a.ok("task_status", task_id=other["id"], status="todo")
            await call(a, "task_assign", task_id=other["id"], to="bob")
            await call(b, "task_reject", task_id=other["id"])
            await a.ok("task_assign", task_id=other["id"], to="bob")
            await call(b, "task_accept", task_id=other["id"])
            # messaging
            await call(a, "status_set", text="writing specs")
            await call(a, "send", to="bob", message="ping")
            await call(b, "reply", n=1, message="pong")
            await call(a, "inbox", peek=True)
            await call(a, "attention", peek=True)
            overview = await call(b, "status")
            assert overview["agent"] == "bob" and overview["agents"][0]["status"] == "writing specs"
            await call(a, "spawn", prompt="Summarize the spec", description="summary")
            await call(a, "wait", timeout_seconds=120)
            # groups
            await call(a, "group_spawn", name="panel", profiles=["outside"])
            await call(a, "group_broadcast", name="panel", objective="ship it? YES or NO")
            await call(a, "group_status", name="panel")
            await call(b, "group_reply", name="panel", text="YES", handle="outside")
            await call(a, "group_wait", name="panel", timeout_seconds=60)
            await a.ok("group_broadcast", name="panel", objective="and now?")
            await call(a, "group_cancel", name="panel")
            await call(a, "group_list")
            await call(a, "group_dissolve", name="panel")
            await call(a, "group_ask", profiles=["analyst", "wildcard"], objective="YES or NO?", reducer="majority_vote",
                       timeout_seconds=60)
            # chat and rooms
            await call(a, "room_create", room="specs", agents=["researcher", "analyst"])
            await call(a, "room_list")
            await call(a, "room_show", room="specs")
            await call(a, "room_invite", room="specs", agent="architect")
            await call(a, "room_kick", room="specs", agent="architect")
            await call(a, "chat", message="@researcher what is the rate limit?", room="specs")
            await call(a, "transcript", room="specs", limit=5)
            found = await call(a, "search", query="rate limit", within=["chat"], limit=5)
            assert found["hits"] and found["hits"][0]["ref"].startswith("msg:")
            # roundtable and memory
            await call(a, "roundtable_run", format="debate", topic="monorepo or not", participants=["analyst", "hustler"],
                       turns=2, force=True)
            await call(a, "roundtable_queue", format="retro", topic="last sprint")
            await call(a, "roundtable_list")
            await call(a, "memory_list")
            await call(a, "memory_forget", agent="analyst", all=True)
            # files and events
            await call(a, "reserve_files", patterns=["src/**"], reason="refactor")
            await call(b, "check_files", paths=["src/a.py"])
            await call(a, "list_reservations")
            await call(a, "release_files", all=True)
            await call(a, "events", last=5)
            synced = await call(a, "sync")
            assert synced["remote"] == "origin" and synced["sent"] > 0
            return tools

    tools = asyncio.run(go())
    assert set(results) == set(tools), sorted(set(tools) - set(results))
    for name, content in results.items():
        assert isinstance(content, dict), name
        errors = sorted(Draft202012Validator(tools[name].output_schema).iter_errors(content), key=str)
        assert not errors, (name, errors[0].message)
