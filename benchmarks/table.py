"""The markdown results table: one row per (workload, implementation), written and printed."""
from dataclasses import dataclass
from typing import Optional

import numpy as np

COLUMNS = ("workload", "implementation", "forward ms", "gradient ms", "gradient / forward",
           "first call s", "gradient / adcompile's")


@dataclass
class Row:
    workload: str
    implementation: str
    forward_ms: float
    gradient_ms: float
    adcompile_gradient_ms: float
    first_call: Optional[str] = None  # already formatted: "12.3 (warm cache 0.41)"


def format_number(value):
    """About three significant digits, no exponent: 1234 -> 1234, 12.34 -> 12.3, 0.0001234 -> 0.000123."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return np.format_float_positional(value, precision=3, unique=False, fractional=False, trim="-")


def format_first_call(seconds, warm_cache_seconds=None):
    if seconds is None:
        return None
    text = format_number(seconds)
    if warm_cache_seconds is not None:
        text += f" (warm cache {format_number(warm_cache_seconds)})"
    return text


def markdown_table(rows):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = (row.workload, row.implementation, format_number(row.forward_ms),
                 format_number(row.gradient_ms), format_number(row.gradient_ms / row.forward_ms) + "x",
                 row.first_call or "–", format_number(row.gradient_ms / row.adcompile_gradient_ms) + "x")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_results(path, header, rows, notes):
    """Write header paragraphs, the table and the per-workload notes to ``path``."""
    text = "\n\n".join([*header, markdown_table(rows), "\n".join(f"- {note}" for note in notes)]) + "\n"
    with open(path, "w") as out:
        out.write(text)
    return text
