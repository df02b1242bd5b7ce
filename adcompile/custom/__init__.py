"""Custom differentiable Functions with ctx / forward / backward, as in PyTorch."""
