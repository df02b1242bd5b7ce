"""Derivative rules, one table per mode, keyed by primitive name."""
