"""Frontend: Python source -> typed IR."""
