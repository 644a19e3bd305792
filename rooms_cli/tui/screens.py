"""The dialogs of `rooms top`: lasso, four-field composer, confirm, one-or-more fields, pick one, keys.

Each is a modal screen that returns what was typed or chosen, or None when cancelled (Escape, or the
Cancel button): the app writes nothing for None.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, SelectionList, Static

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
"""


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
