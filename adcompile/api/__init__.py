"""Compiled and derived functions: per-signature IR, transformed, generated, loaded and run."""
