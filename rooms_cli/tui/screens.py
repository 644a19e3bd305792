"""The dialogs of `rooms top`: lasso, four-field composer, confirm, one-or-more fields, pick one, keys,
search and a search hit.

Each is a modal screen that returns what was typed or chosen, or None when cancelled (Escape, or the
Cancel button): the app writes nothing for None.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, SelectionList, Static
from textual.widgets.option_list import Option

from rooms_cli.core.errors import RoomsError

if TYPE_CHECKING:
    from rooms_cli.search.engine import Hit, Results

MODAL_CSS = """
.dialog { width: 76; max-width: 100%; height: auto; max-height: 100%; border: round $accent; padding: 0 1; background: $surface; }
.dialog Label.title { text-style: bold; width: 100%; }
.dialog Input { margin: 0; }
.dialog .buttons { height: auto; align-horizontal: right; }
.dialog Button { min-width: 10; margin: 0 0 0 1; }
.dialog SelectionList, .dialog OptionList { height: auto; max-height: 12; }
.dialog .keys { height: auto; }
.dialog .key { width: 24; text-style: bold; }
.dialog .what { width: 1fr; }
.dialog #picked { color: $text-muted; }
.dialog.search { width: 100%; max-width: 120; height: 100%; }
.dialog.search #hits { height: 1fr; max-height: 100%; }
.dialog #status { height: auto; color: $text-muted; }
.dialog #status.error { color: $error; text-style: bold; }
.dialog #hit-text { height: auto; max-height: 14; margin-bottom: 1; }
.dialog #ref { text-style: bold; }
.dialog .hint { color: $text-muted; }
"""
MARK = "**"  # around each match in a hit's snippet (search/engine.py)
_CLOSING_BLANKS = re.compile(re.escape(MARK) + r"(\s+)")  # a closing mark and the blanks after it (an opening one is before a word)
OPENS_IN_PLACE = ("chat", "task")  # hits the dashboard shows where they live (a room's transcript, the board)


class _Dialog(ModalScreen[Any]):
    DEFAULT_CSS = "_Dialog { align: center middle; }"
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _buttons(self, ok: str) -> Horizontal:
        return Horizontal(Button(ok, variant="primary", id="ok"), Button("Cancel", id="cancel"), classes="buttons")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self.submit()
        else:
            self.dismiss(None)

    def submit(self) -> None:  # pragma: no cover - each dialog has its own
        raise NotImplementedError


class FieldsScreen(_Dialog):
    """Labelled one-line fields (the composer's four, a rename's one); Enter moves on, the last submits."""

    def __init__(self, title: str, fields: list[tuple[str, str, str]], ok: str = "OK"):
        super().__init__()
        self.title_text = title
        self.fields = fields  # (key, label, initial value)
        self.ok = ok

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="title")
            for key, label, value in self.fields:
                yield Label(label)
                yield Input(value=value, id=f"f-{key}", select_on_focus=False)
            yield self._buttons(self.ok)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        at = inputs.index(event.input)
        if at + 1 < len(inputs):
            inputs[at + 1].focus()
        else:
            self.submit()

    def submit(self) -> None:
        self.dismiss({key: self.query_one(f"#f-{key}", Input).value for key, _label, _value in self.fields})


class LassoScreen(_Dialog):
    """Ctrl+G: pick agents (space toggles), name the group, OK makes it (`rooms group spawn-mixed`)."""

    def __init__(self, agents: list[str]):
        super().__init__()
        self.agents = agents

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Lasso: pick the members (space), name the group, Enter", classes="title")
            yield SelectionList[str](*[(a, a) for a in self.agents], id="members")
            yield Label(self._picked([]), id="picked", markup=False)
            yield Label("group name")
            yield Input(id="name", select_on_focus=False)
            yield self._buttons("Create")

    @staticmethod
    def _picked(members: list[str]) -> str:
        return f"picked: {', '.join(members)}" if members else "picked: nobody yet"

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        """Who is ticked, in words (a ticked box shows only by its colour)."""
        self.query_one("#picked", Label).update(self._picked(list(event.selection_list.selected)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def submit(self) -> None:
        self.dismiss((self.query_one("#name", Input).value.strip(), list(self.query_one("#members", SelectionList).selected)))


class ConfirmScreen(_Dialog):
    """A yes/no question; only the explicit button (or `y`) says yes."""

    BINDINGS = [Binding("escape,n", "cancel", "cancel"), Binding("y", "yes", "yes")]

    def __init__(self, question: str, ok: str):
        super().__init__()
        self.question = question
        self.ok = ok

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="title")
            yield self._buttons(self.ok)

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()  # Enter alone does not dissolve anything

    def action_yes(self) -> None:
        self.submit()

    def submit(self) -> None:
        self.dismiss(True)


class PickScreen(_Dialog):
    """Choose one of a list (Ctrl+T's agent)."""

    def __init__(self, title: str, options: list[str]):
        super().__init__()
        self.title_text = title
        self.options = options

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="title")
            yield OptionList(*self.options, id="options")
            yield self._buttons("Open")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.options[event.option_index])

    def submit(self) -> None:
        index = self.query_one("#options", OptionList).highlighted
        self.dismiss(None if index is None else self.options[index])


class KeysScreen(_Dialog):
    """`?`: the key list; any of Escape, `?` or q closes it."""

    BINDINGS = [Binding("escape,question_mark,q", "cancel", "close")]

    def __init__(self, rows: list[tuple[str, str]]):
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        # each row in two columns: a description that wraps stays right of its key
        with VerticalScroll(classes="dialog"):
            yield Label("Keys of rooms top (Escape closes)", classes="title")
            for key, what in self.rows:
                yield Horizontal(Static(key, classes="key", markup=False), Static(what, classes="what", markup=False),
                                 classes="keys")


class SearchScreen(_Dialog):
    """`/`: a query, run by `search` (the operation `rooms search` runs) in a thread, and its hits best first.
    Enter on a chat or task hit dismisses with it (the app goes where it lives); any other hit opens
    HitScreen over the results. Escape dismisses with None."""

    def __init__(self, run: Callable[[str], Results], query: str = "", results: Results | None = None):
        super().__init__()
        self.searcher = run
        self.query_text = query
        self.results = results  # the last search's, shown again when the screen opens
        self.asked = 0  # searches started: only the latest one's answer is shown

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog search"):
            yield Label('Search everything said and planned: words, "a phrase", prefix*, -word', classes="title")
            yield Input(value=self.query_text, placeholder="what to look for; Enter searches", id="query")
            yield Static("", id="status", markup=False)
            yield OptionList(id="hits")
            yield Label("Enter: go to the hit · Tab: query / hits · Escape: back to the tab", classes="hint")

    def on_mount(self) -> None:
        if self.results is not None:
            self.show_results(self.query_text, self.results)
        self.query_one("#query", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        query = event.value
        if not query.strip():
            return self.set_status("type something to look for")
        self.set_status("searching…")
        self.asked += 1
        asked = self.asked

        def work() -> None:
            try:
                results: Results | str = self.searcher(query)
            except RoomsError as exc:
                results = exc.fold().message
            self.app.call_from_thread(self.answered, asked, query, results)

        self.run_worker(work, thread=True, group="search", exit_on_error=False)

    def set_status(self, text: str, error: bool = False) -> None:
        line = self.query_one("#status", Static)
        line.update(("error: " if error else "") + text)  # an error as the command line prints it
        line.set_class(error, "error")

    def answered(self, asked: int, query: str, results: Results | str) -> None:
        """A search's answer, shown if it is the latest one asked and the screen is still open."""
        if asked == self.asked and self in self.app.screen_stack:
            self.show_results(query, results)

    def show_results(self, query: str, results: Results | str) -> None:
        """The hits of `query`, or the sentence of its error."""
        hits = self.query_one("#hits", OptionList)
        hits.clear_options()
        if isinstance(results, str):
            self.results = None
            return self.set_status(results, error=True)
        self.query_text, self.results = query, results
        if not results.hits:
            return self.set_status(f"no hits for {query!r}")
        shown = len(results.hits)
        self.set_status(f"{shown} of {results.total} hits for {query!r}, best first (narrow the query for the rest)"
                    if results.remaining else f"{shown} hit{'s' * (shown != 1)} for {query!r}, best first")
        options: list[Option | None] = []
        for n, hit in enumerate(results.hits):
            options += [None] if n else []  # a rule between hits
            options.append(Option(hit_prompt(hit), id=str(n)))
        hits.add_options(options)
        hits.highlighted = 0
        hits.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.results is not None:
            self.choose(self.results.hits[int(str(event.option.id))])

    def choose(self, hit: Hit) -> None:
        if hit.kind in OPENS_IN_PLACE:
            self.dismiss(hit)
        else:
            self.app.push_screen(HitScreen(hit))

    def submit(self) -> None:  # pragma: no cover - no OK button: Enter searches or chooses
        pass


class HitScreen(_Dialog):
    """A search hit the dashboard has no place for (an inbox message, a group broadcast or reply, a lesson;
    a task or message whose place is gone): where it lives, its whole text, and the ref that cites it."""

    def __init__(self, hit: Hit, why: str = ""):
        super().__init__()
        self.hit = hit
        self.why = why  # why it is shown here rather than where it lives

    def compose(self) -> ComposeResult:
        hit = self.hit
        with Vertical(classes="dialog"):
            yield Label(hit_heading(hit), classes="title", markup=False)
            if self.why:
                yield Label(self.why, classes="hint", markup=False)
            with VerticalScroll(id="hit-text"):
                yield Static(hit.text or hit.snippet.replace(MARK, ""), markup=False)
            yield Static(f"ref: {hit.ref}", id="ref", markup=False)
            yield Static("a done record cites it: rooms task done ID --artifact REF (or --result-ref REF)", classes="hint",
                         markup=False)
            yield Horizontal(Button("Close", variant="primary", id="cancel"), classes="buttons")


def hit_heading(hit: Hit) -> str:
    """`task · #default board · researcher · todo · alice · 2026-11-21 12:55`, `group rev · alice · …` (its
    place names a group's kind), `lesson · analyst's memories · …`."""
    when = hit.ts[:16].replace("T", " ")
    kind = {"group": "", "memory": "lesson"}.get(hit.kind, hit.kind)
    return " · ".join(part for part in (kind, hit.where, hit.status if hit.kind == "task" else "", hit.who, when) if part)


def hit_prompt(hit: Hit) -> Text:
    """A hit in the list: its heading, a task's title, then the snippet with the matches in bold yellow."""
    text = Text(hit_heading(hit), style="bold")
    if hit.kind == "task" and hit.snippet.replace(MARK, "") != hit.title:
        text.append(f"\n{hit.title}", style="italic")
    text.append("\n")
    # the blank after a match goes with it (invisible in bold): a span that starts with blanks is drawn
    # without them by some SVG renderers (the snapshots), which glued the match to the next word
    for n, piece in enumerate(_CLOSING_BLANKS.sub(r"\1" + MARK, hit.snippet).split(MARK)):
        text.append(piece, style="bold yellow" if n % 2 else "")
    return text
