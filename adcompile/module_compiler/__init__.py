"""Functions of Modules compiled as functions of their arrays."""
