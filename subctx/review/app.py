"""The review app: keys call the `ReviewSession`; the widgets and the header show it.

Screens are in screens.py, the table and detail pane in widgets.py, what they show in
render.py, the layout in review.tcss.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.widgets import DataTable, Footer, Header, Input
from textual.widgets.input import Selection

from subctx.controls import FEMININE, MASCULINE, SPEAKER_GENDER, can_show
from subctx.review import render
from subctx.review.choices import politeness
from subctx.review.screens import ChangesScreen, HelpScreen, QuitScreen
from subctx.review.session import Change, ReviewSession
from subctx.review.widgets import CueDetail, CueTable


class ReviewApp(App[None]):
    """Review one film's `ReviewSession`, saving to `output` (the .srt; its log beside it)."""

    CSS_PATH = "review.tcss"
    BINDINGS = [
        Binding("n", "next_flag", "next ⚑"), Binding("p", "previous_flag", "prev ⚑"),
        Binding("e", "edit", "edit"), Binding("a", "accept", "accept"),
        Binding("u", "undo", "undo"), Binding("c", "carry", "carry ты/вы"),
        Binding("g", "speaker", "speaker ♂/♀"),
        Binding("s", "save", "save"),
        Binding("q", "quit_review", "quit"), Binding("question_mark", "help", "help"),
        *[Binding(str(i), f"pick({i})", show=False) for i in range(1, 10)],
    ]

    # what the header shows; flagged and unsaved follow the session (see _sync)
    flagged: var[int] = var(0)
    unsaved: var[bool] = var(False)
    status: var[str] = var("")

    def __init__(self, session: ReviewSession, output: Path, title: str = "subctx review"):
        super().__init__()
        self.session, self.output = session, output
        self.title_text = title

    # -- layout and shown state ----------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield CueTable(self.session, id="cues")
        yield Input(id="edit", placeholder="Enter: save the new translation, Esc: cancel")
        yield VerticalScroll(CueDetail(id="detail-text"), id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self._sync()
        self.table.focus()
        if self.table.units:
            self._show(0)

    @property
    def table(self) -> CueTable:
        return self.query_one(CueTable)

    @property
    def current(self) -> int:
        return self.table.current_unit

    def watch_flagged(self, flagged: int) -> None:
        self.title = render.title(self.title_text, flagged)

    def watch_unsaved(self, unsaved: bool) -> None:
        self.sub_title = render.sub_title(self.output.name, unsaved, self.status)

    def watch_status(self, status: str) -> None:
        self.sub_title = render.sub_title(self.output.name, self.unsaved, status)

    def _sync(self) -> None:
        """Take the header's state from the session; a change makes the last status (such as
        'saved') stale."""
        self.flagged = len(self.session.flagged_units())
        if self.session.dirty:
            self.status = ""
        self.unsaved = self.session.dirty

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """A notice, shown verbatim by default: it may hold film text and file names."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_resize(self) -> None:
        self.table.fit_width(self.size.width)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def _show(self, row: int) -> None:
        """Analyse the line at a row and show it (its flag may change on a first analysis)."""
        if not self.table.units:
            return
        unit = self.table.units[row]
        self.session.analyze(unit)
        self.table.refresh_unit(unit)
        self.query_one(CueDetail).show(self.session, unit)

    def _changed(self, changes: list[Change]) -> None:
        """After a session change: its rows, the header, the current line's detail."""
        for change in changes:
            self.table.refresh_unit(change.unit)
        self._sync()
        self._show(self.table.cursor_row)

    # -- actions -------------------------------------------------------------------------------
    def action_next_flag(self) -> None:
        later = [u for u in self.session.flagged_units() if u > self.current]
        if later:
            self.table.move_to(later[0])
        else:
            self.notify("no more flagged choices below", timeout=2)

    def action_previous_flag(self) -> None:
        earlier = [u for u in self.session.flagged_units() if u < self.current]
        if earlier:
            self.table.move_to(earlier[-1])
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
        if politeness(self.session.texts[self.current]) is None:
            self.notify("this line has no ты/вы to carry (none, or both)", timeout=3)
            return
        changes = self.session.carry_choice(self.current)
        kept = self._kept()
        if not changes:
            self.notify("no later line of this scene addresses someone the other way"
                        + (f" ({len(kept)} of yours kept)" if kept else ""), timeout=3)
            return
        self._review_changes(changes, kept)

    def action_speaker(self) -> None:
        """Translate the line again as said by a woman, or (pressed again) by a man."""
        unit = self.current
        if not can_show(SPEAKER_GENDER, self.session.plan.units[unit].text):
            self.notify("this line's English has no I or me: nothing in it shows the "
                        "speaker's gender", timeout=3)
            return
        value = MASCULINE if self.session.speakers.get(unit) == FEMININE else FEMININE
        before = self.session.texts[unit]
        follow_ups = self.session.set_speaker(unit, value)
        if follow_ups is None:
            self.notify("this model was not trained with speaker-gender tags", timeout=3)
            return
        self.notify(f"said by a {'woman' if value == FEMININE else 'man'}"
                    + ("" if self.session.texts[unit] != before else ": no change"), timeout=2)
        self._after_change(unit, follow_ups)

    def _kept(self) -> list[tuple[int, str, str]]:
        """The person's lines the last change left alone: unit, text, how it was decided."""
        return [(u, self.session.texts[u], render.decided(self.session, u))
                for u in self.session.kept]

    def _review_changes(self, changes: list[Change], kept: list[tuple[int, str, str]]) -> None:
        """Show the changed later lines; keep them or revert them."""
        self._changed(changes)

        def decide(keep: bool | None) -> None:
            if not keep:
                self.session.revert(changes)
                self.notify(f"reverted {len(changes)} later line(s)", timeout=2)
            self._changed([] if keep else changes)

        self.push_screen(ChangesScreen(render.changes_text(changes, self.table.cue_of, kept)),
                         decide)

    def _apply(self, unit: int, text: str, action: str) -> None:
        self._after_change(unit, self.session.set_text(unit, text, action))

    def _after_change(self, unit: int, follow_ups: list[Change]) -> None:
        """A line changed: show it, then the later lines that followed, to keep or revert."""
        self.table.refresh_unit(unit)
        kept = self._kept()
        if not follow_ups and kept:
            self.notify(f"{len(kept)} later line(s) of yours were kept as they are", timeout=3)
        if follow_ups:
            self._review_changes(follow_ups, kept)
        else:
            self._changed([])

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
        self.table.focus()
        text = event.value.strip()
        if text and text != self.session.texts[self.current]:
            self._apply(self.current, text, "edit")

    def on_key(self, event) -> None:
        editor = self.query_one("#edit", Input)
        if event.key == "escape" and editor.has_class("editing"):
            editor.remove_class("editing")
            self.table.focus()
            event.stop()

    def action_accept(self) -> None:
        self.session.accept(self.current)
        self.table.refresh_unit(self.current)
        self._sync()
        self.action_next_flag() if self.session.flagged_units() else None

    def action_undo(self) -> None:
        changes = self.session.undo()
        if not changes:
            self.notify("nothing to undo", timeout=2)
            return
        self._changed(changes)

    def action_save(self) -> None:
        self._save()

    def _save(self) -> bool:
        """Save the .srt and its review log; where that fails, say why in one line and keep
        everything as it was (unsaved). Whether it saved."""
        try:
            log = self.session.save(self.output)
        except OSError as problem:
            self.session.dirty = True  # the files may hold part of it, or nothing
            self._sync()
            self.status = "save failed"
            self.notify(render.save_error(self.output, problem), severity="error", timeout=8)
            return False
        self._sync()
        self.status = "saved"
        self.notify(f"saved {self.output.name} and {log.name}", timeout=3)
        return True

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """ctrl+q and the command palette's Quit: the same question as q."""
        self.action_quit_review()

    def action_quit_review(self) -> None:
        """Quit, asking first where there are unsaved changes; a failed save does not quit."""
        if not self.session.dirty:
            self.exit()
            return
        if isinstance(self.screen, QuitScreen):
            return

        def decide(choice: str | None) -> None:
            if choice == "quit" or (choice == "save" and self._save()):
                self.exit()

        self.push_screen(QuitScreen(), decide)
