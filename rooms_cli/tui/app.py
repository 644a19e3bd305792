"""`rooms top`: the live dashboard, a Textual app over the parts' own functions.

Tabs: Board (lanes as columns), Rooms (transcript, roster, budget, a line that posts like `rooms
chat`), Agents, then one tab per group labelled `▣ name [busy/total state]` with the panels Members,
Current broadcast and Recent broadcasts, and the agent tabs Ctrl+T opens. Data is read in worker
threads (views.py) and every key that writes calls the function its CLI command calls (actions.py).

Live: a thread runs `rooms watch --all`'s engine (watch.watch) and posts each event; the app reloads
the tabs the event touches, coalescing bursts (one reload in flight per tab, one more queued).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import (
    DataTable,
    Footer,
    Input,
    Label,
    OptionList,
    RichLog,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.option_list import Option

from rooms_cli.core.errors import RoomsError
from rooms_cli.core.text import count
from rooms_cli.project.context import Context
from rooms_cli.tui import actions, views
from rooms_cli.tui.screens import (
    MODAL_CSS,
    ConfirmScreen,
    FieldsScreen,
    HitScreen,
    KeysScreen,
    LassoScreen,
    PickScreen,
    SearchScreen,
)

if TYPE_CHECKING:
    from rooms_cli.chat import transcript
    from rooms_cli.search.engine import Hit, Results

LANE_MIN = 36  # columns of a lane on the board: as many lanes a row as fit, the rest on the rows below
LANE_MIN_HEIGHT = 6  # lines of a lane when there are more rows of lanes than fit (the board scrolls down)
TALL_CELLS = 40  # from this many lines on, a task's cell has a third line: its definition of done
ROOM_NAME_CHARS = 22  # a room's name in the room list, before the panel has a size
NOTE_SECONDS = 8.0  # a note (a key's result) goes after this long; an error after ERROR_SECONDS
ERROR_SECONDS = 20.0
STATUS_MARK = {"todo": "○", "doing": "●", "blocked": "■", "failed": "✗", "done": "✓", "cancelled": "–"}
COMPOSER_FIELDS = [("objective", "objective — what to accomplish"), ("output_format", "output_format — how the reply is shaped"),
                   ("tool_guidance", "tool_guidance — which tools to use or avoid"), ("boundaries", "boundaries — what is out of scope")]

KEYS = [
    ("[ ]", "previous / next tab (or click a tab)"),
    ("< >", "previous / next room (board and rooms tabs follow it)"),
    ("Tab", "next panel (lanes, room list, input…); arrows move in it"),
    ("Escape", "leave the input line (or a dialog): back to the tab, where every key works"),
    ("c x d", "claim / release / done (asks for a summary) the selected task"),
    ("i", "rooms tab: type in the input line; Enter posts like `rooms chat` (slash commands too)"),
    ("/", "search everything (`rooms search`); Enter on a hit goes where it lives"),
    ("Ctrl+G", "lasso: pick agents, name a group, create it"),
    ("Ctrl+B", "four-field broadcast composer (group tab)"),
    ("Ctrl+W", "dissolve the focused group after a confirm; close an agent tab"),
    ("Ctrl+R", "rename the focused group"),
    ("Ctrl+T", "new agent tab: an agent's inbox (peeked) and status"),
    ("Ctrl+Shift+T / Ctrl+N", "new group tab: name and profiles (Ctrl+N where the terminal cannot send Ctrl+Shift+T)"),
    ("?", "this list"),
    ("q / Ctrl+Q", "quit"),
]


class Changed(Message):
    """Something under .rooms/ changed: the watch event that says what."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__()
        self.event = event


class LaneTable(DataTable[Any]):
    """One lane's tasks (or the done column), the row key being the task id. Rows are added a page at
    a time as the cursor or the scroll nears the end: a lane of thousands opens at once."""

    PAGE = 100
    BINDINGS = [Binding("left", "app.focus_previous", show=False), Binding("right", "app.focus_next", show=False)]

    def __init__(self, lane: str, *, tall: bool = False, width: int = LANE_MIN, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", show_header=False, cell_padding=0, show_cursor=False, **kwargs)
        self.lane = lane
        self.tall = tall  # three lines a task (its definition of done too) on a tall screen
        self.width = width  # the lane's columns: its cells are cut with … there, never wrapped
        self.add_column("task", width=width - 3)
        self.heading = Label(lane)  # above the table: the lane and how many tasks it holds
        self.tasks: list[views.TaskRow] = []
        self.shown: list[tuple[Any, ...]] = []  # what the rows were built from (nothing to redraw when equal)

    def on_focus(self) -> None:
        self.show_cursor = True  # only the lane you are in shows a selected task

    def on_blur(self) -> None:
        self.show_cursor = False

    def show(self, rows: list[views.TaskRow]) -> None:
        shown = [_signature(r) for r in rows]
        if shown == self.shown:
            return
        keep = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value if self.row_count else None
        at = next((i for i, r in enumerate(rows) if r.id == keep), 0)
        self.clear()
        self.tasks, self.shown = rows, shown
        self.more(at + self.PAGE)
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep))

    def more(self, upto: int) -> None:
        """Rows up to `upto` (the next page)."""
        for row in self.tasks[self.row_count:upto]:
            self.add_row(_task_cell(row, self.tall), key=row.id, height=3 if self.tall else 2)

    def replace(self, row: views.TaskRow) -> bool:
        """One task changed in place (same lane, still open); False when it is not in this lane."""
        at = next((i for i, r in enumerate(self.tasks) if r.id == row.id), None)
        if at is None:
            return False
        row.short = self.tasks[at].short
        self.tasks[at] = row
        self.shown[at] = _signature(row)
        if row.id in self.rows:
            self.update_cell(row.id, self.ordered_columns[0].key, _task_cell(row, self.tall))
        return True

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.cursor_row >= self.row_count - 10:
            self.more(self.row_count + self.PAGE)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y - 4 and self.row_count < len(self.tasks):
            self.more(self.row_count + self.PAGE)


class Tabs(TabbedContent):
    """The tabs. A pane whose widget got the focus becomes the active one (Textual's rule), but only while
    that widget still has it: a late notice of an earlier focus pulled `]` back to the tab just left."""

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.app.focused
        if focused is not None and event.tab_pane in focused.ancestors:
            super()._on_tab_pane_focused(event)
        else:
            event.stop()


class SayInput(Input):
    """The rooms tab's input line: it takes every printable key while it has the focus; Escape gives the
    focus back to the tab (where `q`, `?`, `[`, `]` are keys again)."""

    BINDINGS = [Binding("escape", "leave", "leave input", show=True)]

    def action_leave(self) -> None:
        app = self.app
        if isinstance(app, TopApp):
            app.focus_tab_body()


class Transcript(RichLog):
    """The room's messages, the time in a column of its own (a wrapped line stays right of it), drawn
    again at the new width when the widget is resized (a line is wrapped when it is written)."""

    def __init__(self, **kwargs: Any) -> None:
        # min_width: RichLog wraps at 78 columns at least, which cut lines of a narrower panel
        super().__init__(wrap=True, markup=False, auto_scroll=True, min_width=20, **kwargs)
        self.messages: list[transcript.Message] = []
        self._drawn_width = 0
        self.marked = ""  # a search hit's message: drawn in reverse video
        self._find = False  # scroll to the marked message once it is drawn at the panel's width

    def show(self, messages: list[transcript.Message]) -> None:
        self.messages = list(messages)
        self._redraw()

    def mark(self, message_id: str) -> None:
        """Show `message_id` (a search hit) marked, scrolled into view when next drawn."""
        self.marked, self._find = message_id, True

    def add(self, message: transcript.Message) -> None:
        self.messages.append(message)
        self.write(_message_row(message), width=self.scrollable_content_region.width or None)

    def _redraw(self) -> None:
        self.clear()
        self._drawn_width = width = self.scrollable_content_region.width
        find = self._find and width > 0 and any(m.id == self.marked for m in self.messages)
        line = None
        for message in self.messages:  # at the panel's width (RichLog measures against the app console's)
            if message.id == self.marked:
                line = len(self.lines)
            self.write(_message_row(message, marked=message.id == self.marked), width=width or None,
                       scroll_end=False if find else None)
        if find and line is not None:
            self._find = False
            self.call_after_refresh(self.scroll_to, y=max(0, line - 2), animate=False)

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)  # RichLog holds writes back until its size is known
        if self.scrollable_content_region.width != self._drawn_width and self.messages:
            self._redraw()


class TopApp(App[Any]):
    """The dashboard. `live=False` reads once and never watches (snapshots, tests of one frame)."""

    TITLE = "rooms top"
    ENABLE_COMMAND_PALETTE = False
    CSS = MODAL_CSS + """
    #bar { height: 1; background: $primary-background; padding: 0 1; }
    #note { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    #note.error { color: $error; text-style: bold; }
    TabbedContent { height: 1fr; }
    TabPane { padding: 0; }
    #board-head { height: 1; padding: 0 1; }
    #lanes { height: 1fr; overflow-x: hidden; }
    #lane-grid { grid-size: 2; grid-rows: 1fr; grid-gutter: 0 1; height: 1fr; }
    .lane { height: 100%; border-left: vkey $panel; }
    .lane Label { width: 100%; text-style: bold; padding: 0 1; background: $boost; }
    LaneTable { height: 1fr; overflow-x: hidden; scrollbar-size-vertical: 1; }
    #room-side { width: 26; border-right: vkey $panel; }
    #room-list { height: auto; max-height: 8; padding: 0; }
    #roster { height: 1fr; }
    #transcript { height: 1fr; overflow-x: hidden; }
    #budget { height: 1; padding: 0 1; }
    #say { height: 3; }
    .panel-title { text-style: bold; background: $boost; width: 100%; padding: 0 1; }
    .members { height: auto; max-height: 40%; }
    .current { height: auto; max-height: 12; padding: 0 1; }
    .recent { height: 1fr; }
    .agent-head { height: auto; padding: 0 1; }
    """
    # The key bar shows what works on the tab on screen (check_action), so it fits 80 columns; `?` lists all.
    BINDINGS = [
        Binding("question_mark", "keys", "keys"),
        Binding("left_square_bracket", "tab(-1)", "tab", key_display="[ ]"),
        Binding("right_square_bracket", "tab(1)", "tab", show=False),
        Binding("less_than_sign", "room(-1)", "room", show=False),
        Binding("greater_than_sign", "room(1)", "room", show=False),
        Binding("c", "claim", "claim"),
        Binding("x", "release", "release"),
        Binding("d", "done", "done"),
        Binding("i", "say", "say"),
        Binding("slash", "search", "search", key_display="/"),
        Binding("escape", "leave", "back", show=False),
        Binding("ctrl+g", "lasso", "lasso", priority=True),
        Binding("ctrl+b", "broadcast", "broadcast", priority=True),
        Binding("ctrl+w", "close", "dissolve"),
        Binding("ctrl+r", "rename", "rename", priority=True),
        Binding("ctrl+t", "agent_tab", "agent tab", priority=True),
        Binding("ctrl+shift+t,ctrl+n", "group_tab", "group tab", priority=True, show=False),
        Binding("q", "quit", "quit"),
        # the same keys off their tab: not on the key bar there, but they still answer (why not, or go there);
        # each as urgent as its twin (ctrl+w is not: in the input line it deletes a word)
        *(Binding(key, f"anywhere('{action}')", show=False, priority=key in ("ctrl+g", "ctrl+b", "ctrl+r", "ctrl+t"))
          for key, action in (("c", "claim"), ("x", "release"), ("d", "done"), ("i", "say"), ("ctrl+g", "lasso"),
                              ("ctrl+b", "broadcast"), ("ctrl+w", "close"), ("ctrl+r", "rename"), ("ctrl+t", "agent_tab"))),
    ]
    # where each action is on the key bar (the rest are everywhere): at 80 columns the bar holds one tab's keys
    ON_TAB = {"claim": "board", "release": "board", "done": "board", "say": "rooms", "broadcast": "group", "close": "closable",
              "rename": "group", "agent_tab": "agents", "lasso": "not-group"}

    def __init__(self, ctx: Context, *, tab: str = "board", room: str | None = None, live: bool = True) -> None:
        super().__init__()
        self.ctx = ctx
        self.room = room or ctx.room
        self.first_tab = tab
        self.live = live
        self.read_only = actions.read_only(ctx)
        self.group_panes: dict[str, str] = {}  # group name -> pane id
        self.agent_panes: dict[str, str] = {}  # agent -> pane id
        self._pane_count = 0
        self._loading: set[str] = set()
        self._again: set[str] = set()
        self._stop: Any = None
        self._watcher: threading.Thread | None = None
        self._leases: dict[str, tuple[LaneTable, views.TaskRow]] = {}  # leased tasks on screen, for the countdown
        self._follow: str | None = None  # a group this app renamed or made: its tab is shown once it is drawn
        self._note_timer: Any = None
        self.loaded = threading.Event()  # the first load of every tab is on screen
        self._searched: tuple[str, Results | None] = ("", None)  # the last search: `/` opens on it again
        self._around: tuple[str, str] | None = None  # (room, message id): a chat hit the transcript is opened at
        self._select: Hit | None = None  # a task hit: selected on the board once its room's board is drawn

    # --- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._bar_text(), id="bar", markup=False)
        with Tabs(id="tabs"):
            with TabPane("Board", id="board"):
                yield Static("", id="board-head", markup=False)
                with VerticalScroll(id="lanes"):
                    yield Grid(id="lane-grid")
            with TabPane("Rooms", id="rooms"):
                with Horizontal():
                    with Vertical(id="room-side"):
                        yield Label("rooms", classes="panel-title")
                        yield OptionList(id="room-list")
                        yield Label("roster", classes="panel-title")
                        yield DataTable(id="roster", cursor_type="none", show_header=False)
                    with Vertical():
                        yield Transcript(id="transcript")
                        yield Static("", id="budget", markup=False)
                        # no blinking cursor: a blink is a redraw twice a second, and idle should cost nothing
                        say = SayInput(placeholder="i: say something; Enter posts, Escape leaves", id="say",
                                       disabled=self.read_only)
                        say.cursor_blink = False
                        yield say
            with TabPane("Agents", id="agents"):
                yield DataTable(id="agent-table", cursor_type="row")
        yield Static("", id="note", markup=False)
        yield Footer()

    def _bar_text(self) -> str:
        bits = [f"rooms top · {os.path.basename(self.ctx.project.root)} · as {self.ctx.me} · #{self.room}"]
        if self.read_only:
            bits.append("READ-ONLY: .rooms/ cannot be written, keys that change things are off")
        return " · ".join(bits)

    def on_mount(self) -> None:
        self.query_one("#agent-table", DataTable).add_columns("agent", "kind", "state", "unread", "last seen", "spawns", "status")
        self.query_one("#roster", DataTable).add_columns("agent", "flags")
        self._load_all()
        self.set_interval(1.0, self._tick_leases)
        if self.live:
            self._start_watch()

    def _load_all(self) -> None:
        for part in ("board", "rooms", "agents", "groups", *(f"agent:{a}" for a in self.agent_panes)):
            self.reload(part)

    # --- loading: a worker thread reads, the UI thread draws ---------------------------------------

    LOADERS: dict[str, str] = {"board": "_read_board", "rooms": "_read_room", "agents": "_read_agents", "groups": "_read_groups"}

    def reload(self, part: str) -> None:
        """Read `part` again in a thread; while a read of it runs, one more is queued (bursts coalesce)."""
        if part in self._loading:
            self._again.add(part)
            return
        self._loading.add(part)
        reader = self._reader(part)
        self.run_worker(lambda: self._read(part, reader), thread=True, group=part, exit_on_error=False)

    def _reader(self, part: str) -> Callable[[], Any]:
        if part.startswith("agent:"):
            agent = part.partition(":")[2]
            return lambda: views.inbox(self.ctx.project, agent)
        loader: Callable[[], Any] = getattr(self, self.LOADERS[part])
        return loader

    def _read(self, part: str, reader: Callable[[], Any]) -> None:
        try:
            data, error = reader(), None
        except RoomsError as exc:
            data, error = None, exc.fold().message
        self.call_from_thread(self._apply, part, data, error)  # type: ignore[arg-type]  # a coroutine: awaited on the app loop

    async def _apply(self, part: str, data: Any, error: str | None) -> None:
        try:
            if error is not None:
                self.say(error, error=True)
            elif part == "board":
                self._draw_board(data)
            elif part == "rooms":
                self._draw_room(data)
            elif part == "agents":
                self._draw_agents(data)
            elif part == "groups":
                await self._draw_groups(data)
            elif part.startswith("agent:"):
                self._draw_agent_tab(part.partition(":")[2], data)
        finally:
            self._loading.discard(part)
        if part in self._again:
            self._again.discard(part)
            self.reload(part)
        elif not self._loading and not self.loaded.is_set():
            self._first_frame()

    def _first_frame(self) -> None:
        self.loaded.set()
        tabs = self.query_one("#tabs", TabbedContent)
        wanted = self.first_tab
        pane = wanted if wanted in views.FIXED_TABS else self.group_panes.get(wanted)
        if pane is None:
            self.say(f"no group {wanted!r}; showing the board (see rooms group list)", error=True)
            pane = "board"
        tabs.active = pane
        self._focus_tab(pane)

    def _read_board(self) -> dict[str, Any]:
        return views.board(self.ctx.project, self.room)

    def _read_room(self) -> dict[str, Any]:
        room, around = self.room, self._around
        return {"names": views.room_names(self.ctx.project),
                **views.room(self.ctx.project, self.ctx.config, room, around=around[1] if around and around[0] == room else None)}

    def _read_agents(self) -> list[dict[str, Any]]:
        return views.agents(self.ctx.project, self.ctx.config)

    def _read_groups(self) -> list[dict[str, Any]]:
        out = []
        for row in views.groups(self.ctx.project):
            try:
                out.append(views.group(self.ctx.project, row["name"]))
            except RoomsError:
                continue  # dissolved between the listing and the read
        return out

    # --- drawing ------------------------------------------------------------------------------------

    def _draw_board(self, data: dict[str, Any]) -> None:
        counts = ", ".join(f"{n} {s}" for s, n in data["counts"].items() if n) or "empty"
        extra = f" · {data['conflicts']} with conflicts" if data["conflicts"] else ""
        more = data["done_total"] - len(data["done"])
        self.query_one("#board-head", Static).update(
            f"board of #{data['room']}: {counts}{extra}" + (f" · done column: newest {len(data['done'])} of {data['done_total']}" if more > 0 else ""))
        grid = self.query_one("#lane-grid", Grid)
        columns = [*data["lanes"], ("done", data["done"])] if data["done"] else list(data["lanes"])
        existing = {w.lane: w for w in grid.query(LaneTable)}
        wanted = [name for name, _rows in columns]
        tall, width = self.size.height >= TALL_CELLS, self._lane_width(len(columns))
        if [w.lane for w in grid.query(LaneTable)] != wanted or any((w.tall, w.width) != (tall, width) for w in existing.values()):
            focused = self.focused.lane if isinstance(self.focused, LaneTable) else None
            grid.remove_children()
            existing = {}
            for name, _rows in columns:
                table = LaneTable(name, tall=tall, width=width)
                existing[name] = table
                grid.mount(Vertical(table.heading, table, classes="lane"))
            if focused in existing:
                self.call_after_refresh(existing[focused].focus)
        self._leases = {}
        for name, rows in columns:
            self._fill_lane(existing[name], rows)
            title = "done" if name == "done" else f"lane {name}"
            existing[name].heading.update(f"{title} · {len(rows)}")
        self._size_lanes()
        if self._select is not None and self._select.room == data["room"]:
            self.call_after_refresh(self._select_task)

    def _select_task(self) -> None:
        """A task hit's row selected in its lane (its page of rows added first), or the hit shown whole when
        the board does not hold it (archived, or finished before the newest of the done column)."""
        hit, self._select = self._select, None
        if hit is None or hit.room != self.room:
            return
        for table in self.query(LaneTable):
            at = next((n for n, row in enumerate(table.tasks) if row.id == hit.id), None)
            if at is not None:
                table.more(at + table.PAGE)
                self.set_focus(table)  # at once: the tab's own first focus (deferred) sees it and stays off
                table.move_cursor(row=at)
                return self.say(f"{hit.ref}: {hit.title}")
        self.push_screen(HitScreen(hit, f"not on the board of #{hit.room} (archived, or finished before the newest {views.DONE_SHOWN})"))

    def _size_lanes(self) -> None:
        """As many lanes a row as fit LANE_MIN columns each, sharing the width (the done column is a lane
        like the others, never cut at the right edge); the rows share the height, each at least
        LANE_MIN_HEIGHT lines (then the board scrolls down)."""
        grid = self.query_one("#lane-grid", Grid)
        lanes = len(grid.children)
        if not lanes:
            return
        across = self._across(lanes)
        grid.styles.grid_size_columns = across
        grid.styles.min_height = -(-lanes // across) * LANE_MIN_HEIGHT  # the grid fills the tab (1fr), at least this

    def _across(self, lanes: int) -> int:
        return max(1, min(lanes, self.size.width // LANE_MIN))

    def _lane_width(self, lanes: int) -> int:
        """A lane's columns: the width shared by the lanes of a row (a gutter of 1 between them)."""
        across = self._across(max(1, lanes))
        return max(LANE_MIN, (self.size.width - (across - 1)) // across - 1)

    def on_resize(self) -> None:
        self._size_lanes()
        tables = list(self.query(LaneTable))
        if self.loaded.is_set() and tables and any(
                (t.tall, t.width) != (self.size.height >= TALL_CELLS, self._lane_width(len(tables))) for t in tables):
            self.reload("board")

    def _fill_lane(self, table: LaneTable, rows: list[views.TaskRow]) -> None:
        for r in rows:
            if r.expires_at:
                self._leases[r.id] = (table, r)
        table.show(rows)

    def _patch_task(self, task_id: str) -> None:
        """A task event: that one task is replayed and its cell redrawn at once (a read of the whole
        board of 10 000 takes ~0.4 s); the whole board is read again after it, to converge."""
        room = self.room

        def read() -> None:
            try:
                row = views.task_row(self.ctx.project, room, task_id)
            except RoomsError:
                row = None
            self.call_from_thread(self._patched, room, task_id, row)

        self.run_worker(read, thread=True, group="patch", exit_on_error=False)

    def _patched(self, room: str, task_id: str, row: views.TaskRow | None) -> None:
        if row is not None and room == self.room:
            for table in self.query(LaneTable):
                if table.lane == row.lane and table.replace(row):
                    self._leases.pop(task_id, None)
                    if row.expires_at:
                        self._leases[task_id] = (table, row)
                    break
        self.reload("board")

    def _tick_leases(self) -> None:
        """Once a second: the cells of the leased tasks, for their countdown (nothing else is redrawn)."""
        for task_id, (table, row) in list(self._leases.items()):
            if task_id in table.rows:
                table.update_cell(task_id, table.ordered_columns[0].key, _task_cell(row, table.tall))

    def _draw_room(self, data: dict[str, Any]) -> None:
        info = data["info"]
        listing = self.query_one("#room-list", OptionList)
        if [o.id for o in listing.options] != data["names"]:
            listing.clear_options()
            # one line each, cut with …: a long name never wraps into what looks like another room (OptionList
            # wraps every prompt, so the cut is made here, at the panel's width)
            fits = max(8, (listing.scrollable_content_region.width or ROOM_NAME_CHARS) - 1)
            listing.add_options([Option(f"#{n}" if len(n) < fits else f"#{n[:fits - 2]}…", id=n) for n in data["names"]])
        if self.room in data["names"]:
            listing.highlighted = data["names"].index(self.room)
        roster = self.query_one("#roster", DataTable)
        roster.clear()
        for m in info["roster"]:
            flags = [f for f, on_ in (("muted", m["muted"]), ("handoff", m["handoff"]), ("missing", m.get("missing"))) if on_]
            flags.append(data["state"].get(m["id"], "idle"))
            roster.add_row(m["id"], " ".join(flags))
        budget = info["budget"]
        self.query_one("#budget", Static).update(
            f"#{info['id']} · {info['status']} · budget {budget['remaining']}/{budget['total']} ({count(budget['remaining'], 'turn')} left)")
        self.query_one("#transcript", Transcript).show(data["messages"])

    def _draw_agents(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#agent-table", DataTable)
        keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.row_count else None
        table.clear()
        for row in rows:
            table.add_row(row["name"], row["kind"], row["state"], str(row["unread"]) if row["unread"] else "",
                          _clock(row["last_seen"]), ", ".join(row["spawns"]), row["status"], key=row["name"])
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))

    async def _draw_groups(self, infos: list[dict[str, Any]]) -> None:
        """A tab per live group: new ones added, gone ones (dissolved, renamed away) removed, labels kept current."""
        tabs = self.query_one("#tabs", TabbedContent)
        present = {info["name"] for info in infos}
        gone = [self.group_panes.pop(name) for name in [n for n in self.group_panes if n not in present]]
        for info in infos:
            name = info["name"]
            pane_id = self.group_panes.get(name)
            if pane_id is None:
                pane_id = self._new_pane_id("group")
                self.group_panes[name] = pane_id
                await tabs.add_pane(_group_pane(pane_id, info))
            else:
                tabs.get_tab(pane_id).label = info["label"]
                self._fill_group(tabs.get_pane(pane_id), info)
            if name == self._follow:  # renamed or made here: its tab, not the neighbour Textual picks
                self._follow = None
                tabs.active = pane_id
        # the gone tabs go last: removing the active tab makes Textual activate a neighbour, later than
        # this, which took the focus back from a renamed group's new tab (1 run in 3)
        for pane_id in gone:
            await tabs.remove_pane(pane_id)

    def _fill_group(self, pane: TabPane, info: dict[str, Any]) -> None:
        _fill_members(pane.query_one(".members", DataTable), info)
        pane.query_one(".current", Static).update(_current_text(info["in_flight"]))
        _fill_recent(pane.query_one(".recent", DataTable), info)

    def _draw_agent_tab(self, agent: str, data: dict[str, Any]) -> None:
        pane_id = self.agent_panes.get(agent)
        if pane_id is None:
            return
        pane = self.query_one("#tabs", TabbedContent).get_pane(pane_id)
        pane.query_one(".agent-head", Static).update(
            f"@{agent} · status: {data['status'] or '—'} · last seen {_clock(data['last_seen']) or 'never'} · {data['unread']} unread (peeked: nothing marked read)")
        log = pane.query_one(RichLog)
        log.clear()
        for ts, line, unread in data["lines"]:
            row = Table.grid(padding=(0, 1))
            row.add_column(no_wrap=True, style="dim")
            row.add_column(ratio=1, overflow="fold", style="bold" if unread else "")
            row.add_row(f"{'*' if unread else ' '} {_clock(ts)}", line)
            log.write(row)

    def _new_pane_id(self, kind: str) -> str:
        self._pane_count += 1
        return f"{kind}-{self._pane_count}"

    # --- live ---------------------------------------------------------------------------------------

    def _start_watch(self) -> None:
        """Follow `.rooms/` in a thread with the engine of `rooms watch --all`. Once its starting point
        is taken every tab is read again, so a write that landed between the first read and that
        point is not missed."""
        from rooms_cli.watch import Selection, watch
        from rooms_cli.watch.wake import StopFlag

        self._stop = StopFlag()

        def follow() -> None:
            try:
                for event in watch(self.ctx.project, Selection(all=True), stop=self._stop,
                                   started=lambda: self.post_message(Changed({"type": "all"}))):
                    self.post_message(Changed(event))
            except RoomsError as exc:
                self.call_from_thread(self.say, f"live updates stopped: {exc.fold().message}", True)

        self._watcher = threading.Thread(target=follow, name="rooms-top-watch", daemon=True)
        self._watcher.start()

    def on_changed(self, message: Changed) -> None:
        event = message.event
        family = str(event.get("type", "")).partition(".")[0]
        if family == "all":  # the watcher's starting point is taken: read everything once more
            self._load_all()
        elif family == "task" and event.get("room") == self.room:
            if event.get("task") and event.get("type") != "task.created":
                self._patch_task(str(event["task"]))
            else:
                self.reload("board")
        elif family == "chat":
            if event.get("room") == self.room:
                self._show_line(event)
                self.reload("rooms")
            self.reload("agents")
        elif family == "group":
            self.reload("groups")
        elif family in ("inbox", "spawn"):
            self.reload("agents")
            agent = event.get("agent")
            if family == "inbox" and agent in self.agent_panes:
                self.reload(f"agent:{agent}")

    def _show_line(self, event: dict[str, Any]) -> None:
        """A transcript line, drawn from the event itself as it arrives; the read of the room that
        follows redraws the transcript with it (and the roster and budget)."""
        from rooms_cli.chat.transcript import Message

        kind = str(event.get("type", "chat.message")).partition(".")[2] or "message"
        self.query_one("#transcript", Transcript).add(Message.from_json({**event, "kind": kind}))

    async def action_quit(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self.exit()

    def on_unmount(self) -> None:
        if self._stop is not None:
            self._stop.set()

    # --- notes --------------------------------------------------------------------------------------

    def say(self, text: str, error: bool = False) -> None:
        """A line under the tabs: the result of a key, or an error, whole (it wraps, up to three lines); it
        goes after NOTE_SECONDS (an error after ERROR_SECONDS), or when another tab is shown."""
        note = self.query_one("#note", Static)
        note.update(("error: " if error else "") + text)
        note.set_class(error, "error")
        if self._note_timer is not None:
            self._note_timer.stop()
        self._note_timer = self.set_timer(ERROR_SECONDS if error else NOTE_SECONDS, self.clear_note) if text else None

    def clear_note(self) -> None:
        note = self.query_one("#note", Static)
        note.update("")
        note.set_class(False, "error")
        if self._note_timer is not None:  # a note cleared early: its timer must not clear the next one
            self._note_timer.stop()
        self._note_timer = None


    def _act(self, what: Callable[[], str], *reload: str, failed: Callable[[], None] | None = None) -> None:
        """Run a write in a thread (a chat turn may wait on a model); its line or its error goes to the note,
        and on an error `failed` runs (the composer opens again with what was typed)."""
        def work() -> None:
            try:
                line, error = what(), False
            except RoomsError as exc:
                line, error = exc.fold().message, True
            self.call_from_thread(self._acted, line, error, reload, failed)

        self.run_worker(work, thread=True, group="act", exit_on_error=False)

    def _acted(self, line: str, error: bool, reload: tuple[str, ...], failed: Callable[[], None] | None = None) -> None:
        self.say(line, error)
        for part in reload:
            self.reload(part)
        if error and failed is not None:
            failed()

    # --- which tab, which task, which group ---------------------------------------------------------

    def _active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    def _focused_group(self) -> str | None:
        active = self._active()
        return next((name for name, pane in self.group_panes.items() if pane == active), None)

    def _selected_task(self) -> str | None:
        table = self.focused
        if not isinstance(table, LaneTable) or not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _tab_body(self, pane: TabPane) -> Any:
        """Where the focus rests on a tab: never the rooms tab's input line (it would take every key)."""
        return next((w for w in pane.query("LaneTable, #transcript, #agent-table, DataTable, RichLog") if w.focusable), None)

    def _focus_tab(self, pane_id: str) -> None:
        def focus() -> None:
            tabs = self.query_one("#tabs", TabbedContent)
            if tabs.active != pane_id or (pane_id == "board" and self._select is not None):
                return  # another tab was chosen meanwhile (focusing this one would switch back to it), or a task hit focuses its lane
            pane = tabs.get_pane(pane_id)
            if self.focused is not None and pane in self.focused.ancestors and not isinstance(self.focused, Input):
                return
            target = self._tab_body(pane)
            if target is not None:
                target.focus()

        self.call_after_refresh(focus)

    def focus_tab_body(self) -> None:
        """Escape: the focus back on the tab on screen (out of the input line)."""
        tabs = self.query_one("#tabs", TabbedContent)
        target = self._tab_body(tabs.get_pane(tabs.active))
        if target is not None:
            target.focus()
        else:
            tabs.query_one("Tabs").focus()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if self.loaded.is_set() and event.pane.id is not None:
            self._focus_tab(event.pane.id)
            self.refresh_bindings()
            if self.query_one("#note", Static).has_class("error"):
                self.clear_note()  # an error is about the tab it came from

    def _place(self) -> str:
        """board, rooms, agents, group or agent-tab: what the tab on screen is."""
        active = self._active()
        if active in views.FIXED_TABS:
            return active
        return "group" if active in self.group_panes.values() else "agent-tab"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The key bar shows an action only on the tabs of ON_TAB; elsewhere its key runs `anywhere`, which
        does the same (and says why not, or goes where it works) without a place on the bar."""
        where = self.ON_TAB.get(action)
        if where is None or not self.loaded.is_set():
            return True
        place = self._place()
        if where == "closable":
            return place in ("group", "agent-tab")
        if where == "not-group":
            return place != "group"
        return place == where

    def action_anywhere(self, action: str) -> None:
        getattr(self, f"action_{action}")()

    # --- actions ------------------------------------------------------------------------------------

    def action_tab(self, step: int) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        ids = [p.id for p in tabs.query(TabPane) if p.id]
        if ids:
            # nothing focused while the pane changes: Textual would move the focus of a pane being hidden to
            # a neighbour in that same pane, which activated it again (`]` stayed on the rooms tab)
            self.set_focus(None)
            tabs.active = ids[(ids.index(tabs.active) + step) % len(ids)] if tabs.active in ids else ids[0]

    def action_room(self, step: int) -> None:
        names = views.room_names(self.ctx.project)
        if not names:
            return
        at = names.index(self.room) if self.room in names else -1
        self.switch_room(names[(at + step) % len(names)])

    @on(OptionList.OptionSelected, "#room-list")
    def _room_picked(self, event: OptionList.OptionSelected) -> None:
        self.switch_room(str(event.option.id))

    def switch_room(self, room: str, around: str | None = None) -> None:
        """The board and rooms tabs on `room`; `around`: a message (a chat hit) its transcript is opened at."""
        if room == self.room:
            return
        self.room = room
        self._around = (room, around) if around else None
        self.query_one("#bar", Static).update(self._bar_text())
        self.say(f"room #{room}")
        self.reload("board")
        self.reload("rooms")

    def action_say(self) -> None:
        if self._place() != "rooms":
            self.query_one("#tabs", TabbedContent).active = "rooms"
        if self.read_only:
            return self.say("read-only: the input line is off", error=True)
        self.call_after_refresh(self.query_one("#say", Input).focus)

    def action_leave(self) -> None:
        self.focus_tab_body()

    def action_claim(self) -> None:
        self._task_action("claim", lambda task: actions.claim(self.ctx, self.room, task))

    def action_release(self) -> None:
        self._task_action("release", lambda task: actions.release(self.ctx, self.room, task))

    def action_done(self) -> None:
        task = self._selected_task()
        if task is None:
            return self._no_task("finish")

        def finish(answer: dict[str, Any] | None) -> None:
            if answer is not None:
                self._act(lambda: actions.done(self.ctx, self.room, task, answer["summary"]), "board")

        self.push_screen(FieldsScreen(f"Done: {task}", [("summary", "summary (what was done)", "")], ok="Done"), finish)

    def _task_action(self, verb: str, do: Callable[[str], str]) -> None:
        task = self._selected_task()
        if task is None:
            return self._no_task(verb)
        self._act(lambda: do(task), "board")

    def _no_task(self, verb: str) -> None:
        self.say(f"select a task to {verb} first: the board tab, Tab into a lane, arrows to a task", error=True)

    @on(Input.Submitted, "#say")
    def _post(self, event: Input.Submitted) -> None:
        text = event.value
        event.input.value = ""
        if text.strip():
            self.say(f"posting to #{self.room}…")
            room = self.room
            self._act(lambda: actions.post(self.ctx, room, text), "rooms")

    def action_lasso(self) -> None:
        def made(answer: tuple[str, list[str]] | None) -> None:
            if answer is not None:
                name, members = answer
                self._follow = name
                self._act(lambda: actions.create_group(self.ctx, name, members), "groups")

        self.push_screen(LassoScreen(views.agent_ids(self.ctx.project)), made)

    def action_group_tab(self) -> None:
        def made(answer: dict[str, Any] | None) -> None:
            if answer is not None:
                profiles = [p.strip() for p in answer["profiles"].split(",") if p.strip()]
                self._follow = answer["name"].strip()
                self._act(lambda: actions.create_group(self.ctx, answer["name"].strip(), profiles), "groups")

        self.push_screen(FieldsScreen("New group tab: a group and its members (rooms group spawn-mixed)",
                                      [("name", "group name", ""), ("profiles", "profiles, comma-separated (agent ids)", "")],
                                      ok="Create"), made)

    def action_broadcast(self) -> None:
        name = self._focused_group()
        if name is None:
            return self.say("Ctrl+B broadcasts to a group: switch to a group tab first ([ ] or click it)", error=True)

        try:
            actions.check_broadcast(self.ctx, name)  # a broadcast in flight: said now, not after four fields typed
        except RoomsError as exc:
            return self.say(exc.fold().message, error=True)
        self._compose(name, {})

    def _compose(self, name: str, typed: dict[str, str]) -> None:
        """The four-field composer, holding `typed` (what a send that failed had): nothing typed is lost."""
        def send(answer: dict[str, Any] | None) -> None:
            if answer is not None:
                self._act(lambda: actions.broadcast(self.ctx, name, answer), "groups",
                          failed=lambda: self._compose(name, answer))

        self.push_screen(FieldsScreen(f"Broadcast to {name} (all four fields are sent; empty is allowed)",
                                      [(k, label, typed.get(k, "")) for k, label in COMPOSER_FIELDS], ok="Send"), send)

    def action_close(self) -> None:
        active = self._active()
        agent = next((a for a, pane in self.agent_panes.items() if pane == active), None)
        if agent is not None:
            self.query_one("#tabs", TabbedContent).remove_pane(self.agent_panes.pop(agent))
            return
        name = self._focused_group()
        if name is None:
            return self.say("Ctrl+W dissolves a group: switch to its tab first", error=True)

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._act(lambda: actions.dissolve(self.ctx, name), "groups")

        self.push_screen(ConfirmScreen(f"Dissolve group {name}? Its broadcast in flight is cancelled; its log is kept, closed by a dissolved event.",
                                       ok="Dissolve"), confirmed)

    def action_rename(self) -> None:
        name = self._focused_group()
        if name is None:
            return self.say("Ctrl+R renames a group: switch to its tab first", error=True)

        def renamed(answer: dict[str, Any] | None) -> None:
            if answer is not None and answer["name"].strip() != name:
                self._follow = answer["name"].strip()  # its tab stays on screen under the new name
                self._act(lambda: actions.rename(self.ctx, name, answer["name"].strip()), "groups")

        self.push_screen(FieldsScreen(f"Rename group {name}", [("name", "new name", name)], ok="Rename"), renamed)

    def action_agent_tab(self) -> None:
        def opened(agent: str | None) -> None:
            if agent is None:
                return
            tabs = self.query_one("#tabs", TabbedContent)
            if agent not in self.agent_panes:
                pane_id = self._new_pane_id("agent")
                self.agent_panes[agent] = pane_id
                tabs.add_pane(TabPane(f"@{agent}", Static("", classes="agent-head", markup=False),
                                      RichLog(wrap=True, markup=False, min_width=20), id=pane_id))
            tabs.active = self.agent_panes[agent]
            self.reload(f"agent:{agent}")

        names = [row.name for row in views.agents_roster(self.ctx.project, self.ctx.config)]
        self.push_screen(PickScreen("New agent tab: whose inbox and status?", names), opened)

    def action_keys(self) -> None:
        self.push_screen(KeysScreen(KEYS))

    def action_search(self) -> None:
        """`/`: the search screen, on the last search; a chat or task hit chosen there is shown where it lives."""
        def searched(query: str) -> Results:
            results = actions.search(self.ctx, query)
            self._searched = (query, results)
            return results

        self.push_screen(SearchScreen(searched, *self._searched), self._go_to_hit)

    def _go_to_hit(self, hit: Hit | None) -> None:
        if hit is None:
            return  # Escape: the tab it was opened from, as it was
        if hit.room not in views.room_names(self.ctx.project):
            self.push_screen(HitScreen(hit, f"room #{hit.room} is not a live room (rooms room list)"))
            return
        chat = hit.kind == "chat"
        if chat:
            self.query_one("#transcript", Transcript).mark(hit.id)
        else:
            self._select = hit
        if hit.room != self.room:
            self.switch_room(hit.room, around=hit.id if chat else None)  # reads the board and the room again
        else:
            if chat:
                self._around = (hit.room, hit.id)
            self.reload("rooms" if chat else "board")
        self.set_focus(None)  # as `]` does: the focus of the tab left behind would pull it back
        self.query_one("#tabs", TabbedContent).active = "rooms" if chat else "board"
        if chat:
            self.say(f"{hit.ref} in #{hit.room}, marked")


def _group_pane(pane_id: str, info: dict[str, Any]) -> TabPane:
    members: DataTable[Any] = DataTable(classes="members", cursor_type="row")
    members.add_columns(" ", "member", "state", "profile")
    recent: DataTable[Any] = DataTable(classes="recent", cursor_type="row")
    recent.add_columns("broadcast", "status", "replied", "reducer", "objective")
    _fill_members(members, info)
    _fill_recent(recent, info)
    return TabPane(info["label"], Label("Members", classes="panel-title"), members,
                   Label("Current broadcast", classes="panel-title"),
                   Static(_current_text(info["in_flight"]), classes="current", markup=False),
                   Label("Recent broadcasts", classes="panel-title"), recent, id=pane_id)


def _fill_members(table: DataTable[Any], info: dict[str, Any]) -> None:
    from rooms_cli.groups.status import EMOJI

    table.clear()
    for m in info["members"]:
        table.add_row(EMOJI[m["state"]], m["handle"], m["state"], m["profile"])


def _fill_recent(table: DataTable[Any], info: dict[str, Any]) -> None:
    table.clear()
    for b in info["recent"]:
        table.add_row(b["broadcast_id"], b["status"], f"{len(b['replied'])}/{len(b['members'])}", b.get("reducer") or "-", b["objective"])


def _current_text(flight: dict[str, Any] | None) -> str:
    if not flight:
        return "nothing in flight (Ctrl+B to broadcast)"
    fields = flight.get("fields") or {"objective": flight["objective"]}
    return "\n".join([
        f"{flight['broadcast_id']} from {flight.get('sender') or '?'} · {len(flight['replied'])}/{len(flight['members'])} replied"
        f" · waiting for {', '.join(flight['pending']) or 'the gather (rooms group wait)'}",
        *(f"{key}: {fields[key]}" for key, _label in COMPOSER_FIELDS if key in fields),
    ])


def _status_style(status: str) -> str:
    return {"doing": "bold yellow", "blocked": "red", "failed": "bold red", "done": "green"}.get(status, "")


def _signature(row: views.TaskRow) -> tuple[Any, ...]:
    """What a task's cell is drawn from: equal signatures, nothing to redraw."""
    return (row.id, row.status, row.title, row.holder, row.expires_at, tuple(row.flags), row.short)


def _task_cell(row: views.TaskRow, tall: bool = False) -> Text:
    """Two lines: `●  t-01M8953VR5  researcher 9m59s`, then the title and its flags; `tall`: a third, the
    definition of done. The mark stands apart from the id (two spaces: a mark a terminal draws wide
    still leaves one)."""
    # the spaces go with the mark: a span of its own that starts with blanks is drawn without them by
    # some SVG renderers (the snapshots), which glued the mark to the id
    text = Text(f"{STATUS_MARK.get(row.status, '?')}  ", style=_status_style(row.status), no_wrap=True, overflow="ellipsis")
    text.append(f"{row.short}  ", style="dim")
    if row.holder:
        text.append(f"{row.holder} {views.countdown(row.expires_at)}", style="yellow")
    elif row.status not in ("todo", "doing"):
        text.append(row.status)
    text.append(f"\n{row.title}" + ("  " if row.flags else ""))
    for n, flag in enumerate(row.flags):
        text.append(f"⚠ {flag}" + ("  " if n + 1 < len(row.flags) else ""), style="bold red")
    if tall and row.done_when:
        text.append(f"\ndone when: {row.done_when}", style="dim")
    return text


def _clock(moment: str | None) -> str:
    """`13:18:22` of an ISO time (UTC), "" for none."""
    if not moment or "T" not in moment:
        return ""
    return moment.split("T", 1)[1][:8]


def _message_row(message: transcript.Message, marked: bool = False) -> Table:
    """A transcript line: its time in a column of its own, the words wrapped in theirs (never back under the
    time); `marked` (a search hit): in reverse video."""
    row = Table.grid(padding=(0, 1))
    row.add_column(no_wrap=True, style="dim")
    row.add_column(ratio=1, overflow="fold", style="reverse" if marked else "")
    text = Text()
    if message.kind in ("message",):
        text.append(f"{message.speaker}: ", style="bold")
        text.append(message.text)
    else:
        text.append(f"{message.speaker} {message.text}" if message.kind != "system" else message.text, style="italic dim")
    row.add_row(_clock(message.ts), text)
    return row
