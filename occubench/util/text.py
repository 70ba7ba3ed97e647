"""Outside text made safe to show: in a terminal, and in rich's markup.

World folders, workers, models and results files hand us strings that may carry escape sequences (clear the
screen, write the clipboard through OSC 52, retitle the window), bidirectional overrides that reorder what is shown,
or rich markup (``[link=...]``, a stray ``[/bold]`` that raises). Every table cell and message that can hold such a
string goes through :func:`terminal` (plain text) or :func:`markup` (text inside a rich markup string).
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, the C1 controls, and the bidirectional and invisible format characters
# that can make one text look like another (Trojan Source).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: object, *, newlines: bool = True) -> str:
    """``text`` with every control and format character shown as an escape (``\\x1b``), never acted on; with
    ``newlines`` False, a line break is shown as ``\\n`` too (a table cell, a one-line message)."""
    shown = _UNSAFE.sub(_visible, str(text))
    return shown if newlines else shown.replace("\n", "\\n")


def markup(text: object, *, newlines: bool = True) -> str:
    """:func:`terminal`, with rich markup escaped: for outside text inside a string rich renders as markup."""
    from rich.markup import escape  # here, not above: sandbox workers and log lines need terminal() alone

    return escape(terminal(text, newlines=newlines))
