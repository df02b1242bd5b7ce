"""The numpy (and scipy.special) handlers of the frontend: one family of functions per module."""
