"""Task dependencies from the command line, in a fresh project: `task add|update --depends-on`, `task
ready`, `task next` and `task claim` of waiting tasks, refused cycles and unknown ids, import, and what
`rooms board` says. Exit codes and one-sentence errors are the documented ones (0, 1, 3)."""

from __future__ import annotations

import json

ROOM = "default"


def ok(run):
    assert run.exit_code == 0, run.stderr
    return run.json() if run.stdout.strip().startswith(("{", "[", "null")) else run


def add(cli, title, lane, *deps):
    args = ["task", "add", title, "--lane", lane, "--done", "it is done", "--json"]
    for dep in deps:
        args += ["--depends-on", dep]
    return ok(cli(*args))["id"]


def logs(project_dir):
    folder = project_dir / ".rooms" / "rooms" / ROOM / "board" / "tasks"
    return {p.name: p.read_text() for p in folder.glob("*.jsonl")}


def test_depends_on_is_repeatable_comma_separated_and_takes_prefixes(project_dir, cli):
    from rooms_cli.board.render import short_ids

    schema, spec = add(cli, "Write the schema", "db"), add(cli, "Write the spec", "writer")
    api = add(cli, "Wire the API", "api", short_ids([schema, spec])[schema], spec)
    short = short_ids([schema, spec, api])
    both = add(cli, "Ship", "api", f"{schema},{short[api][2:].lower()}")  # a prefix, without `t-`, in any case
    shown = ok(cli("task", "show", api, "--json"))
    assert shown["depends_on"] == sorted([schema, spec]) and shown["blocked_by"] == sorted([schema, spec])
    assert ok(cli("task", "show", both, "--json"))["depends_on"] == sorted([schema, api])
    listed = {t["id"]: t for t in ok(cli("task", "list", "--json"))}
    assert listed[both]["blocked_by"] == sorted([schema, api]) and listed[schema]["blocked_by"] == []
    board = ok(cli("board", "--json"))
    assert board["counts"]["ready"] == 2 and board["counts"]["waiting"] == 2
    assert set(board["blockers"]) == {schema, spec, api}


def test_update_replaces_the_dependencies_and_an_empty_value_clears_them(project_dir, cli):
    a, b, c = add(cli, "a", "dev"), add(cli, "b", "dev"), add(cli, "c", "dev")
    assert ok(cli("task", "update", c, "--depends-on", a, "--json"))["depends_on"] == [a]
    assert ok(cli("task", "update", c, "--depends-on", b, "--depends-on", a, "--json"))["depends_on"] == sorted([a, b])
    assert ok(cli("task", "update", c, "--depends-on", "", "--json"))["depends_on"] == []


def test_next_hands_out_only_ready_work_and_prints_null_when_none_is(project_dir, cli):
    schema = add(cli, "Write the schema", "db")
    api = add(cli, "Wire the API", "api", schema)
    nothing = cli("task", "next", "--as", "api", "--json")
    assert nothing.exit_code == 0 and nothing.stdout.strip() == "null"
    human = cli("task", "next", "--as", "api")
    assert human.exit_code == 0 and "nothing to claim in lane api" in human.stdout and "1 waiting on other tasks" in human.stdout
    claim = ok(cli("task", "next", "--as", "db", "--json"))
    ok(cli("task", "done", schema, "--as", "db", "--lease-id", claim["lease_id"], "--summary", "written", "--json"))
    assert ok(cli("task", "next", "--as", "api", "--json"))["task"]["id"] == api


def test_claiming_a_waiting_task_exits_3_blocked_naming_what_it_waits_on(project_dir, cli):
    schema = add(cli, "Write the schema", "db")
    api = add(cli, "Wire the API", "api", schema)
    before = logs(project_dir)
    run = cli("task", "claim", api, "--as", "api", "--json")
    assert run.exit_code == 3 and run.stdout == ""
    error = run.err_json()["error"]
    assert error["code"] == "blocked" and schema in error["message"] and "Write the schema" in error["message"]
    assert error["data"]["blocked_by"] == [schema]
    human = cli("task", "claim", api, "--as", "api")
    assert human.exit_code == 3 and human.stderr.count("\n") == 1 and "waits on" in human.stderr
    assert logs(project_dir) == before


def test_task_ready_lists_the_ready_work_across_lanes(project_dir, cli):
    schema = add(cli, "Write the schema", "db")
    add(cli, "Wire the API", "api", schema)
    add(cli, "Write the docs", "writer")
    assert [t["title"] for t in ok(cli("task", "ready", "--json"))] == ["Write the schema", "Write the docs"]
    assert [t["title"] for t in ok(cli("task", "ready", "--lane", "writer", "--json"))] == ["Write the docs"]
    assert ok(cli("task", "ready", "--lane", "api", "--json")) == []
    text = cli("task", "ready").stdout
    assert "Write the schema" in text and "Wire the API" not in text
    assert "Nothing is ready" in cli("task", "ready", "--lane", "api").stdout


def test_task_ready_as_a_process_through_the_fast_path(project_dir, rooms, cli):
    schema = add(cli, "Write the schema", "db")
    add(cli, "Wire the API", "api", schema)
    run = rooms("task", "ready", "--json", env={"ROOMS_DIR": str(project_dir)})
    assert run.exit_code == 0 and [t["id"] for t in json.loads(run.stdout)] == [schema]


def test_a_cycle_or_an_unknown_id_exits_1_in_one_sentence_and_writes_nothing(project_dir, cli):
    a = add(cli, "a", "dev")
    b = add(cli, "b", "qa", a)
    before = logs(project_dir)
    for args, code, words in (
        (["task", "update", a, "--depends-on", b], "dependency_cycle", f"{a} “a” → {b} “b” → {a} “a” would be a dependency cycle"),
        (["task", "update", a, "--depends-on", a], "dependency_cycle", f"task {a} cannot depend on itself"),
        (["task", "update", a, "--depends-on", "t-NOPE", "--title", "x"], "not_found", "no task 't-NOPE'"),
        (["task", "add", "c", "--lane", "dev", "--done", "x", "--depends-on", "t-NOPE"], "not_found", "no task 't-NOPE'"),
    ):
        run = cli(*args, "--json")
        assert run.exit_code == 1, run.stderr
        error = run.err_json()["error"]
        assert error["code"] == code and words in error["message"]
        human = cli(*args)
        assert human.exit_code == 1 and human.stderr.count("\n") == 1 and words in human.stderr
    assert logs(project_dir) == before


def test_import_reads_refs_and_dependencies_and_a_cycle_refuses_the_whole_file(project_dir, cli, tmp_path):
    plan = tmp_path / "plan.jsonl"
    plan.write_text("".join(json.dumps(r) + "\n" for r in [
        {"ref": "schema", "title": "Write the schema", "lane": "db"},
        {"ref": "api", "title": "Wire the API", "lane": "api", "depends_on": ["schema"]},
        {"title": "Document the API", "lane": "writer", "depends_on": "schema,api"},
    ]))
    assert ok(cli("task", "import", plan, "--json"))["imported"] == 3
    assert [t["title"] for t in ok(cli("task", "ready", "--json"))] == ["Write the schema"]
    looped = tmp_path / "loop.jsonl"
    looped.write_text('{"ref": "x", "title": "x", "lane": "dev", "depends_on": ["y"]}\n'
                      '{"ref": "y", "title": "y", "lane": "dev", "depends_on": ["x"]}\n')
    before = logs(project_dir)
    run = cli("task", "import", looped)
    assert run.exit_code == 1 and "dependency cycle" in run.stderr and "nothing was imported" in run.stderr
    assert logs(project_dir) == before


def test_the_board_marks_waiting_tasks_and_says_when_a_person_must_decide(project_dir, cli):
    schema = add(cli, "Write the schema", "db")
    api = add(cli, "Wire the API", "api", schema)
    text = cli("board").stdout
    assert "2 todo, 1 ready, 1 waiting" in text and "waits on" in text and "“Write the schema” (todo)" in text
    assert "DECIDE" not in text
    ok(cli("task", "set-status", schema, "cancelled", "--json"))
    text = cli("board").stdout
    assert "(cancelled: a person must decide)" in text
    assert f"DECIDE {api[:12]}" in text
    assert "a person must decide" in cli("board", "--format", "md").stdout
    show = cli("task", "show", api).stdout
    assert "waits on" in show and "cancelled: a person must decide" in show
    doctor = cli("doctor", "--offline")
    assert "which is cancelled: it cannot become ready" in doctor.stdout
