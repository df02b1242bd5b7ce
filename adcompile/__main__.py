"""``python -m adcompile``: the command line (see :mod:`adcompile.cli`)."""
from .cli import main

raise SystemExit(main())
