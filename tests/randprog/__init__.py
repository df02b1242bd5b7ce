"""Random-program differential testing for adcompile.

``generator`` writes random, well-typed, numerically benign numpy programs in adcompile's
supported language; ``oracles`` checks one program against plain Python, forward mode,
finite differences and the other backend; ``shrink`` reduces a failing program to a small
reproduction; ``runner`` runs batches and summarises them.
"""
