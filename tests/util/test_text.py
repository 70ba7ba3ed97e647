"""Outside text shown in a terminal or through rich: no byte that acts on the terminal, no markup that renders."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from occubench.util.text import markup, terminal

HOSTILE = ["\x1b[2J\x1b[H", "\x1b]52;c;ZXZpbA==\x07", "\x1b]0;pwned\x07", "\x9b31m", "a\u202eb", "\x00\x7f",
           "[/bold]", "[link=https://evil.example]click[/link]", "\\[bold]x", "\ud800"]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_prints_through_rich_without_a_control_byte_or_markup(text: str) -> None:
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system=None, width=200).print(markup(text, newlines=False))
    printed = out.getvalue()
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) <= 0x9f or c == "\u202e" for c in printed)
    assert "link" not in text or "[link=" in printed  # shown as written, not rendered as a hyperlink


def test_ordinary_text_is_unchanged_and_line_breaks_are_kept_only_where_asked() -> None:
    assert terminal("Triage: 3 patients\tok\nnext") == "Triage: 3 patients\tok\nnext"
    assert terminal("a\nb", newlines=False) == "a\\nb"
    assert markup("[x]") == "\\[x]"
