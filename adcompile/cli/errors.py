"""The command line's own error: a usage mistake, reported in one line with exit status 2."""


class UsageError(Exception):
    """The command line was wrong (unknown file or function, malformed ``--args``)."""
