"""The table of call handlers: ``"np.sum"``, ``"method.reshape"``, ``"builtin.len"`` -> the function
that translates such a call (``calls.handler`` fills it from the family modules of
``frontend/numpy/``). Apart from ``calls.py`` so that name resolution (``resolve.py``), which
``calls.py`` imports, can ask which numpy and math functions have a handler.
"""
HANDLERS = {}
