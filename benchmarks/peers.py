"""Discovery of the optional peers (JAX, PyTorch, HIPS autograd) the suite compares against.

A peer that is not installed is skipped with a printed message; one that is installed is
configured for a fair comparison: JAX with float64 (x64) enabled, torch on one thread.
"""
from dataclasses import dataclass, field
from importlib.metadata import version


@dataclass
class Peers:
    """The importable peers: each attribute is the module, or None when it is missing."""
    jax: object = None
    torch: object = None
    autograd: object = None
    versions: dict = field(default_factory=dict)


def _import_jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _import_torch():
    import torch
    torch.set_num_threads(1)
    return torch


def _import_autograd():
    import autograd
    import autograd.numpy  # noqa: F401  (the numpy wrapper the autograd versions use)
    return autograd


_IMPORTERS = {"jax": _import_jax, "torch": _import_torch, "autograd": _import_autograd}


def discover(wanted=tuple(_IMPORTERS), quiet=False):
    """Import the wanted peers; print one line for each that is missing."""
    peers = Peers()
    for name in wanted:
        try:
            module = _IMPORTERS[name]()
        except ImportError as error:
            if not quiet:
                print(f'skipping {name}: not installed ({error}); `pip install -e ".[bench]"` adds it')
            continue
        setattr(peers, name, module)
        peers.versions[name] = version(name)
    return peers
