"""Convolution and pooling over (N, C, L) and (N, C, H, W) arrays, as direct loops over the
kernel offsets: each offset contributes one strided slice of the input times one kernel tap
(a matrix product over channels), so the loops are short and the work is array code.

Sizes, strides and paddings take PyTorch's forms: an int (every axis) or a tuple with one
entry per spatial axis; a convolution's ``padding`` may also be ``"valid"`` (none) or
``"same"`` (stride 1; an odd total splits with the extra zero after, as PyTorch). In compiled
code they are compile-time values (``_ntuple`` runs while the function is compiled).
"""
import numpy as np

from ...frontend.static_values import static_function


@static_function
def _ntuple(value, n, what="value"):
    """``value`` (an int, or a tuple/list of ``n`` ints) as a tuple of ``n`` ints."""
    if isinstance(value, (tuple, list)):
        if len(value) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ValueError(f"{what} must be an int or a tuple of {n} ints, not {tuple(value)!r}")
        return tuple(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    raise ValueError(f"{what} must be an int or a tuple of {n} ints, not {value!r}")


@static_function
def _conv_padding(padding, stride, n):
    """A convolution's padding as ``n`` ints, or -1 per axis for ``"same"`` (sized from the
    kernel at run time)."""
    if padding == "valid":
        return (0,) * n
    if padding == "same":
        if _ntuple(stride, n, "stride") != (1,) * n:
            raise ValueError("padding='same' is not supported for strided convolutions")
        return (-1,) * n
    if isinstance(padding, str):
        raise ValueError(f"padding must be an int, a tuple of ints, 'valid' or 'same', not {padding!r}")
    pads = _ntuple(padding, n, "padding")
    if any(p < 0 for p in pads):
        raise ValueError(f"padding must be >= 0, not {pads}")
    return pads


@static_function
def _pool_stride(stride, kernel_size, n):
    """A pool's stride: None (or 0) means the kernel size, as PyTorch's default."""
    if stride is None or stride == 0:
        return _ntuple(kernel_size, n, "kernel_size")
    return _ntuple(stride, n, "stride")


@static_function
def _pool_padding(padding, kernel_size, n):
    pads = _ntuple(padding, n, "padding")
    kernel = _ntuple(kernel_size, n, "kernel_size")
    if any(p < 0 or 2 * p > k for p, k in zip(pads, kernel)):
        raise ValueError(f"pad should be at most half of effective kernel size, but got pad={pads} and "
                         f"kernel_size={kernel}")
    return pads


def _before_after(pad, k):
    """(zeros before, zeros after) of one axis; ``pad`` -1 is 'same' for a kernel of ``k``."""
    if pad < 0:
        before = (k - 1) // 2
        return before, k - 1 - before
    return pad, pad


def _pad1d(input, before, after, fill):
    n, c, length = input.shape
    padded = np.zeros((n, c, length + before + after)) + fill
    padded[:, :, before:before + length] = input
    return padded


def _pad2d(input, top, bottom, left, right, fill):
    n, c, h, w = input.shape
    padded = np.zeros((n, c, h + top + bottom, w + left + right)) + fill
    padded[:, :, top:top + h, left:left + w] = input
    return padded


def conv1d(input, weight, bias=None, stride=1, padding=0):
    """``input`` (N, C_in, L), ``weight`` (C_out, C_in, K) -> (N, C_out, L_out).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> x = np.array([[[1.0, 2.0, 3.0, 4.0]]])  # N=1, C_in=1, L=4
    >>> F.conv1d(x, np.array([[[1.0, -1.0]]]))  # x[i] - x[i + 1]
    array([[[-1., -1., -1.]]])
    >>> F.conv1d(x, np.ones((2, 1, 3)), padding=1).shape
    (1, 2, 4)
    """
    (s,) = _ntuple(stride, 1, "stride")
    (p,) = _conv_padding(padding, stride, 1)
    out_channels, k = weight.shape[0], weight.shape[2]
    x = input
    if p != 0:
        before, after = _before_after(p, k)
        x = _pad1d(input, before, after, 0.0)
    n, c, length = x.shape
    out_length = (length - k) // s + 1
    out = np.zeros((n, out_length, out_channels))
    for j in range(k):
        window = x[:, :, j:j + s * (out_length - 1) + 1:s]                     # (N, C_in, L_out)
        rows = np.transpose(window, (0, 2, 1)).reshape(n * out_length, c)
        out = out + (rows @ weight[:, :, j].T).reshape(n, out_length, out_channels)
    out = np.transpose(out, (0, 2, 1))
    if bias is not None:
        out = out + bias[None, :, None]
    return out


def conv2d(input, weight, bias=None, stride=1, padding=0):
    """``input`` (N, C_in, H, W), ``weight`` (C_out, C_in, KH, KW) -> (N, C_out, H_out, W_out).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.conv2d(np.ones((1, 1, 4, 4)), np.ones((2, 1, 3, 3)), bias=np.array([0.0, 1.0]))
    array([[[[ 9.,  9.],
             [ 9.,  9.]],
    <BLANKLINE>
            [[10., 10.],
             [10., 10.]]]])
    """
    sh, sw = _ntuple(stride, 2, "stride")
    ph, pw = _conv_padding(padding, stride, 2)
    out_channels, kh, kw = weight.shape[0], weight.shape[2], weight.shape[3]
    x = input
    if ph != 0 or pw != 0:
        top, bottom = _before_after(ph, kh)
        left, right = _before_after(pw, kw)
        x = _pad2d(input, top, bottom, left, right, 0.0)
    n, c, h, w = x.shape
    out_h = (h - kh) // sh + 1
    out_w = (w - kw) // sw + 1
    out = np.zeros((n, out_h, out_w, out_channels))
    for i in range(kh):
        for j in range(kw):
            window = x[:, :, i:i + sh * (out_h - 1) + 1:sh, j:j + sw * (out_w - 1) + 1:sw]
            rows = np.transpose(window, (0, 2, 3, 1)).reshape(n * out_h * out_w, c)
            out = out + (rows @ weight[:, :, i, j].T).reshape(n, out_h, out_w, out_channels)
    out = np.transpose(out, (0, 3, 1, 2))
    if bias is not None:
        out = out + bias[None, :, None, None]
    return out


def _pool1d(input, kernel_size, stride, padding, fill, combine):
    """``combine`` (np.maximum or np.add) folded over the windows of the last axis, the input
    padded with ``fill``: (the result, the number of elements in a window)."""
    (k,) = _ntuple(kernel_size, 1, "kernel_size")
    (s,) = _pool_stride(stride, kernel_size, 1)
    (p,) = _pool_padding(padding, kernel_size, 1)
    x = input
    if p != 0:
        x = _pad1d(input, p, p, fill)
    out_length = (x.shape[2] - k) // s + 1
    out = x[:, :, 0:s * (out_length - 1) + 1:s]
    for j in range(1, k):
        out = combine(out, x[:, :, j:j + s * (out_length - 1) + 1:s])
    return out, k


def _pool2d(input, kernel_size, stride, padding, fill, combine):
    """``combine`` (np.maximum or np.add) folded over the windows of the last two axes, the input
    padded with ``fill``: (the result, the number of elements in a window)."""
    kh, kw = _ntuple(kernel_size, 2, "kernel_size")
    sh, sw = _pool_stride(stride, kernel_size, 2)
    ph, pw = _pool_padding(padding, kernel_size, 2)
    x = input
    if ph != 0 or pw != 0:
        x = _pad2d(input, ph, ph, pw, pw, fill)
    out_h = (x.shape[2] - kh) // sh + 1
    out_w = (x.shape[3] - kw) // sw + 1
    out = x[:, :, 0:sh * (out_h - 1) + 1:sh, 0:sw * (out_w - 1) + 1:sw]
    for i in range(kh):
        for j in range(kw):
            if i + j > 0:
                out = combine(out, x[:, :, i:i + sh * (out_h - 1) + 1:sh, j:j + sw * (out_w - 1) + 1:sw])
    return out, kh * kw


def max_pool1d(input, kernel_size, stride=None, padding=0):
    """Maximum over windows of ``kernel_size`` (``stride`` None means ``kernel_size``); padding
    adds -inf, so a window's maximum is over the input it covers.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.max_pool1d(np.array([[[1.0, 3.0, 2.0, 5.0, 4.0]]]), 2)
    array([[[3., 5.]]])
    """
    return _pool1d(input, kernel_size, stride, padding, -np.inf, np.maximum)[0]


def avg_pool1d(input, kernel_size, stride=None, padding=0):
    """Mean over windows of ``kernel_size``; padded zeros count in the mean (PyTorch's default
    ``count_include_pad=True``).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.avg_pool1d(np.array([[[1.0, 3.0, 2.0, 5.0]]]), 2)
    array([[[2. , 3.5]]])
    """
    total, count = _pool1d(input, kernel_size, stride, padding, 0.0, np.add)
    return total / count


def max_pool2d(input, kernel_size, stride=None, padding=0):
    """Maximum over ``kernel_size`` windows of the last two axes (``stride`` None means ``kernel_size``).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2)
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """
    return _pool2d(input, kernel_size, stride, padding, -np.inf, np.maximum)[0]


def avg_pool2d(input, kernel_size, stride=None, padding=0):
    """Mean over ``kernel_size`` windows of the last two axes; padded zeros count in the mean.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.avg_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2)
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]])
    """
    total, count = _pool2d(input, kernel_size, stride, padding, 0.0, np.add)
    return total / count
