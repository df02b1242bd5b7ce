"""The parts of the translator (``frontend/parse.py``'s ``Translator``): statements and expressions
(its mixins), assignment targets, the tables they share, calls of Python functions inlined, loops
over static sequences unrolled, and the rewriting of ``break``/``continue``/early ``return`` into
flags that runs before translation."""
