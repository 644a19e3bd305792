"""`rooms top`: keys pressed through Textual's Pilot write what the CLI writes; the view follows
other processes; the command line (extra missing, --snapshot, bad values); nothing else imports textual.

The project is tests/topkit.py's (at ROOMS_NOW): lanes researcher (a held task, a todo one), reviewer
(a double claim), ops (a lapsed claim, a done task), architect; a group `rev` with a broadcast in flight.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import topkit
from conftest import RETURN_FROM_MAIN, rooms_env

pytest.importorskip("textual")

from textual.widgets import DataTable, Input, RichLog, TabbedContent  # noqa: E402

from rooms_cli.project.context import Context  # noqa: E402
from rooms_cli.tui.app import LaneTable, SayInput, TopApp  # noqa: E402
from rooms_cli.tui.screens import (  # noqa: E402
    ConfirmScreen,
    FieldsScreen,
    HitScreen,
    KeysScreen,
    LassoScreen,
    PickScreen,
    SearchScreen,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """The seeded project, built once for the module (each test works on its own copy)."""
    return topkit.seeded_template(tmp_path_factory, "top")


@pytest.fixture
def demo(template, tmp_path, monkeypatch) -> Path:
    root = topkit.copy_of(template, tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    return root


def project_of(root: Path):
    from rooms_cli.store.paths import open_project

    return open_project(root)


def task_id(root: Path, title: str) -> str:
    from rooms_cli.board.tasks import board_json

    return next(t["id"] for t in board_json(project_of(root), "default") if t["title"] == title)


def task(root: Path, title: str):
    from rooms_cli.board.tasks import load_task

    return load_task(project_of(root), "default", task_id(root, title))


def drive(root: Path, scenario, *, live: bool = False, size=(120, 40), tab: str = "board", as_: str = "alice") -> TopApp:
    """Run the app on `root` headless, wait for its first full frame, then `await scenario(pilot)`."""
    app = TopApp(Context.open(str(root), as_=as_), tab=tab, live=live)

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await until(pilot, app.loaded.is_set)
            await pilot.pause()
            await scenario(pilot)

    asyncio.run(main())
    return app


async def until(pilot, condition, timeout: float = 20.0) -> float:
    """Pause until `condition()` holds; the seconds it took."""
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            raise AssertionError(f"not within {timeout}s: {condition}")
        await pilot.pause(0.01)
    return time.monotonic() - began


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def select_task(pilot, tid: str) -> None:
    app = pilot.app
    app.query_one(TabbedContent).active = "board"
    await pilot.pause()
    for table in app.query(LaneTable):
        if tid in table.rows:
            table.focus()
            table.move_cursor(row=table.get_row_index(tid))
            await pilot.pause()
            return
    raise AssertionError(f"{tid} is not on the board")


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space"}.get(ch, ch) for ch in text])


async def answer_fields(pilot, *texts: str) -> None:
    """Type each text into the dialog's next field and press Enter (the last Enter sends it)."""
    for text in texts:
        await type_text(pilot, text)
        await pilot.press("enter")


def note(app: TopApp) -> str:
    return str(app.query_one("#note").render())


def files_under(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under .rooms/ but run/ (local caches), with its size and mtime."""
    out = {}
    for path in (root / ".rooms").rglob("*"):
        rel = path.relative_to(root / ".rooms")
        if path.is_file() and rel.parts[0] != "run" and not path.name.endswith(".lock"):
            st = path.stat()
            out[str(rel)] = (st.st_size, st.st_mtime_ns)
    return out


def cli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rooms_cli", *args], capture_output=True, text=True, timeout=60,
                          cwd=root, env=rooms_env({"ROOMS_DIR": str(root), **env}))


def group_pane(app: TopApp, name: str) -> str:
    return app.group_panes[name]


async def open_dialog(pilot, group: str, key: str, screen: type) -> None:
    """Show `group`'s tab, press `key` there, and wait for its dialog (`screen`)."""
    pilot.app.query_one(TabbedContent).active = group_pane(pilot.app, group)
    await pilot.pause()
    await pilot.press(key)
    await until(pilot, lambda: isinstance(pilot.app.screen, screen))


# --- the board's keys ----------------------------------------------------------------------------


def test_c_x_d_claim_release_and_finish_the_selected_task_as_rooms_task_does(demo):
    survey = task_id(demo, "Survey rate limits")
    seen = {}

    async def scenario(pilot):
        await select_task(pilot, survey)
        await pilot.press("c")
        await settle(pilot)
        seen["claimed"] = task(demo, "Survey rate limits")
        seen["claim_note"] = note(pilot.app)
        await pilot.press("x")
        await settle(pilot)
        seen["released"] = task(demo, "Survey rate limits")
        await select_task(pilot, survey)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(pilot.app.screen, FieldsScreen))
        await type_text(pilot, "limits tabled")
        await pilot.press("enter")
        await settle(pilot)

    drive(demo, scenario)
    assert seen["claimed"].status == "doing" and seen["claimed"].lease.holder == "alice"
    assert seen["claim_note"].startswith(f"claimed: {survey} (Survey rate limits) as alice until ")
    assert seen["released"].status == "todo" and seen["released"].lease is None
    finished = task(demo, "Survey rate limits")
    assert finished.status == "done" and finished.record["summary"] == "limits tabled"


def test_a_refused_key_shows_the_sentence_the_cli_prints_and_writes_nothing(demo):
    spec = task_id(demo, "Write the auth spec")  # held by researcher, not by alice
    before = files_under(demo)
    seen = {}

    async def scenario(pilot):
        await select_task(pilot, spec)
        await pilot.press("x")
        await settle(pilot)
        seen["note"] = note(pilot.app)

    drive(demo, scenario)
    proc = cli(demo, "task", "release", spec, ROOMS_AGENT="alice", ROOMS_NOW=topkit.NOW)
    assert proc.returncode == 1
    assert seen["note"] == proc.stderr.strip()  # `error: <the sentence>`, the same words
    assert files_under(demo) == before


def test_the_board_flags_double_and_lapsed_claims_and_hides_archived_tasks(demo):
    from rooms_cli.board.tasks import archive_task

    archive_task(project_of(demo), "default", task_id(demo, "Sketch the architecture"), by="alice")
    cells = {}

    async def scenario(pilot):
        for table in pilot.app.query(LaneTable):
            for key in table.rows:
                cells[key.value] = str(table.get_cell(key, table.ordered_columns[0].key))

    drive(demo, scenario)
    assert "double claim" in cells[task_id(demo, "Review the API")]
    assert "lapsed: ops" in cells[task_id(demo, "Rotate the keys")]
    held = cells[task_id(demo, "Write the auth spec")]
    assert "researcher 15m00s" in held  # holder and lease countdown at ROOMS_NOW
    assert not any("Sketch the architecture" in c for c in cells.values())


def test_a_long_lane_holds_one_page_of_rows_until_the_cursor_nears_its_end(demo):
    from rooms_cli.board.tasks import add_task

    project = project_of(demo)
    for n in range(150):
        add_task(project, "default", f"Chore {n:03d}", lane="scribe", done="done", by="alice")
    seen = {}

    async def scenario(pilot):
        table = next(t for t in pilot.app.query(LaneTable) if t.lane == "scribe")
        seen["first"] = table.row_count
        seen["heading"] = str(table.heading.render())
        table.focus()
        table.move_cursor(row=table.row_count - 1)
        await pilot.press("down")
        await pilot.pause()
        seen["after"] = table.row_count

    drive(demo, scenario)
    assert seen["first"] == LaneTable.PAGE == 100
    assert seen["heading"] == "lane scribe · 150"
    assert seen["after"] == 150


# --- cancel writes nothing -----------------------------------------------------------------------


def test_every_dialog_cancelled_writes_nothing(demo):
    from rooms_cli.groups import roster

    roster.spawn(project_of(demo), "pair", ["scribe", "judge"])  # nothing in flight: the composer opens
    before = files_under(demo)
    opened = []

    async def scenario(pilot):
        app = pilot.app
        await select_task(pilot, task_id(demo, "Survey rate limits"))
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, FieldsScreen))
        opened.append(FieldsScreen)
        await type_text(pilot, "half")
        await pilot.press("escape")
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, LassoScreen))
        await pilot.press("space", "tab")
        await type_text(pilot, "nope")
        await pilot.press("escape")
        app.query_one(TabbedContent).active = group_pane(app, "pair")
        await pilot.pause()
        for key, screen in (("ctrl+b", FieldsScreen), ("ctrl+w", ConfirmScreen), ("ctrl+r", FieldsScreen)):
            await pilot.press(key)
            await until(pilot, lambda screen=screen: isinstance(app.screen, screen))
            opened.append(screen)
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, (FieldsScreen, ConfirmScreen)))
        # Enter on the dissolve dialog is Cancel (the focused button): nothing happens either
        await pilot.press("ctrl+w")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")
        await settle(pilot)

    drive(demo, scenario)
    assert len(opened) == 4  # done, composer, dissolve, rename (and the lasso)
    assert files_under(demo) == before


# --- groups: lasso, composer, dissolve, rename ---------------------------------------------------


def test_ctrl_g_lasso_creates_the_group_and_its_tab(demo):
    from rooms_cli.groups import log

    labels = {}

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, LassoScreen))
        # the agents in name order: architect, judge, ops, researcher, reviewer, scribe
        await pilot.press("space", "down", "space", "tab")
        await type_text(pilot, "duo")
        await pilot.press("enter")
        await settle(pilot)
        await until(pilot, lambda: "duo" in app.group_panes)
        labels["duo"] = str(app.query_one(TabbedContent).get_tab(app.group_panes["duo"]).label)

    drive(demo, scenario)
    group = log.load(project_of(demo), "duo")
    assert [m.profile for m in group.members] == ["architect", "judge"]
    assert labels["duo"] == "▣ duo [0/2 ✓]"


def test_ctrl_b_composer_sends_the_four_field_broadcast(demo):
    from rooms_cli.groups import log, roster
    from rooms_cli.messaging.inbox import read_inbox

    roster.spawn(project_of(demo), "pair", ["scribe", "judge"])
    labels = {}

    async def scenario(pilot):
        app = pilot.app
        await open_dialog(pilot, "pair", "ctrl+b", FieldsScreen)
        await answer_fields(pilot, "outline it", "bullets", "no tools", "no dates")
        await settle(pilot)
        await until(pilot, lambda: "⏳" in str(app.query_one(TabbedContent).get_tab(app.group_panes["pair"]).label))
        labels["pair"] = str(app.query_one(TabbedContent).get_tab(app.group_panes["pair"]).label)

    drive(demo, scenario)
    flight = log.load(project_of(demo), "pair").in_flight
    assert flight is not None and flight.sender == "alice"
    assert flight.fields == {"objective": "outline it", "output_format": "bullets",
                             "tool_guidance": "no tools", "boundaries": "no dates"}
    assert labels["pair"] == "▣ pair [2/2 ⏳]"
    envelope = read_inbox(project_of(demo), "scribe")[-1]
    assert envelope.tag == f"group:pair/broadcast:{flight.id}" and "outline it" in envelope.text


def test_ctrl_b_on_a_group_with_a_broadcast_in_flight_shows_the_cli_refusal_before_any_typing(demo):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        app.query_one(TabbedContent).active = group_pane(app, "rev")
        await pilot.pause()
        await pilot.press("ctrl+b")
        await settle(pilot)
        seen["screen"] = type(app.screen).__name__
        seen["note"] = note(app)

    drive(demo, scenario)
    assert seen["screen"] == "Screen", "no composer: its four fields would be typed for nothing"
    proc = cli(demo, "group", "broadcast", "rev", "--objective", "x", "--output-format", "", "--tool-guidance", "",
               "--boundaries", "", ROOMS_AGENT="alice")
    assert proc.returncode == 3
    assert seen["note"] == proc.stderr.strip()


def test_ctrl_w_dissolves_after_the_confirm_and_the_tab_goes(demo):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        await open_dialog(pilot, "rev", "ctrl+w", ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        await until(pilot, lambda: "rev" not in app.group_panes)
        seen["note"] = note(app)

    drive(demo, scenario)
    from rooms_cli.groups import log

    assert not log.exists(project_of(demo), "rev")  # the log ends with a `dissolved` tombstone
    assert seen["note"].startswith("rev: dissolved (cancelled b-")


def test_ctrl_r_renames_the_focused_group_or_shows_why_not(demo):
    from rooms_cli.groups import log, roster

    roster.spawn(project_of(demo), "pair", ["scribe", "judge"])
    seen = {}

    async def rename(pilot, group: str, new: str) -> None:
        await open_dialog(pilot, group, "ctrl+r", FieldsScreen)
        await pilot.press(*["backspace"] * len(group))
        await type_text(pilot, new)
        await pilot.press("enter")
        await settle(pilot)

    async def scenario(pilot):
        app = pilot.app
        await rename(pilot, "rev", "reviewers")  # refused: a broadcast is in flight
        seen["refusal"] = note(app)
        await rename(pilot, "pair", "duo")
        await until(pilot, lambda: "duo" in app.group_panes and "pair" not in app.group_panes)
        seen["label"] = str(app.query_one(TabbedContent).get_tab(app.group_panes["duo"]).label)

    drive(demo, scenario)
    assert log.names(project_of(demo)) == ["duo", "rev"]
    assert seen["refusal"] == f"error: group 'rev' has broadcast {log.load(project_of(demo), 'rev').in_flight.id} in flight; gather or cancel it first"
    assert seen["label"] == "▣ duo [0/2 ✓]"


def test_new_group_tab_key_creates_a_group_from_typed_profiles(demo):
    from rooms_cli.groups import log

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("ctrl+n")  # the fallback of Ctrl+Shift+T
        await until(pilot, lambda: isinstance(app.screen, FieldsScreen))
        await type_text(pilot, "panel")
        await pilot.press("enter")
        await type_text(pilot, "ops,scribe")
        await pilot.press("enter")
        await settle(pilot)
        await until(pilot, lambda: "panel" in app.group_panes)

    drive(demo, scenario)
    assert [m.handle for m in log.load(project_of(demo), "panel").members] == ["ops", "scribe"]


# --- rooms and agents ----------------------------------------------------------------------------


def test_the_input_line_posts_like_rooms_chat_and_the_offline_model_answers(demo):
    from rooms_cli.chat.transcript import read_transcript

    lines = []

    async def scenario(pilot):
        app = pilot.app
        app.query_one(TabbedContent).active = "rooms"
        await pilot.pause()
        app.query_one("#say", Input).focus()
        await type_text(pilot, "@researcher limits?")
        await pilot.press("enter")
        await settle(pilot)
        log = app.query_one("#transcript", RichLog)
        await until(pilot, lambda: any("alice: @researcher limits?" in line.text for line in log.lines))
        lines.extend(line.text for line in log.lines)

    drive(demo, scenario)
    messages = read_transcript(project_of(demo), "default")
    mine = [m for m in messages if m.text == "@researcher limits?"]
    assert mine and mine[0].speaker == "alice"
    answer = messages[messages.index(mine[0]) + 1]
    assert answer.speaker == "researcher" and answer.model and "offline" in answer.model
    assert any(line.startswith("13:00:00 researcher: ") for line in lines[-3:])


def test_rooms_tab_shows_roster_and_budget_and_switches_rooms_from_the_keyboard(demo):
    from rooms_cli.chat.rooms import create_room

    create_room(project_of(demo), "ops-room", ["ops"])
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        app.query_one(TabbedContent).active = "rooms"
        await pilot.pause()
        seen["budget"] = str(app.query_one("#budget").render())
        roster = app.query_one("#roster", DataTable)
        seen["roster"] = [roster.get_row_at(i) for i in range(roster.row_count)]
        app.query_one("#roster").focus()
        await pilot.press("greater_than_sign")
        await settle(pilot)
        seen["room"] = app.room
        seen["budget2"] = str(app.query_one("#budget").render())

    drive(demo, scenario)
    assert re.match(r"#default · live · budget \d+/\d+ \(\d+ turns? left\)", seen["budget"])
    assert ["researcher", "idle"] in seen["roster"]
    assert seen["room"] == "ops-room" and seen["budget2"].startswith("#ops-room")


def test_agents_tab_and_ctrl_t_agent_tab_peek_the_inbox(demo):
    from rooms_cli.messaging.inbox import unread_messages

    seen = {}

    async def scenario(pilot):
        app = pilot.app
        table = app.query_one("#agent-table", DataTable)
        seen["researcher"] = table.get_row("researcher")
        await pilot.press("ctrl+t")
        await until(pilot, lambda: isinstance(app.screen, PickScreen))
        options = app.screen.options
        app.screen.query_one("#options").highlighted = options.index("researcher")
        await pilot.press("enter")
        await settle(pilot)
        pane = app.agent_panes["researcher"]
        log = app.query_one(TabbedContent).get_pane(pane).query_one(RichLog)
        await until(pilot, lambda: bool(log.lines))
        seen["inbox"] = [line.text for line in log.lines]
        await pilot.press("ctrl+w")
        await pilot.pause()
        seen["closed"] = "researcher" not in app.agent_panes

    drive(demo, scenario)
    assert seen["researcher"][1:4] == ["agent", "idle", "1"]  # kind, state, one unread
    assert any("alice: ready for review" in line for line in seen["inbox"])
    assert seen["closed"]
    assert len(unread_messages(project_of(demo), "researcher")) == 1  # peeked: still unread


def test_question_mark_lists_every_key(demo):
    seen = {}

    async def scenario(pilot):
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(pilot.app.screen, KeysScreen))
        seen["keys"] = [k for k, _ in pilot.app.screen.rows]
        await pilot.press("escape")

    drive(demo, scenario)
    for key in ("Ctrl+G", "Ctrl+B", "Ctrl+W", "Ctrl+R", "Ctrl+T", "c x d", "/", "?"):
        assert key in seen["keys"]


# --- live ------------------------------------------------------------------------------------------


def test_another_process_claiming_and_posting_shows_while_the_app_runs(demo, monkeypatch):
    monkeypatch.delenv("ROOMS_NOW")  # live: the real clock, like a person watching
    survey = task_id(demo, "Survey rate limits")
    took = {}

    async def scenario(pilot):
        app = pilot.app
        table = next(t for t in app.query(LaneTable) if survey in t.rows)
        cell = lambda: str(table.get_cell(survey, table.ordered_columns[0].key)) if survey in table.rows else ""  # noqa: E731
        claim = await asyncio.to_thread(cli, demo, "task", "claim", survey, ROOMS_AGENT="scribe")
        assert claim.returncode == 0, claim.stderr
        took["claim"] = await until(pilot, lambda: " scribe " in cell(), timeout=10)
        app.query_one(TabbedContent).active = "rooms"  # a log draws its lines once it is on screen
        post = await asyncio.to_thread(cli, demo, "chat", "hello from another terminal", ROOMS_AGENT="bob")
        assert post.returncode == 0, post.stderr
        log = app.query_one("#transcript", RichLog)
        took["chat"] = await until(pilot, lambda: any("bob: hello from another terminal" in line.text for line in log.lines), timeout=10)

    drive(demo, scenario, live=True)
    # seen once the other process has exited; bench/top.py measures the latency itself (docs/top.md)
    assert took["claim"] < 5 and took["chat"] < 5


def test_rooms_top_runs_in_a_real_terminal_and_q_quits(demo):
    """The real driver on a pty of 80×24: the tabs and a group label are drawn, a claim by another
    process shows, `?` and Ctrl+G open their dialogs, Escape closes them, `q` ends it with exit 0."""
    import pexpect

    env = rooms_env({"ROOMS_DIR": str(demo), "TERM": "xterm-256color", "ROOMS_AGENT": "alice"})
    env.pop("ROOMS_NOW", None)
    child = pexpect.spawn(sys.executable, ["-m", "rooms_cli", "top"], env=env, encoding="utf-8", timeout=30,
                          dimensions=(24, 80), cwd=str(demo))
    try:
        wanted = ["▣ rev", "Sketch the architecture"]  # the group tab's label, the first lane of the board
        while wanted:
            wanted.pop(child.expect(wanted))
        claim = cli(demo, "task", "claim", task_id(demo, "Sketch the architecture"), ROOMS_AGENT="scribe", ROOMS_NOW="")
        assert claim.returncode == 0, claim.stderr
        child.expect("scribe")
        child.send("?")
        child.expect("Keys of rooms top")
        child.send("\x1b")  # Escape closes the key list (alone: Escape then a key within ~0.1 s is one Alt+key)
        time.sleep(0.5)
        child.send("\x07")  # Ctrl+G: the lasso
        child.expect("Lasso: pick the members")
        child.send("\x1b")
        time.sleep(0.5)
        child.send("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


# --- read-only, colour, the command line ---------------------------------------------------------


def test_a_read_only_rooms_opens_read_only_and_says_so(demo, tmp_path):
    from test_hardening_disk import read_only

    seen = {}
    with read_only(demo) as view:
        async def scenario(pilot):
            app = pilot.app
            seen["bar"] = str(app.query_one("#bar").render())
            await select_task(pilot, task_id(demo, "Survey rate limits"))
            await pilot.press("c")
            await settle(pilot)
            seen["note"] = note(app)
            seen["input_disabled"] = app.query_one("#say", Input).disabled

        drive(view, scenario)
    assert "READ-ONLY" in seen["bar"]
    assert seen["note"].startswith("error: ") and "is read-only: rooms top shows it but cannot change it" in seen["note"]
    assert seen["input_disabled"]
    assert task(demo, "Survey rate limits").status == "todo"


def test_no_color_renders_without_colour(demo, monkeypatch):
    from rooms_cli.tui import render_svg

    coloured = asyncio.run(render_svg(Context.open(str(demo), as_="alice"), size=(80, 24)))
    monkeypatch.setenv("NO_COLOR", "1")
    plain = asyncio.run(render_svg(Context.open(str(demo), as_="alice"), size=(80, 24)))
    frame = {"ff5f57", "febc2e", "28c840", "c5c8c6"}  # the SVG's window buttons and title, not the app

    def hues(svg: str) -> set[str]:
        return {c for c in re.findall(r"#([0-9a-f]{6})", svg.lower()) if not (c[0:2] == c[2:4] == c[4:6])} - frame

    assert hues(coloured)  # the colours exist…
    assert hues(plain) == set()  # …and NO_COLOR turns every one grey


def test_snapshot_writes_one_frame_to_svg(demo, tmp_path):
    out = tmp_path / "top.svg"
    proc = cli(demo, "top", "--snapshot", str(out), "--tab", "rev", "--size", "100x30", ROOMS_NOW=topkit.NOW)
    assert proc.returncode == 0, proc.stderr
    svg = out.read_text()
    assert svg.startswith("<svg") and "Current&#160;broadcast" in svg and "review&#160;the&#160;api" in svg


@pytest.mark.parametrize(("args", "code", "words"), [
    (("--snapshot", "x.svg", "--size", "big"), 2, "--size must be COLUMNSxLINES such as 120x40"),
    (("--snapshot", "x.svg", "--tab", "nosuch"), 1, "no group 'nosuch'"),
    (("--tab", "Bad/Tab"), 1, "--tab"),
    (("--size", "80x24"), 2, "--size goes with --snapshot"),
    (("--room", "nosuch"), 1, "no room 'nosuch'"),
    ((), 1, "rooms top needs a terminal (its input and output are not one); rooms top --snapshot FILE.svg renders"),
], ids=["bad-size", "unknown-group", "bad-tab", "size-without-snapshot", "unknown-room", "no-terminal"])
def test_bad_values_are_one_sentence(demo, args, code, words):
    proc = cli(demo, "top", *args)
    assert proc.returncode == code, proc.stderr
    assert words in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_without_textual_rooms_top_names_the_install_command(demo):
    blocker = "import sys; sys.modules['textual'] = None; from rooms_cli.cli.fast import main; sys.argv = ['rooms', 'top']; main()"
    proc = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True, timeout=60, cwd=demo,
                          env=rooms_env({"ROOMS_DIR": str(demo)}))
    assert proc.returncode == 1
    from conftest import REPO

    assert proc.stderr.strip().startswith("error: rooms top needs the Textual package, which is not installed: ")
    assert proc.stderr.strip().endswith(f"pip install -e '.[tui]' (in {REPO}, the checkout rooms runs from)")


@pytest.mark.parametrize("args", [("--help",), ("top", "--help"), ("board",), ("group", "list")], ids=" ".join)
def test_only_rooms_top_itself_imports_textual(demo, args):
    probe = (RETURN_FROM_MAIN + "import sys, runpy; sys.argv = ['rooms', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('rooms_cli', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print('TEXTUAL' if any(m == 'textual' or m.startswith('textual.') for m in sys.modules) else 'CLEAN', file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60, cwd=demo,
                          env=rooms_env({"ROOMS_DIR": str(demo)}))
    assert proc.stderr.strip().splitlines()[-1] == "CLEAN", proc.stderr


def test_the_tui_package_keeps_textual_out_of_its_plain_modules():
    """views.py and actions.py (what the tabs read and what the keys do) import no textual: only app.py
    and screens.py do, and rooms_cli.tui loads them when the dashboard runs."""
    code = ("import sys; import rooms_cli.tui, rooms_cli.tui.views, rooms_cli.tui.actions, rooms_cli.cli.top_cmd; "
            "print(any(m.startswith('textual') for m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=rooms_env())
    assert proc.stdout.strip() == "False", proc.stderr
    assert os.environ.get("NO_COLOR") is None


# --- the docs' examples ----------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent


def _rooms_lines(text: str) -> list[list[str]]:
    import shlex

    return [shlex.split(line, comments=True) for line in text.splitlines() if line.strip().startswith("rooms ")]


def test_the_readme_and_docs_dashboard_commands_work_as_written(tmp_path):
    """The README's `rooms top` block (all but the live line, which needs a terminal) and docs/top.md's
    --snapshot line, run in a fresh demo project."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("### The dashboard: `rooms top`", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    demo_dir, picture = tmp_path / "demo", tmp_path / "top.svg"
    lines = [argv for argv in _rooms_lines(block) if "--snapshot" in argv or argv[1] == "demo"]
    assert [argv[1] for argv in lines] == ["demo", "top"]
    for argv in lines:
        argv = [a.replace("/tmp/top-demo", str(demo_dir)).replace("docs/top.svg", str(picture)) for a in argv]
        proc = subprocess.run([sys.executable, "-m", "rooms_cli", *argv[1:]], capture_output=True, text=True,
                              timeout=120, env=rooms_env({}), cwd=tmp_path)
        assert proc.returncode == 0, (argv, proc.stderr)
    assert "demo-chat" in picture.read_text()
    docs = [argv for argv in _rooms_lines((REPO / "docs" / "top.md").read_text()) if "--snapshot" in argv]
    assert docs
    for argv in docs:
        proc = subprocess.run([sys.executable, "-m", "rooms_cli", *argv[1:]], capture_output=True, text=True,
                              timeout=120, env=rooms_env({}), cwd=demo_dir)
        assert proc.returncode == 0, (argv, proc.stderr)
    assert (demo_dir / "top.svg").read_text().startswith("<svg")


# --- the first hour's fixes (issue 45, item 13) ----------------------------------------------------


def test_the_input_line_takes_keys_only_when_asked_and_escape_gives_them_back(demo):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        app.query_one(TabbedContent).active = "rooms"
        await settle(pilot)
        seen["resting"] = type(app.focused).__name__
        await pilot.press("i")
        await pilot.pause()
        await type_text(pilot, "q?[]")
        seen["typed"] = app.query_one("#say", Input).value
        await pilot.press("escape")
        await settle(pilot)
        seen["after_escape"] = type(app.focused).__name__
        await pilot.press("right_square_bracket")
        await settle(pilot)
        seen["tab"] = app.query_one(TabbedContent).active
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, KeysScreen))

    drive(demo, scenario, tab="rooms")
    assert seen["resting"] != "SayInput", "the rooms tab does not open with the keyboard in the input line"
    assert seen["typed"] == "q?[]"
    assert seen["after_escape"] != "SayInput" and seen["tab"] == "agents"


@pytest.mark.parametrize("tab", ["board", "rooms", "agents", "rev"])
def test_the_key_bar_fits_80_columns_on_every_tab(demo, tab):
    from textual.widgets._footer import FooterKey

    seen = {}

    async def scenario(pilot):
        await settle(pilot)
        keys = list(pilot.app.query(FooterKey))
        seen["keys"] = [(k.key_display, k.description, k.region.right, k.region.width) for k in keys]

    drive(demo, scenario, tab=tab, size=(80, 24))
    assert seen["keys"] and all(0 < width and right <= 80 for _k, _d, right, width in seen["keys"]), seen["keys"]
    described = {d for _k, d, _r, _w in seen["keys"]}
    assert {"keys", "search", "quit"} <= described
    assert {"board": {"claim", "done"}, "rooms": {"say"}, "agents": {"agent tab"}, "rev": {"broadcast", "dissolve", "rename"}}[tab] <= described


def test_renaming_a_group_keeps_its_tab_on_screen(demo):
    from rooms_cli.groups import roster

    roster.spawn(project_of(demo), "pair", ["scribe", "judge"])
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        await open_dialog(pilot, "pair", "ctrl+r", FieldsScreen)
        await pilot.press(*["backspace"] * 4)
        await type_text(pilot, "duo")
        await pilot.press("enter")
        await settle(pilot)
        await until(pilot, lambda: "duo" in app.group_panes)
        await until(pilot, lambda: app.query_one(TabbedContent).active == app.group_panes["duo"], timeout=5)
        await settle(pilot)
        seen["active"], seen["duo"] = app.query_one(TabbedContent).active, app.group_panes["duo"]

    drive(demo, scenario)
    assert seen["active"] == seen["duo"]


def test_a_broadcast_that_fails_opens_the_composer_again_with_what_was_typed(demo):
    from rooms_cli.groups import broadcasts, roster
    from rooms_cli.project.config import load_config

    roster.spawn(project_of(demo), "pair", ["scribe", "judge"])
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        await open_dialog(pilot, "pair", "ctrl+b", FieldsScreen)
        # meanwhile another process broadcasts to the group: this send will be refused
        broadcasts.send_broadcast(project_of(demo), load_config(project_of(demo)), "pair",
                                  {"objective": "theirs", "output_format": "", "tool_guidance": "", "boundaries": ""}, "bob")
        await answer_fields(pilot, "outline it", "bullets", "no tools", "no dates")
        await settle(pilot)
        await until(pilot, lambda: isinstance(app.screen, FieldsScreen))
        seen["fields"] = {i.id: i.value for i in app.screen.query(Input)}
        seen["note"] = note(app)

    drive(demo, scenario)
    assert seen["fields"] == {"f-objective": "outline it", "f-output_format": "bullets", "f-tool_guidance": "no tools",
                              "f-boundaries": "no dates"}
    assert seen["note"].startswith("error: group 'pair' already has broadcast b-")


def test_an_error_is_shown_whole_then_goes(demo, monkeypatch):
    from rooms_cli.tui import app as top

    monkeypatch.setattr(top, "ERROR_SECONDS", 1.0)
    long = "this sentence is far longer than one line of an eighty column terminal, so it has to wrap onto a second line"
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        app.say(long, error=True)
        note_widget = app.query_one("#note")
        await until(pilot, lambda: note_widget.region.height >= 2, timeout=5)
        seen["height"] = note_widget.region.height
        seen["text"] = note(app)
        await until(pilot, lambda: note(app) == "", timeout=5)
        seen["later"] = note(app)

    drive(demo, scenario, size=(80, 24))
    assert seen["height"] >= 2 and seen["text"] == f"error: {long}"
    assert seen["later"] == ""


def test_a_note_cleared_early_does_not_cut_the_next_note_short(demo, monkeypatch):
    """A note's timer goes with it: an error cleared before its time (another tab, the next key) used to
    leave its timer running, which then cleared whatever note came next (seen as a key that said nothing
    when a test of every key ran slowly)."""
    from rooms_cli.tui import app as top

    monkeypatch.setattr(top, "ERROR_SECONDS", 1.0)
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        app.say("the first", error=True)
        app.clear_note()
        await pilot.pause(0.5)
        app.say("the second", error=True)
        await pilot.pause(0.75)  # past the first note's second, within the second note's own
        seen["note"] = note(app)

    drive(demo, scenario, size=(80, 24))
    assert seen["note"] == "error: the second"


def test_a_long_room_name_stays_on_one_line_of_the_room_list(demo):

    from rooms_cli.chat.rooms import create_room

    long = "a-room-with-a-name-long-enough-to-wrap-in-a-narrow-side-panel"
    create_room(project_of(demo), long, ["ops"])
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        listing = app.query_one("#room-list")
        await settle(pilot)
        seen["options"] = listing.option_count
        seen["lines"] = listing.virtual_size.height

    drive(demo, scenario, tab="rooms", size=(80, 24))
    assert seen["lines"] == seen["options"] == 2


def test_every_lane_and_the_done_column_are_on_an_80_column_screen_and_only_the_focused_lane_selects(demo):
    seen = {}

    async def scenario(pilot):
        await settle(pilot)
        tables = list(pilot.app.query(LaneTable))
        seen["lanes"] = [(t.lane, t.region.right, t.show_cursor, t.has_focus) for t in tables]

    drive(demo, scenario, size=(80, 24))
    assert [lane for lane, *_ in seen["lanes"]] == ["architect", "ops", "researcher", "reviewer", "done"]
    assert all(0 < right <= 80 for _lane, right, _c, _f in seen["lanes"]), seen["lanes"]
    assert all(cursor == focused for _lane, _r, cursor, focused in seen["lanes"])


def test_the_agents_tab_and_the_roster_say_busy_where_the_group_tab_does(demo):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        await settle(pilot)
        seen["agents"] = app.query_one("#agent-table", DataTable).get_row("reviewer")[2]
        roster = app.query_one("#roster", DataTable)
        seen["roster"] = dict(roster.get_row_at(i) for i in range(roster.row_count))

    drive(demo, scenario)
    assert seen["agents"] == "busy: rev"
    assert seen["roster"]["reviewer"] == "busy: rev" and seen["roster"]["ops"] == "idle"


def test_a_wrapped_transcript_line_stays_right_of_its_time(demo):
    from rooms_cli.chat.transcript import append_message

    append_message(project_of(demo), "default", "bob", "a long message " * 8)
    seen = {}

    async def scenario(pilot):
        log = pilot.app.query_one("#transcript", RichLog)
        await until(pilot, lambda: any("bob:" in line.text for line in log.lines))
        at = next(i for i, line in enumerate(log.lines) if "bob:" in line.text)
        seen["lines"] = [line.text for line in log.lines[at:at + 3]]

    drive(demo, scenario, tab="rooms", size=(80, 24))
    first, second = seen["lines"][:2]
    assert re.match(r"\d\d:\d\d:\d\d bob: ", first)
    assert second.startswith(" " * 9) and second[9] != " ", "under the words, not under the time"


def test_the_lasso_says_who_is_picked_in_words(demo):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, LassoScreen))
        await pilot.press("space", "down", "down", "space")
        await pilot.pause()
        seen["picked"] = str(app.screen.query_one("#picked").render())
        await pilot.press("escape")

    drive(demo, scenario)
    assert seen["picked"] == "picked: architect, ops"


KEYS = ["question_mark", "left_square_bracket", "right_square_bracket", "less_than_sign", "greater_than_sign", "c", "x",
        "d", "i", "slash", "ctrl+g", "ctrl+b", "ctrl+w", "ctrl+r", "ctrl+t", "ctrl+n"]


@pytest.mark.parametrize("tab", ["board", "rooms", "agents", "rev"])
def test_every_key_answers_on_every_tab(demo, tab):
    """Each key does its thing from any tab, or says why not: a dialog, another tab or room, the input line,
    a note; none is swallowed. Then `q` quits from there too."""
    from rooms_cli.chat.rooms import create_room

    create_room(project_of(demo), "second", ["ops"])  # < and > have a room to go to
    silent = []

    async def scenario(pilot):
        app = pilot.app
        home = app.query_one(TabbedContent).active
        for key in KEYS:
            app.focus_tab_body()
            app.clear_note()
            await settle(pilot)
            before = (len(app.screen_stack), app.query_one(TabbedContent).active, app.room)
            await pilot.press(key)
            await settle(pilot)
            after = (len(app.screen_stack), app.query_one(TabbedContent).active, app.room)
            if after == before and not note(app) and not isinstance(app.focused, SayInput):
                silent.append(key)
            while len(app.screen_stack) > 1:  # a dialog: Escape cancels it (nothing written, as tested above)
                await pilot.press("escape")
                await settle(pilot)
            if app.room != before[2]:
                app.switch_room(before[2])
            app.query_one(TabbedContent).active = home
            await settle(pilot)
        app.focus_tab_body()
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, timeout=5)

    drive(demo, scenario, tab=tab, size=(80, 24))
    assert silent == []


@pytest.mark.parametrize("tab", ["board", "rooms", "agents", "rev"])
def test_escape_from_anywhere_on_a_tab_gives_the_focus_back_to_the_tab(demo, tab):
    """Tab walks the focus through every widget on the tab (the tab bar, lanes, room list, input line…);
    from each, Escape puts it back where the tab's keys work, and `]` then leaves the tab."""
    stuck = []

    async def scenario(pilot):
        app = pilot.app
        tabs = app.query_one(TabbedContent)
        home = tabs.active
        visited = []
        for _ in range(12):
            await pilot.press("tab")
            await settle(pilot)
            widget = app.focused
            if widget is None or widget in visited:
                continue
            visited.append(widget)
            await pilot.press("escape")
            await settle(pilot)
            body = app._tab_body(tabs.get_pane(tabs.active))
            if tabs.active != home or app.focused is not (body or app.focused) or isinstance(app.focused, Input):
                stuck.append(f"{type(widget).__name__}#{widget.id} -> {type(app.focused).__name__}")
            widget.focus()  # on from where the walk was
            await settle(pilot)
        assert any(isinstance(w, SayInput) for w in visited) == (tab == "rooms"), visited
        widget = visited[-1]
        await pilot.press("escape", "right_square_bracket")
        await settle(pilot)
        if tabs.active == home:
            stuck.append(f"] after Escape from {type(widget).__name__} stayed on {home}")

    drive(demo, scenario, tab=tab, size=(80, 24))
    assert stuck == []


# --- search ------------------------------------------------------------------------------------------


async def search(pilot, query: str) -> SearchScreen:
    """`/` from where the app is, the query typed, Enter; the search screen once its search is done."""
    app = pilot.app
    await pilot.press("slash")
    await until(pilot, lambda: isinstance(app.screen, SearchScreen))
    screen = app.screen
    screen.query_one("#query", Input).value = ""
    await type_text(pilot, query)
    await pilot.press("enter")
    await until(pilot, lambda: status(screen) != "searching…")
    return screen


def status(screen: SearchScreen) -> str:
    return str(screen.query_one("#status").render())


def hit_lines(screen: SearchScreen) -> list[str]:
    from textual.widgets import OptionList

    hits = screen.query_one("#hits", OptionList)
    return [str(hits.get_option_at_index(n).prompt) for n in range(hits.option_count)]


async def choose(pilot, screen: SearchScreen, ref: str) -> None:
    """Move to the hit whose ref is `ref` and press Enter on it."""
    from textual.widgets import OptionList

    at = next(n for n, hit in enumerate(screen.results.hits) if hit.ref == ref)
    hits = screen.query_one("#hits", OptionList)
    hits.focus()
    hits.highlighted = hits.get_option_index(str(at))
    await pilot.pause()
    await pilot.press("enter")


@pytest.mark.parametrize("tab", ["board", "rev"])
def test_slash_searches_from_any_tab_best_first_and_escape_returns_to_that_tab(demo, tab):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        home = app.query_one(TabbedContent).active
        screen = await search(pilot, "rate")
        seen["status"], seen["lines"] = status(screen), hit_lines(screen)
        seen["refs"] = [hit.ref for hit in screen.results.hits]
        await pilot.press("escape")
        await settle(pilot)
        seen["back"] = (type(app.screen).__name__, app.query_one(TabbedContent).active == home, note(app))

    drive(demo, scenario, tab=tab, size=(80, 24))
    proc = cli(demo, "search", "rate", ROOMS_NOW=topkit.NOW)
    assert seen["refs"] == [line.split()[0] for line in proc.stdout.splitlines() if ":" in line.split()[0]]  # the CLI's order
    assert seen["status"] == "3 hits for 'rate', best first"
    task_line, asked, answered = seen["lines"]
    assert task_line.startswith("task · #default board · researcher · todo · alice · 2026-11-21 12:55") and "Survey rate limits" in task_line
    assert asked == "chat · #default · alice · 2026-11-21 13:00\n@researcher what about rate limits?"  # no ** shown
    assert answered.startswith("chat · #default · researcher · ")
    assert seen["back"] == ("Screen", True, "")


def test_the_matches_of_a_hit_are_marked_in_bold_not_with_asterisks():
    from rooms_cli.search.engine import Hit
    from rooms_cli.tui.screens import hit_prompt

    prompt = hit_prompt(Hit(kind="chat", id="m-1", ref="msg:m-1", who="bob", ts=topkit.NOW, room="api",
                            snippet="keep the **rate** **limit** low"))
    assert prompt.plain.splitlines()[1] == "keep the rate limit low"
    marked = [prompt.plain[span.start:span.end] for span in prompt.spans if "bold" in str(span.style)]
    assert [m.strip() for m in marked] == ["rate", "limit"]


def test_a_chat_hit_opens_its_room_on_the_rooms_tab_with_the_message_marked_in_view(demo):
    """The message is in another room, older than the 200 lines the transcript holds: the room becomes the
    current one and its transcript is read around the message, scrolled to it."""
    from rooms_cli.chat.rooms import create_room
    from rooms_cli.chat.transcript import append_message

    project = project_of(demo)
    create_room(project, "second", ["ops"])
    for n in range(300):
        append_message(project, "second", "bob", "the needle is here" if n == 20 else f"line {n}")
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        screen = await search(pilot, "needle")
        await choose(pilot, screen, screen.results.hits[0].ref)
        await settle(pilot)
        await until(pilot, lambda: any("needle" in line.text for line in app.query_one("#transcript").lines))
        await settle(pilot)
        log = app.query_one("#transcript")
        line = next(n for n, strip in enumerate(log.lines) if "needle" in strip.text)
        seen["view"] = (log.scroll_y, line, log.scrollable_content_region.height)
        seen["where"] = (type(app.screen).__name__, app.query_one(TabbedContent).active, app.room, note(app))
        seen["marked"] = log.marked, screen.results.hits[0].id

    drive(demo, scenario, size=(80, 24))
    assert seen["where"][:3] == ("Screen", "rooms", "second")
    assert seen["where"][3].endswith("in #second, marked")
    assert seen["marked"][0] == seen["marked"][1]
    top, line, height = seen["view"]
    assert top <= line < top + height, seen["view"]


def test_a_task_hit_goes_to_the_board_with_the_task_selected(demo):
    survey = task_id(demo, "Survey rate limits")
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        screen = await search(pilot, "survey")
        await choose(pilot, screen, f"task:{survey}")
        await settle(pilot)
        seen["tab"] = app.query_one(TabbedContent).active
        seen["selected"] = app._selected_task()
        await pilot.press("c")  # the board's keys act on it at once
        await settle(pilot)

    drive(demo, scenario, tab="agents", size=(80, 24))
    assert seen["tab"] == "board" and seen["selected"] == survey
    assert task(demo, "Survey rate limits").lease.holder == "alice"


def test_a_hit_the_dashboard_has_no_place_for_shows_its_whole_text_and_ref(demo):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        screen = await search(pilot, "ready")
        hit = screen.results.hits[0]
        await choose(pilot, screen, hit.ref)
        await until(pilot, lambda: isinstance(app.screen, HitScreen))
        seen["hit"] = hit.kind, hit.ref
        seen["shown"] = [str(w.render()) for w in app.screen.query("Label, Static")]
        await pilot.press("escape")
        await settle(pilot)
        seen["back"] = type(app.screen).__name__
        await pilot.press("escape")
        await settle(pilot)
        seen["tab"] = type(app.screen).__name__, app.query_one(TabbedContent).active

    drive(demo, scenario, tab="rooms", size=(80, 24))
    kind, ref = seen["hit"]
    assert kind == "message" and ref.startswith("inbox:i-")
    assert "message · researcher's inbox · alice · 2026-11-21 13:00" in seen["shown"]
    assert "ready for review" in seen["shown"]
    assert f"ref: {ref}" in seen["shown"]
    assert seen["back"] == "SearchScreen" and seen["tab"] == ("Screen", "rooms")


def test_no_hits_and_a_query_error_are_the_sentences_the_cli_prints(demo):
    seen = {}

    async def scenario(pilot):
        screen = await search(pilot, "zebra")
        seen["none"] = status(screen), hit_lines(screen)
        screen.query_one("#query", Input).value = ""
        await type_text(pilot, '"rate limit')
        await pilot.press("enter")
        await until(pilot, lambda: status(screen) != "searching…")
        seen["error"] = status(screen), hit_lines(screen), screen.query_one("#status").has_class("error")

    drive(demo, scenario)
    none = cli(demo, "search", "zebra", ROOMS_NOW=topkit.NOW)
    assert seen["none"] == (none.stdout.strip() or none.stderr.strip(), []) == ("no hits for 'zebra'", [])
    bad = cli(demo, "search", '"rate limit', ROOMS_NOW=topkit.NOW)
    assert bad.returncode == 2
    assert seen["error"] == (bad.stderr.strip(), [], True)


def test_the_dashboard_imports_the_search_machinery_only_when_a_search_runs(demo):
    """sqlite3 (the index) is imported by the first search, not by start-up: a process draws the board,
    then searches."""
    script = (
        "import asyncio, sys\n"
        "from rooms_cli.project.context import Context\n"
        "from rooms_cli.tui import render_svg\n"
        "from rooms_cli.tui.actions import search\n"
        f"ctx = Context.open({str(demo)!r}, as_='alice')\n"
        "asyncio.run(render_svg(ctx, size=(80, 24)))\n"
        "before = 'sqlite3' in sys.modules\n"
        "hits = search(ctx, 'rate').hits\n"
        "print(before, 'sqlite3' in sys.modules, len(hits))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=demo,
                          env=rooms_env({"ROOMS_DIR": str(demo), "ROOMS_NOW": topkit.NOW}))
    assert proc.stdout.split() == ["False", "True", "3"], proc.stderr


def test_escape_while_a_search_runs_closes_it_and_leaves_the_app_on_its_tab(demo):
    seen = {}

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("slash")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await type_text(pilot, "rate")
        await pilot.press("enter", "escape")
        await settle(pilot)
        seen["after"] = type(app.screen).__name__, app.is_running, app.query_one(TabbedContent).active

    drive(demo, scenario, tab="agents")
    assert seen["after"] == ("Screen", True, "agents")
