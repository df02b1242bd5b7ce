"""Backends: turning generated source into callables."""
