"""Context budgets: a prompt cut to fit a model's context window, leaving room for its reply and one re-ask.

Tokens are counted as characters / 3, on the low side for any tokenizer, so a prompt cut to the budget fits.
"""

from __future__ import annotations

from typing import Any

CHARS_PER_TOKEN = 3
#: Room kept for a re-ask after an unreadable reply: the reply's end (:data:`REASK_CHARS`) and the correction.
REASK_TOKENS = 1024
REASK_CHARS = 2000


def prompt_chars(context: int | None, params: dict[str, Any]) -> int | None:
    """How many characters a prompt may have in a ``context``-token window (None: no limit), leaving room for the
    reply (``max_tokens`` of ``params``) and one re-ask."""
    if context is None:
        return None
    reply = params.get("max_tokens") or params.get("max_completion_tokens") or 0
    return max(0, (context - (reply if isinstance(reply, int) else 0) - REASK_TOKENS) * CHARS_PER_TOKEN)


def cut_middle(text: str, cut: int, why: str) -> str:
    """``text`` without ``cut`` characters from its middle, a visible marker saying so in their place."""
    keep = len(text) - cut
    head = keep // 2
    return (f"{text[:head]}\n[… {cut:,} characters left out here to fit {why} …]\n"
            f"{text[len(text) - (keep - head):]}")


def reask_reply(content: str | None) -> str:
    """An unreadable reply as it goes back in a re-ask: its end, where the required block belongs; its whole
    length would grow the prompt past the window again."""
    text = content or ""
    return text if len(text) <= REASK_CHARS else f"[…]{text[-REASK_CHARS:]}"
