"""Numerical checks of derivatives against finite differences: gradcheck, gradgradcheck."""
