"""The review screen's two views of a `ReviewSession`: the cue table and the detail pane."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from subctx.review import render
from subctx.review.session import ReviewSession

CUE_WIDTH = 4  # the cue column's width, wider (up to MAX_CUE_WIDTH) for longer WebVTT ids
MAX_CUE_WIDTH = 10


def text_width(total: int, cue_width: int = CUE_WIDTH) -> int:
    """English and Russian share what the flag, cue and time columns (and padding) leave."""
    return max(12, (total - 1 - cue_width - 5 - 2 * 5 - 2) // 2)


def cue_width(labels: list[str]) -> int:
    """The cue column's width: its longest label, between CUE_WIDTH and MAX_CUE_WIDTH."""
    return min(MAX_CUE_WIDTH, max([CUE_WIDTH, *map(len, labels)]))


class CueTable(DataTable):
    """One row per unit in cue order (flag, cue, time, English, Russian), keyed by unit."""

    def __init__(self, session: ReviewSession, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.session = session
        self.units = render.unit_rows(session)  # row -> unit
        self.cue_of = render.cue_numbers(session)
        self.cue_width = cue_width(list(self.cue_of.values()))

    def on_mount(self) -> None:
        width = text_width(self.app.size.width, self.cue_width)
        self.add_column(" ", key="flag", width=1)
        self.add_column("cue", key="cue", width=self.cue_width)
        self.add_column("time", key="time", width=5)
        self.add_column("English", key="en", width=width)
        self.add_column("Russian", key="ru", width=width)
        for u in self.units:
            self.add_row(*render.row_cells(self.session, u, self.cue_of[u]), key=str(u))

    def fit_width(self, total: int) -> None:
        """Re-divide the text columns for a new screen width."""
        width = text_width(total, self.cue_width)
        for key in ("en", "ru"):
            column = self.columns.get(key)  # type: ignore[call-overload]
            if column is not None:
                column.width = width
                column.auto_width = False
        self.refresh()

    def refresh_unit(self, unit: int) -> None:
        """Show a unit's current flag and Russian (DataTable.refresh_row is by row index)."""
        self.update_cell(str(unit), "flag", render.flag_cell(self.session, unit))
        self.update_cell(str(unit), "ru", render.russian_cell(self.session, unit))

    @property
    def current_unit(self) -> int:
        return self.units[self.cursor_row] if self.units else 0

    def move_to(self, unit: int) -> None:
        self.move_cursor(row=self.units.index(unit))


class CueDetail(Static):
    """The selected line: context, English, alternatives and hint (render.detail_text)."""

    def show(self, session: ReviewSession, unit: int) -> None:
        self.update(render.detail_text(session, unit))
