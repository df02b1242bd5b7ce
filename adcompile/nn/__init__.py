"""``adcompile.nn``: layers as Modules whose ``forward`` is compiled numpy code, and
``adcompile.nn.functional``."""
from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional
from . import utils  # nn.utils.clip_grad_norm_, clip_grad_value_
from .activation import ELU, GELU, SiLU, Hardtanh, LeakyReLU, LogSoftmax, Mish, ReLU, Sigmoid, Softmax, Softplus, Tanh
from .container import ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .embedding import Embedding
from .linear import Flatten, Identity, Linear
from .loss_modules import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .pooling import AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .recurrent import GRUCell, LSTMCell, RNNCell
from .rnn import GRU, LSTM, RNN

__all__ = ["Module", "Parameter", "functional", "Linear", "Identity", "Flatten", "Sequential", "ModuleList",
           "ReLU", "Tanh", "Sigmoid", "GELU", "Softmax", "LogSoftmax", "LeakyReLU", "ELU", "SiLU", "Softplus",
           "Mish", "Hardtanh", "Dropout", "Embedding", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm",
           "Conv1d", "Conv2d", "MaxPool1d", "AvgPool1d", "MaxPool2d", "AvgPool2d", "RNNCell", "LSTMCell",
           "GRUCell", "RNN", "LSTM", "GRU", "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"]
