"""``adcompile.nn.functional``: layers and losses as functions of arrays.

Each is ordinary numpy code: called from Python it runs as numpy; called from compiled code
(a ``forward``, a loss function) it is inlined and differentiated like the caller's own
code. Arguments such as ``dim``, ``reduction`` or ``stride`` are compile-time constants
there. One module per family: ``basic.py`` (linear, activations, softmax, layer_norm,
embedding, dropout), ``activation.py`` (more activations), ``conv.py`` (convolution and
pooling), ``normalization.py`` (batch and group normalisation), ``losses.py``.
"""
from .basic import (dropout, embedding, erf, flatten, gelu, layer_norm, linear, log_softmax, one_hot,  # noqa: F401
                    relu, sigmoid, softmax, tanh, uniform_noise)
from .activation import elu, hardtanh, leaky_relu, mish, silu, softplus  # noqa: F401
from .conv import avg_pool1d, avg_pool2d, conv1d, conv2d, max_pool1d, max_pool2d  # noqa: F401
from .normalization import batch_norm, group_norm  # noqa: F401
from .losses import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,  # noqa: F401
                     l1_loss, mse_loss, nll_loss)
