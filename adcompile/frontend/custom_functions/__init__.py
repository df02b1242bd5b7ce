"""Custom Functions in compiled code: ``MyFn.apply(...)`` translated with its forward inlined
(``call.py``) and its user-written ``backward`` translated as the call's reverse rule
(``backward.py``)."""
