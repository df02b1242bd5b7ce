"""The markdown results table: one row per (workload, implementation), written and printed."""
from dataclasses import dataclass
from typing import Optional

import numpy as np

COLUMNS = ("workload", "implementation", "forward ms", "gradient ms", "gradient / forward",
           "first call s", "gradient / adcompile's")


@dataclass
class Row:
    workload: str
    key: str  # "adcompile", "numpy", "numba", "jax", "torch", "autograd"
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


SUMMARY_KEYS = (("numba", "numba by hand"), ("numpy", "numpy by hand"), ("jax", "JAX"),
                ("torch", "PyTorch"), ("autograd", "autograd"))


def summary_table(rows):
    """Per workload: adcompile's gradient / forward, and adcompile's gradient time divided by
    each other implementation's (above 1: adcompile is slower), and adcompile's first call."""
    columns = ["workload", "adcompile gradient / forward",
               *(f"adcompile / {label}" for _, label in SUMMARY_KEYS), "adcompile first call s"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for workload in dict.fromkeys(row.workload for row in rows):
        by_key = {row.key: row for row in rows if row.workload == workload}
        adcompile = by_key["adcompile"]
        cells = [workload, format_number(adcompile.gradient_ms / adcompile.forward_ms) + "x"]
        cells += [format_number(adcompile.gradient_ms / by_key[key].gradient_ms) + "x" if key in by_key else "–"
                  for key, _ in SUMMARY_KEYS]
        lines.append("| " + " | ".join(cells + [adcompile.first_call or "–"]) + " |")
    return "\n".join(lines)


def write_results(path, header, rows, notes):
    """Write header paragraphs, the summary, the full table and the per-workload notes."""
    sections = [*header, "## Summary: adcompile's ratios", summary_table(rows), "## All implementations",
                markdown_table(rows), "\n".join(f"- {note}" for note in notes)]
    text = "\n\n".join(sections) + "\n"
    with open(path, "w") as out:
        out.write(text)
    return text
