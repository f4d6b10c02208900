"""The review screen: a cue table, the selected cue's details, one-key fixes."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Footer, Header, Input, Static
from textual.widgets.input import Selection

from subctx.review.session import Change, ReviewSession

HELP = """[b]subctx review[/b] — keys

  ↑ / ↓     move between lines          n / p   next / previous flagged choice
  1 … 9     use alternative N           e       edit the translation (Enter saves)
  a         accept as it is             u       undo the last change
  c         carry this line's ты/вы to the rest of the scene (preview, keep or revert)
  s         save .srt + review log      q       quit (asks if there are unsaved changes)
  ?         this help

A line is [b]flagged ⚑[/b] when its English hides a choice Russian must make (it, they, you,
I + past tense, one) and the best alternative that chose differently (ты/вы, он/она...) is
close in probability. Changing a line re-translates the machine's lines after it in the same
scene, because they use it as context; you then keep or revert what changed. Lines you edited,
picked or accepted are never changed by that."""


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    return f"{int(seconds // 60):02d}:{int(seconds % 60):02d}"


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(HELP)
            yield Button("Close", id="close")

    def on_button_pressed(self) -> None:
        self.dismiss()


class ChangesScreen(ModalScreen[bool]):
    """Shows the lines re-translated after an edit; keep (True) or revert (False)."""

    BINDINGS = [Binding("k,enter", "keep", "keep"), Binding("r,escape", "revert", "revert")]

    def __init__(self, changes: list[Change], cue_of: dict[int, int],
                 kept: list[tuple[int, str]] | None = None):
        super().__init__()
        self.changes, self.cue_of, self.kept = changes, cue_of, kept or []

    def compose(self) -> ComposeResult:
        lines = [f"[b]{len(self.changes)} later line(s) of this scene changed:[/b]", ""]
        for c in self.changes:
            lines.append(f"cue {self.cue_of[c.unit]}: [red]- {escape(c.before)}[/red]")
            lines.append(f"{' ' * (len(str(self.cue_of[c.unit])) + 5)}"
                         f"[green]+ {escape(c.after)}[/green]")
        for unit, text in self.kept:
            lines.append(f"cue {self.cue_of[unit]}: [b]kept (edited by you)[/b] {escape(text)}")
        with Vertical(id="dialog"):
            yield VerticalScroll(Static("\n".join(lines)), id="changes")
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


class ReviewApp(App[None]):
    CSS = """
    #cues { height: 1fr; }
    #detail { height: 11; border-top: solid $accent; padding: 0 1; }
    #edit { display: none; }
    #edit.editing { display: block; }
    ModalScreen { align: center middle; }
    #dialog { width: 90%; max-width: 100; height: auto; max-height: 90%;
              border: thick $accent; background: $surface; padding: 1 2; }
    #changes { height: auto; max-height: 20; }
    .buttons { height: auto; margin-top: 1; }
    .buttons Button { margin-right: 2; }
    """
    BINDINGS = [
        Binding("n", "next_flag", "next ⚑"), Binding("p", "previous_flag", "prev ⚑"),
        Binding("e", "edit", "edit"), Binding("a", "accept", "accept"),
        Binding("u", "undo", "undo"), Binding("c", "carry", "carry ты/вы"),
        Binding("s", "save", "save"),
        Binding("q", "quit_review", "quit"), Binding("question_mark", "help", "help"),
        *[Binding(str(i), f"pick({i})", show=False) for i in range(1, 10)],
    ]

    def __init__(self, session: ReviewSession, output: Path, title: str = "subctx review"):
        super().__init__()
        self.session, self.output = session, output
        self.title_text = title
        units = session.plan.units
        # in cue order; a sound annotation (an untimed unit after the sentences) before the
        # words of its cue
        self.rows = sorted(range(len(units)),
                           key=lambda u: (units[u].cue, units[u].start is not None, u))
        self.cue_of = {u: int(session.sub.cues[unit.cue].number or unit.cue + 1)
                       for u, unit in enumerate(session.plan.units)}
        self.status = ""

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield DataTable(id="cues", cursor_type="row", zebra_stripes=True)
        yield Input(id="edit", placeholder="Enter: save the new translation, Esc: cancel")
        yield VerticalScroll(Static(id="detail-text"), id="detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column(" ", key="flag", width=1)
        table.add_column("cue", key="cue", width=4)
        table.add_column("time", key="time", width=5)
        text_width = self._text_width()
        table.add_column("English", key="en", width=text_width)
        table.add_column("Russian", key="ru", width=text_width)
        for u in self.rows:
            unit = self.session.plan.units[u]
            table.add_row(self._flag(u), str(self.cue_of[u]), _time(unit.start), unit.text,
                          self.session.texts[u], key=str(u))
        self._refresh_title()
        table.focus()
        if self.rows:
            self._show(0)

    def _text_width(self) -> int:
        """English and Russian share what the flag, cue and time columns leave."""
        return max(12, (self.size.width - 1 - 4 - 5 - 2 * 5 - 2) // 2)

    def on_resize(self, event) -> None:
        table = self.query_one(DataTable)
        width = self._text_width()
        for key in ("en", "ru"):
            column = table.columns.get(key)  # type: ignore[call-overload]
            if column is not None:
                column.width = width
                column.auto_width = False
        table.refresh()

    def _flag(self, unit: int) -> Text:
        review = self.session.reviews.get(unit)
        if review and review.flagged:
            return Text("⚑", style="bold yellow")
        if unit in self.session.accepted:
            return Text("✓", style="green")
        return Text(" ")

    def _refresh_title(self) -> None:
        flagged = len(self.session.flagged_units())
        unsaved = " [unsaved]" if self.session.dirty else ""
        self.title = f"{self.title_text} — {flagged} choice{'s' if flagged != 1 else ''} to review"
        self.sub_title = f"{self.output.name}{unsaved}{'  ' + self.status if self.status else ''}"

    def _refresh_row(self, unit: int) -> None:
        table = self.query_one(DataTable)
        table.update_cell(str(unit), "flag", self._flag(unit))
        table.update_cell(str(unit), "ru", self.session.texts[unit])

    @property
    def current(self) -> int:
        return self.rows[self.query_one(DataTable).cursor_row] if self.rows else 0

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def _show(self, row: int) -> None:
        if not self.rows:
            return
        unit = self.rows[row]
        session = self.session
        review = session.analyze(unit)
        self._refresh_row(unit)
        english = Text(session.plan.units[unit].text)
        for start, end, _ in review.ambiguous:
            english.stylize("bold reverse yellow", start, end)
        out = Text()
        ctx = session.contexts[unit]
        if ctx:
            for c in ctx:
                out.append("context  ", style="dim")
                out.append(f"{session.plan.units[c].text}  →  {session.texts[c]}\n", style="dim")
        else:
            out.append("context  (none: first line of a scene)\n", style="dim")
        out.append("English  ", style="bold")
        out.append(english)
        kinds = sorted({k for _, _, k in review.ambiguous})
        if kinds:
            out.append(f"   [{', '.join(kinds)}]", style="yellow")
        out.append("\nRussian  ", style="bold")
        out.append(session.texts[unit] + "\n")
        for i, alt in enumerate(review.alternatives[:9], 1):
            chosen = alt.text == session.texts[unit]
            out.append(f"  {i} ", style="bold cyan")
            out.append(f"{alt.share:5.1%} ", style="cyan")
            out.append(alt.text, style="bold" if chosen else "")
            out.append(f"  ({alt.origin})\n" if not chosen else "  ◀ current\n", style="dim")
        top = review.alternatives[0].text if review.alternatives else session.texts[unit]
        if top != session.texts[unit]:
            why = ("your line" if unit in session.accepted else
                   "beam search picks by probability per word (with a length penalty), this "
                   "list ranks whole lines")
            out.append(f"◀ current is not the most probable line: {why}\n", style="dim")
        if review.hint:
            words = ", ".join(f"{w} ({s:.0%})" for w, s in review.hint)
            out.append(f"attended in context: {words}\n", style="magenta")
        self.query_one("#detail-text", Static).update(out)

    # -- actions -----------------------------------------------------------------------------
    def _move_to(self, unit: int) -> None:
        self.query_one(DataTable).move_cursor(row=self.rows.index(unit))

    def action_next_flag(self) -> None:
        later = [u for u in self.session.flagged_units() if u > self.current]
        if later:
            self._move_to(later[0])
        else:
            self.notify("no more flagged choices below", timeout=2)

    def action_previous_flag(self) -> None:
        earlier = [u for u in self.session.flagged_units() if u < self.current]
        if earlier:
            self._move_to(earlier[-1])
        else:
            self.notify("no flagged choices above", timeout=2)

    def action_pick(self, number: int) -> None:
        unit = self.current
        review = self.session.analyze(unit)
        if number > len(review.alternatives):
            self.notify(f"no alternative {number}", timeout=2)
            return
        self._apply(unit, review.alternatives[number - 1].text, f"pick {number}")

    def action_carry(self) -> None:
        changes = self.session.carry_choice(self.current)
        kept = [(u, self.session.texts[u]) for u in self.session.kept]
        if not changes:
            self.notify("no later line of this scene addresses someone the other way"
                        + (f" ({len(kept)} of yours kept)" if kept else ""), timeout=3)
            return
        self._review_changes(changes, kept)

    def _review_changes(self, changes, kept) -> None:
        """Show the changed later lines; keep them or revert them."""
        for change in changes:
            self._refresh_row(change.unit)
        self._after_change()

        def decide(keep: bool | None) -> None:
            if not keep:
                self.session.revert(changes)
                for change in changes:
                    self._refresh_row(change.unit)
                self.notify(f"reverted {len(changes)} later line(s)", timeout=2)
            self._after_change()

        self.push_screen(ChangesScreen(changes, self.cue_of, kept), decide)

    def _apply(self, unit: int, text: str, action: str) -> None:
        follow_ups = self.session.set_text(unit, text, action)
        self._refresh_row(unit)
        kept = [(u, self.session.texts[u]) for u in self.session.kept]
        if not follow_ups and kept:
            self.notify(f"{len(kept)} later line(s) edited by you were kept as they are",
                        timeout=3)
        if follow_ups:
            self._review_changes(follow_ups, kept)
        else:
            self._after_change()

    def _after_change(self) -> None:
        self._refresh_title()
        self._show(self.query_one(DataTable).cursor_row)

    def action_edit(self) -> None:
        editor = self.query_one("#edit", Input)
        editor.value = self.session.texts[self.current]
        editor.add_class("editing")
        editor.focus()

        def select_all() -> None:  # typing replaces the line; arrows move inside it
            editor.selection = Selection(0, len(editor.value))

        self.call_after_refresh(select_all)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        editor = self.query_one("#edit", Input)
        editor.remove_class("editing")
        self.query_one(DataTable).focus()
        text = event.value.strip()
        if text and text != self.session.texts[self.current]:
            self._apply(self.current, text, "edit")

    def on_key(self, event) -> None:
        editor = self.query_one("#edit", Input)
        if event.key == "escape" and editor.has_class("editing"):
            editor.remove_class("editing")
            self.query_one(DataTable).focus()
            event.stop()

    def action_accept(self) -> None:
        self.session.accept(self.current)
        self._refresh_row(self.current)
        self._refresh_title()
        self.action_next_flag() if self.session.flagged_units() else None

    def action_undo(self) -> None:
        changes = self.session.undo()
        if not changes:
            self.notify("nothing to undo", timeout=2)
            return
        for change in changes:
            self._refresh_row(change.unit)
        self._after_change()

    def action_save(self) -> None:
        log = self.session.save(self.output)
        self.status = "saved"
        self._refresh_title()
        self.notify(f"saved {self.output.name} and {log.name}", timeout=3)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_quit_review(self) -> None:
        if not self.session.dirty:
            self.exit()
            return

        def decide(choice: str | None) -> None:
            if choice == "save":
                self.session.save(self.output)
                self.exit()
            elif choice == "quit":
                self.exit()

        self.push_screen(QuitScreen(), decide)
