"""Tables as plain rows of text: built once, rendered to a terminal, Markdown, CSV, JSON or HTML; charts as plain
series of numbers, drawn by the report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

#: What a rich table's box and padding add to its cells' widths: three characters a column, one more at the edge.
_BORDERS = 3


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    #: The first ``text_columns`` columns are text; the rest are numbers (right-aligned).
    text_columns: int = 1
    note: str = ""
    #: Columns a table too wide for the terminal leaves out, the first named first; the note then says which.
    optional: tuple[str, ...] = ()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The table laid out at the width it is printed at: where its columns fit side by side, every row is one
        line; else cells wrap at spaces, the widest first, never inside a word. Optional columns are left out
        until the longest words fit (a word is split only where even they do not). The first column names the row
        (a task, a run) and is never wrapped. Cells, title and note are plain text, never markup: they carry
        names and strings from world folders and results files (control characters and line breaks are shown
        escaped)."""
        from rich.cells import cell_len
        from rich.table import Table as RichTable
        from rich.text import Text

        from occubench.util.text import terminal

        cells = [[terminal(value, newlines=False) for value in row] for row in [self.columns, *self.rows]]
        natural = [max(cell_len(row[i]) for row in cells) for i in range(len(self.columns))]
        least = [natural[i] if i == 0 else max(cell_len(word) for row in cells for word in row[i].split(" "))
                 for i in range(len(self.columns))]
        room = options.max_width - 1
        shown = list(range(len(self.columns)))
        left_out = []
        for name in (name for name in self.optional if name in self.columns):  # a priced table has a cost column
            if sum(least[i] + _BORDERS for i in shown) <= room:
                break
            shown.remove(self.columns.index(name))
            left_out.append(name)
        widths = _fitted([natural[i] for i in shown], [least[i] for i in shown], room - _BORDERS * len(shown))
        note = self.note
        if left_out:
            note += (" " if note else "") + (f"Left out at {options.max_width} columns: {', '.join(left_out)} (all "
                                             f"columns fit in {sum(natural) + _BORDERS * len(natural) + 1}).")

        def annotation(text: str, style: str) -> Text:  # wrapped at the table's width, even where lines are not
            return Text(terminal(text, newlines=False), style, no_wrap=False, overflow="fold")  # (see util.console)

        table = RichTable(title=annotation(self.title, "table.title"),
                          caption=annotation(note, "table.caption") if note else None)
        for j, i in enumerate(shown):
            table.add_column(Text(cells[0][i]), justify="left" if i < self.text_columns else "right",
                             width=widths[j] if widths else None, no_wrap=i == 0, overflow="fold")
        for row in cells[1:]:
            table.add_row(*(Text(row[i]) for i in shown))
        yield table


@dataclass
class Chart:
    """Grouped bars: for each series (by label), a value per group (None: no bar), on a 0-1 axis."""

    title: str
    groups: list[str]
    series: dict[str, list[float | None]]
    legend_title: str
    y_label: str


def _fitted(natural: list[int], least: list[int], room: int) -> list[int] | None:
    """Column widths that fit ``room``: the widest column that can narrow, narrowed first, none below its ``least``
    (its longest word); None when even those do not fit, for rich to fold words."""
    widths = list(natural)
    while sum(widths) > room:
        narrowable = [i for i, width in enumerate(widths) if width > least[i]]
        if not narrowable:
            return None
        widths[max(narrowable, key=lambda i: widths[i])] -= 1
    return widths


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"
