"""adcompile's version: shown by ``adcompile --version`` and part of every compile-cache key."""
__version__ = "0.1.0"
