"""Tables as plain rows of text: built once, rendered to a terminal, Markdown, CSV, JSON or HTML."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import rich.table


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    #: The first ``text_columns`` columns are text; the rest are numbers (right-aligned).
    text_columns: int = 1
    note: str = ""

    def to_rich(self) -> rich.table.Table:
        """The table for a rich console. Cells, title and note are plain text, never markup: they carry names and
        strings from world folders and results files (control characters and line breaks are shown escaped)."""
        from rich.table import Table as RichTable
        from rich.text import Text

        from occubench.util.text import terminal

        def text(value: str, style: str = "") -> Text:
            return Text(terminal(value, newlines=False), style=style)

        table = RichTable(title=text(self.title, "table.title"), caption=text(self.note, "table.caption")
                          if self.note else None)
        for i, column in enumerate(self.columns):
            # Nothing is cut with "…" in a narrow terminal: the first column, which names the row (an environment,
            # a task), keeps its names on one line, and a word too long for its column folds onto the next.
            table.add_column(column, justify="left" if i < self.text_columns else "right", no_wrap=i == 0,
                             overflow="fold")
        for row in self.rows:
            table.add_row(*map(text, row))
        return table


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"
