"""Code generation: IR -> readable Python source."""
