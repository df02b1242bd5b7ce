"""Differentiating transforms, IR -> IR."""
