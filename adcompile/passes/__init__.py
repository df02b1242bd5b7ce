"""Analyses and simplifications over the IR, one per file."""
