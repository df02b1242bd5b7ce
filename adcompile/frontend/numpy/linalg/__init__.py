"""The linear algebra handlers: matrix products and decompositions (``matrix_functions.py``),
solves and determinants (``solve.py``), einsum/tensordot/kron (``einsum.py``), and stacks of
matrices as a loop over the 2-d primitive (``stacks.py``)."""
