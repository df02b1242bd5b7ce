"""Convolution and pooling over (N, C, L) and (N, C, H, W) arrays, as direct loops over the
kernel offsets: each offset contributes one strided slice of the input times one kernel tap
(a matrix product over channels), so the loops are short and the work is array code."""
import numpy as np


def _pad1d(input, padding):
    if padding == 0:
        return input
    n, c, length = input.shape
    padded = np.zeros((n, c, length + 2 * padding))
    padded[:, :, padding:padding + length] = input
    return padded


def _pad2d(input, padding):
    if padding == 0:
        return input
    n, c, h, w = input.shape
    padded = np.zeros((n, c, h + 2 * padding, w + 2 * padding))
    padded[:, :, padding:padding + h, padding:padding + w] = input
    return padded


def conv1d(input, weight, bias=None, stride=1, padding=0):
    """``input`` (N, C_in, L), ``weight`` (C_out, C_in, K) -> (N, C_out, L_out)."""
    x = _pad1d(input, padding)
    n, c, length = x.shape
    out_channels, k = weight.shape[0], weight.shape[2]
    out_length = (length - k) // stride + 1
    out = np.zeros((n, out_length, out_channels))
    for j in range(k):
        window = x[:, :, j:j + stride * (out_length - 1) + 1:stride]            # (N, C_in, L_out)
        rows = np.transpose(window, (0, 2, 1)).reshape(n * out_length, c)
        out = out + (rows @ weight[:, :, j].T).reshape(n, out_length, out_channels)
    out = np.transpose(out, (0, 2, 1))
    if bias is not None:
        out = out + bias[None, :, None]
    return out


def conv2d(input, weight, bias=None, stride=1, padding=0):
    """``input`` (N, C_in, H, W), ``weight`` (C_out, C_in, KH, KW) -> (N, C_out, H_out, W_out)."""
    x = _pad2d(input, padding)
    n, c, h, w = x.shape
    out_channels, kh, kw = weight.shape[0], weight.shape[2], weight.shape[3]
    out_h = (h - kh) // stride + 1
    out_w = (w - kw) // stride + 1
    out = np.zeros((n, out_h, out_w, out_channels))
    for i in range(kh):
        for j in range(kw):
            window = x[:, :, i:i + stride * (out_h - 1) + 1:stride, j:j + stride * (out_w - 1) + 1:stride]
            rows = np.transpose(window, (0, 2, 3, 1)).reshape(n * out_h * out_w, c)
            out = out + (rows @ weight[:, :, i, j].T).reshape(n, out_h, out_w, out_channels)
    out = np.transpose(out, (0, 3, 1, 2))
    if bias is not None:
        out = out + bias[None, :, None, None]
    return out


def max_pool1d(input, kernel_size, stride=0):
    """Maximum over windows of ``kernel_size`` (``stride`` 0 means ``kernel_size``)."""
    s = kernel_size if stride == 0 else stride
    out_length = (input.shape[2] - kernel_size) // s + 1
    out = input[:, :, 0:s * (out_length - 1) + 1:s]
    for j in range(1, kernel_size):
        out = np.maximum(out, input[:, :, j:j + s * (out_length - 1) + 1:s])
    return out


def avg_pool1d(input, kernel_size, stride=0):
    s = kernel_size if stride == 0 else stride
    out_length = (input.shape[2] - kernel_size) // s + 1
    total = input[:, :, 0:s * (out_length - 1) + 1:s]
    for j in range(1, kernel_size):
        total = total + input[:, :, j:j + s * (out_length - 1) + 1:s]
    return total / kernel_size


def max_pool2d(input, kernel_size, stride=0):
    s = kernel_size if stride == 0 else stride
    out_h = (input.shape[2] - kernel_size) // s + 1
    out_w = (input.shape[3] - kernel_size) // s + 1
    out = input[:, :, 0:s * (out_h - 1) + 1:s, 0:s * (out_w - 1) + 1:s]
    for i in range(kernel_size):
        for j in range(kernel_size):
            out = np.maximum(out, input[:, :, i:i + s * (out_h - 1) + 1:s, j:j + s * (out_w - 1) + 1:s])
    return out


def avg_pool2d(input, kernel_size, stride=0):
    s = kernel_size if stride == 0 else stride
    out_h = (input.shape[2] - kernel_size) // s + 1
    out_w = (input.shape[3] - kernel_size) // s + 1
    total = np.zeros_like(input[:, :, 0:s * (out_h - 1) + 1:s, 0:s * (out_w - 1) + 1:s])
    for i in range(kernel_size):
        for j in range(kernel_size):
            total = total + input[:, :, i:i + s * (out_h - 1) + 1:s, j:j + s * (out_w - 1) + 1:s]
    return total / (kernel_size * kernel_size)
