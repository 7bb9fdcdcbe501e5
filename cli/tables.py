"""Plain-text tables and numbers for the CLI: aligned columns, fixed precision.

Every table the CLI prints goes through :func:`table`, so long scenario names
widen their column instead of shifting the rest, and every rate goes through
:func:`pct` (one decimal, ``n/a`` when nothing was decided) so a run's output
never shows ``0.5454545454545454``. Standard library only: the CLI starts fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Cells wider than this are cut with an ellipsis (except the last column).
MAX_CELL = 100


def pct(rate: Any, digits: int = 1) -> str:
    """``0.5454`` -> ``54.5%``; anything not a number -> ``n/a``."""
    if not isinstance(rate, int | float) or isinstance(rate, bool):
        return "n/a"
    return f"{rate * 100:.{digits}f}%"


def delta_pp(change: Any, digits: int = 1) -> str:
    """A change of a rate in percentage points with its sign: ``+9.1 pp``."""
    if not isinstance(change, int | float) or isinstance(change, bool):
        return ""
    return f"{change * 100:+.{digits}f} pp"


def secs(value: Any, digits: int = 2) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "n/a"
    return f"{value:.{digits}f} s"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    indent: str = "  ",
    right: Sequence[int] = (),
) -> str:
    """Rows under a header, every column as wide as its widest cell.

    ``right`` lists the column indexes to right-align (numbers). The last
    column is never padded or cut, so a long reason just runs on.
    """
    cells = [[str(c) for c in headers]]
    last = len(headers) - 1
    for row in rows:
        cells.append([str(c) if i == last else _cut(str(c), MAX_CELL) for i, c in enumerate(row)])
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        parts = []
        for i, c in enumerate(r):
            if i == last:
                parts.append(c)
            elif i in right:
                parts.append(c.rjust(widths[i]))
            else:
                parts.append(c.ljust(widths[i]))
        lines.append((indent + "  ".join(parts)).rstrip())
    return "\n".join(lines)


def dict_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """Rows given as dicts, in ``columns`` order (the session tables of run/runs)."""
    if not rows:
        return "(no sessions)"
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)


COLUMNS = [
    "scenario",
    "attempt",
    "status",
    "stop_reason",
    "clean_exit",
    "user_turns",
    "agent_turns",
    "duration_s",
    "retry_reason",
]
