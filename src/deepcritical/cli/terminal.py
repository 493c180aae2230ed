"""Outside text on the terminal. Rich's ``escape`` stops markup, not escape sequences: ESC, CSI and the
other control characters are removed first, and line breaks folded, so a title, a query or an error
body can neither style nor rewrite the screen."""

from __future__ import annotations

from rich.markup import escape

from deepcritical.text import one_line


def shown(text: str) -> str:
    """``text`` ready for a line of Rich markup: one line, no control characters, markup escaped."""
    return escape(one_line(text))
