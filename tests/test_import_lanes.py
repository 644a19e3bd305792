"""`rooms task import --from backlog` takes each task's lane from its assignee, and imported tasks get
ids as short on the board as `task add`'s (issue 45, item 10)."""

from __future__ import annotations

import pytest

from rooms_cli.board.render import MIN_SHORT, short_ids


def backlog(root, tasks: dict[str, str]) -> None:
    folder = root / "backlog" / "tasks"
    folder.mkdir(parents=True)
    for name, front in tasks.items():
        (folder / f"{name}.md").write_text(f"---\n{front}\n---\n\n## Description\n\nDo it.\n")


def test_a_backlog_md_task_s_assignee_is_its_lane(project, cli, tmp_path):
    backlog(tmp_path, {
        "task-1 - One": "id: task-1\ntitle: One\nstatus: To Do\nassignee:\n  - '@ops'",
        "task-2 - Two": "id: task-2\ntitle: Two\nstatus: Done\nassignee: ['@Research Er', '@ops']",
        "task-3 - Three": "id: task-3\ntitle: Three\nstatus: In Progress\nassignee: '@reviewer'",
    })
    run = cli("task", "import", "--from", "backlog", str(tmp_path), "--json")
    assert run.exit_code == 0, run.stderr
    tasks = {t["title"]: (t["lane"], t["status"]) for t in cli("task", "list", "--json").json()}
    assert tasks == {"One": ("ops", "todo"), "Two": ("research-er", "done"), "Three": ("reviewer", "todo")}


def test_an_unassigned_backlog_task_needs_lane_and_says_so(project, cli, tmp_path):
    backlog(tmp_path, {"task-1 - One": "id: task-1\ntitle: One\nstatus: To Do"})
    run = cli("task", "import", "--from", "backlog", str(tmp_path))
    assert run.exit_code == 1 and "task-1 - One.md: no lane" in run.stderr and "--lane" in run.stderr
    assert cli("task", "list", "--json").json() == []
    assert cli("task", "import", "--from", "backlog", str(tmp_path), "--lane", "ops").exit_code == 0


@pytest.mark.parametrize("rows, extra", [(20, 2), (200, 3)])
def test_imported_tasks_are_as_short_on_the_board_as_added_ones(project, cli, tmp_path, rows, extra):
    """A lone `task add` shows its creation millisecond (MIN_SHORT characters); an import of N tasks at most
    log32(N) + 1 more (not 25 characters: ids counted up within one millisecond differ only at the end)."""
    (tmp_path / "many.jsonl").write_text("".join(f'{{"title": "task {n}", "lane": "ops"}}\n' for n in range(rows)))
    ids = cli("task", "import", str(tmp_path / "many.jsonl"), "--json").json()["ids"]
    shown = short_ids(ids)
    assert max(len(s) for s in shown.values()) <= len("t-") + MIN_SHORT + extra, sorted(shown.values())[:3]
    assert ids == sorted(ids)  # in row order, as before
    later = cli("task", "add", "after", "--lane", "ops", "--done", "x", "--json").json()["id"]
    assert later > ids[-1]
