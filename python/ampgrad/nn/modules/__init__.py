"""nn modules, organised by family as in torch.nn.modules."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .sparse import Embedding
from .normalization import LayerNorm, GroupNorm, RMSNorm
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .activation import (ReLU, ReLU6, GELU, SiLU, Tanh, Sigmoid, Softplus, PReLU, LeakyReLU, ELU, CELU, SELU, Hardtanh,
                         Hardsigmoid, Hardswish, Mish, LogSigmoid, Softsign, Tanhshrink, GLU, Softmax, LogSoftmax,
                         Softmin)
from .rnn import RNNCellBase, RNNCell, LSTMCell, GRUCell
from .loss import (L1Loss, MSELoss, SmoothL1Loss, HuberLoss, KLDivLoss, NLLLoss, NLLLoss2d, LinearCrossEntropyLoss, CTCLoss, CrossEntropyLoss, BCELoss,
                   BCEWithLogitsLoss, HingeEmbeddingLoss, MarginRankingLoss, SoftMarginLoss, CosineEmbeddingLoss,
                   PoissonNLLLoss, TripletMarginLoss, MultiMarginLoss, MultiLabelMarginLoss)
from .distance import CosineSimilarity, PairwiseDistance
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
                      FractionalMaxPool2d, FractionalMaxPool3d)
# nn additions (engineer nnmods): transformer.py, activation_more.py, ...
from .linear import NonDynamicallyQuantizableLinear
from .transformer import (MultiheadAttention, Transformer, TransformerEncoder, TransformerDecoder,
                          TransformerEncoderLayer, TransformerDecoderLayer)
from .more import *  # noqa: F401,F403
from .more import __all__ as _more_all

from .spatial import *  # noqa: F401,F403  (padding, upsampling, shuffles, fold, max_unpool, lp_pool)
from .spatial import __all__ as _spatial_all
__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Embedding", "LayerNorm", "GroupNorm",
           "RMSNorm", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Flatten", "Unflatten", "ReLU", "ReLU6", "GELU", "SiLU",
           "Tanh", "Sigmoid", "Softplus", "PReLU", "LeakyReLU", "ELU", "CELU", "SELU", "Hardtanh", "Hardsigmoid",
           "Hardswish", "Mish", "LogSigmoid", "Softsign", "Tanhshrink", "GLU", "Softmax", "LogSoftmax", "Softmin",
           "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss",
           "KLDivLoss", "NLLLoss", "NLLLoss2d", "LinearCrossEntropyLoss", "CTCLoss", "FractionalMaxPool2d", "FractionalMaxPool3d", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MarginRankingLoss", "SoftMarginLoss",
           "CosineEmbeddingLoss", "PoissonNLLLoss", "TripletMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "CosineSimilarity",
           "PairwiseDistance",
           "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
__all__ += _spatial_all

# recurrent layers (a time loop over the fused cell ops of csrc/ops/rnn.cpp)
from .rnn import RNNBase, RNN, LSTM, GRU  # noqa: E402
__all__ += ["RNNBase", "RNN", "LSTM", "GRU"]

__all__ += ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
            "TransformerDecoderLayer"] + list(_more_all)

# Note [torch's module paths]: every class is reachable, and names itself (__module__), where torch's lives:
# ampgrad.nn.modules.<file> for torch.nn.modules.<file>. Pickles of whole modules record that path (torch.load's
# find_class maps torch.nn.modules.X to ampgrad.nn.modules.X; safe_globals compares paths), and scripts name
# classes by it (pytorch/examples' word_language_model: torch.nn.modules.activation.MultiheadAttention). The
# classes ampgrad defines in files of its own are re-homed here (padding.py and the other torch-named files
# re-export them); tests/test_nn_module_paths.py checks the table against torch.
import importlib as _importlib  # noqa: E402

_TORCH_HOMES = {
    "activation": ["MultiheadAttention", "Hardshrink", "RReLU", "Softmax2d", "Softshrink", "Threshold"],
    "normalization": ["CrossMapLRN2d", "LocalResponseNorm"],
    "container": ["Container"],
    "sparse": ["EmbeddingBag"],
    "dropout": ["FeatureAlphaDropout"],
    "loss": ["GaussianNLLLoss", "MultiLabelSoftMarginLoss", "TripletMarginWithDistanceLoss"],
    "pooling": ["LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"],
    "batchnorm": ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "SyncBatchNorm"],
    "conv": ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
             "LazyConvTranspose3d"],
    "instancenorm": ["LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"],
    "linear": ["LazyLinear"],
    "padding": None, "upsampling": None, "pixelshuffle": None, "fold": None, "channelshuffle": None, "adaptive": None,
}
for _home, _names in _TORCH_HOMES.items():
    _mod = _importlib.import_module(f"{__name__}.{_home}")
    for _name in (_names if _names is not None else _mod.__all__):
        _cls = globals()[_name]
        setattr(_mod, _name, _cls)
        _cls.__module__ = _mod.__name__
