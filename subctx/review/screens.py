"""The review's modal screens: the key help, the preview of re-translated lines (keep or
revert), and the unsaved-changes question on quit."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

HELP = """[b]subctx review[/b] — keys

  ↑ / ↓     move between lines          n / p   next / previous flagged choice
  1 … 9     use alternative N           e       edit the translation (Enter saves)
  a         accept as it is             u       undo the last change
  c         carry this line's ты/вы to the rest of the scene (preview, keep or revert)
  g         the speaker is a woman (again: a man): the line translated again with that tag
  s         save .srt + review log      q       quit (asks if there are unsaved changes)
  ?         this help

A line is [b]flagged ⚑[/b] when its English hides a choice Russian must make (it, they, you,
I + past tense, one) and the best alternative that chose differently (ты/вы, он/она...) is
close in probability. Changing a line re-translates the machine's lines after it in the same
scene, because they use it as context; you then keep or revert what changed. Lines you edited,
picked or accepted are never changed by that."""


class HelpScreen(ModalScreen[None]):
    """The keys and what a flag means."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(HELP)
            yield Button("Close", id="close")

    def on_button_pressed(self) -> None:
        self.dismiss()


class ChangesScreen(ModalScreen[bool]):
    """The later lines a change altered, and the person's lines it left alone
    (render.changes_text); keep (True) or revert (False)."""

    BINDINGS = [Binding("k,enter", "keep", "keep"), Binding("r,escape", "revert", "revert")]

    def __init__(self, preview: Text):
        super().__init__()
        self.preview = preview

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield VerticalScroll(Static(self.preview), id="changes")
            with Horizontal(classes="buttons"):
                yield Button("Keep (k)", id="keep", variant="primary")
                yield Button("Revert (r)", id="revert")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "keep")

    def action_keep(self) -> None:
        self.dismiss(True)

    def action_revert(self) -> None:
        self.dismiss(False)


class QuitScreen(ModalScreen[str]):
    """Asked on quit with unsaved changes: 'save', 'quit' or 'cancel'."""

    BINDINGS = [Binding("s", "choose('save')", "save"), Binding("q", "choose('quit')", "quit"),
                Binding("escape,c", "choose('cancel')", "cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("[b]There are unsaved changes.[/b]")
            with Horizontal(classes="buttons"):
                yield Button("Save and quit (s)", id="save", variant="primary")
                yield Button("Quit without saving (q)", id="quit", variant="error")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
