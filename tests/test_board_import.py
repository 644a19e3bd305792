"""`rooms task import`: every row checked first, one process, round trip through `task list --json`, Backlog.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.board import importing, openindex
from rooms_cli.board.render import board_view, list_tasks

ROOM = "default"
FIXTURE = Path(__file__).parent / "fixtures" / "backlog"


def ids_on(project):
    return sorted(openindex.load(project, ROOM)["open"])


def test_each_format_imports(project, cli, tmp_path):
    (tmp_path / "a.md").write_text("# plan\n- [ ] write spec\n- [x] old thing\ntext\n")
    (tmp_path / "b.csv").write_text("title,lane,done,status\nship it,dev,released,blocked\n")
    (tmp_path / "c.jsonl").write_text('{"title": "one", "lane": "qa", "detail": "d", "order": 7}\n\n')
    assert cli("task", "import", tmp_path / "a.md", "--lane", "dev").exit_code == 0
    assert cli("task", "import", tmp_path / "b.csv").exit_code == 0
    result = cli("task", "import", tmp_path / "c.jsonl", "--json")
    assert result.exit_code == 0 and result.json()["imported"] == 1
    tasks = {t["title"]: t for t in list_tasks(project, ROOM)}
    assert tasks["write spec"]["status"] == "todo" and tasks["old thing"]["status"] == "done"
    assert tasks["ship it"]["status"] == "blocked" and tasks["ship it"]["definition_of_done"] == "released"
    assert tasks["one"]["order"] == 7 and tasks["one"]["detail"] == "d" and tasks["one"]["lane"] == "qa"
    assert board_view(project, ROOM)["counts"]["done"] == 1  # the index saw the import without a rebuild


@pytest.mark.parametrize("text, named", [
    ('{"title": "ok", "lane": "dev"}\n{"title": "", "lane": "dev"}\n', "line 2: title must not be empty"),
    ('{"title": "ok", "lane": "dev"}\nnot json\n', "line 2: not JSON"),
    ('{"title": "ok"}\n', "line 1: no lane"),
    ('{"title": "ok", "lane": "dev", "status": "shipped"}\n', "line 1: status must be one of"),
    ('{"title": "ok", "lane": "../x"}\n', "line 1: lane '../x' is not a valid agent id"),
])
def test_one_bad_line_adds_nothing_and_is_named(project, cli, tmp_path, text, named):
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    result = cli("task", "import", path)
    assert result.exit_code == 1 and named in result.stderr
    assert ids_on(project) == [] and list_tasks(project, ROOM) == []


def test_export_round_trips_through_import(project, cli, tmp_path):
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in [
        {"title": "a", "lane": "dev", "done": "x", "detail": "more", "order": 3},
        {"title": "b", "lane": "qa", "done": "y", "status": "done", "summary": "shipped"},
        {"title": "c", "lane": "dev", "done": "z", "status": "cancelled"},
    ]))
    assert cli("task", "import", source).exit_code == 0
    exported = cli("task", "list", "--json").stdout
    (tmp_path / "export.json").write_text(exported)
    other = tmp_path / "other"
    other.mkdir()
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    initialize(other)
    second = open_project(other)
    rows = importing.parse(exported, "json", name="export.json")
    importing.import_rows(second, ROOM, rows, by="alice")
    keep = ("title", "lane", "definition_of_done", "detail", "order", "status")

    def shape(tasks):
        return sorted((tuple(t[k] for k in keep), (t["record"] or {}).get("summary")) for t in tasks)

    assert shape(list_tasks(second, ROOM)) == shape(json.loads(exported))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40)
                .filter(lambda s: s.strip()), min_size=1, max_size=5))
def test_titles_survive_jsonl_and_csv(titles):
    import csv
    import io

    jsonl = "".join(json.dumps({"title": t, "lane": "dev"}) + "\n" for t in titles)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["title", "lane"])
    writer.writerows([t, "dev"] for t in titles)
    for text, fmt in ((jsonl, "jsonl"), (out.getvalue(), "csv")):
        assert [r.title for r in importing.parse(text, fmt)] == [t.strip() for t in titles]


def test_backlog_md_project(project, cli):
    result = cli("task", "import", FIXTURE, "--from", "backlog", "--lane", "dev", "--json")
    assert result.exit_code == 0 and result.json()["imported"] == 3
    tasks = {t["title"]: t for t in list_tasks(project, ROOM)}
    assert tasks["Set up CI"]["status"] == "done"
    assert tasks["Set up CI"]["detail"] == "Run the tests on every push.\n\nlabels: infra, ci"
    assert tasks["Write the auth spec"]["status"] == "todo"
    assert tasks["Write the auth spec"]["detail"].startswith("Describe login, logout and token refresh.")
    assert tasks["Drop the old API"]["status"] == "todo" and tasks["Drop the old API"]["lane"] == "dev"


def test_stdin_and_unknown_format(project, cli, tmp_path):
    assert cli("task", "import", "-", "--lane", "dev", input='{"title": "from stdin"}\n').exit_code == 0
    (tmp_path / "x.txt").write_text("a\n")
    result = cli("task", "import", tmp_path / "x.txt")
    assert result.exit_code == 1 and "--format" in result.stderr
