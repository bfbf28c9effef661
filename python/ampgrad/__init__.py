"""ampgrad: a C++ tensor engine with tape-based autograd, autocast and GradScaler whose Python API
mirrors torch's, so that `import ampgrad as torch` runs scripts written for those APIs."""
import os as _os

# Note [OpenMP wake-ups]: the engine's parallel regions run on libgomp with its own defaults (workers
# spin a while after a region, then sleep; fewer spins when the process has more OpenMP threads than
# CPUs). ampgrad used to set OMP_WAIT_POLICY=PASSIVE here: workers then slept at once and every region
# paid a futex wake-up. On the 2-vCPU machine, with 2 threads, a [32,256] @ [256,1024] product took
# 218 us against 101 us on one thread and 64 us with libgomp's default; a 256K-float add 81 us (43 us
# on one thread, 15 us now); a GPT training step 132 ms against 113 ms now. torch, imported later in
# the same process, read the same variable and was slowed alike (its step: 131 -> 103 ms). Set
# OMP_WAIT_POLICY / GOMP_SPINCOUNT yourself where several processes share the cores
# (ampgrad.distributed.run gives each rank one thread).

from ._load_C import load as _load_engine  # noqa: E402
_load_engine(__name__, _os.path.dirname(__file__))  # _C built for this CPU (Note [CPU dispatch])
from . import _C  # noqa: E402
from ._C import Tensor, dtype, device  # noqa: E402
from ._C import get_num_threads, set_num_threads  # noqa: E402
from ._C import (promote_types, can_cast, get_default_dtype, set_default_dtype, from_numpy, is_grad_enabled,
                 is_inference_mode_enabled)
# Elementwise, linear-algebra and shape functions bound directly in C++.
# The plain unary and binary ops come from the op table (Note [Op table]): one name per generated row.
globals().update({_name: getattr(_C, _name) for _name in _C._unary_ops() + _C._binary_ops()})
from ._C import (negative, absolute, arcsin, arccos, arctan, fix, round, isnan, isinf, isfinite,
                 nan_to_num, clamp, clip, logical_not, bitwise_not, add, sub, subtract, multiply,
                 div, divide, true_divide, floor_divide, pow, arctan2, greater, less, greater_equal,
                 less_equal, not_equal, bitwise_and, bitwise_or, bitwise_xor, lerp, addcmul, addcdiv,
                 matmul, mm, bmm, mv, dot, inner, outer, ger, addmm, addmv, addr, addbmm, baddbmm,
                 transpose, swapaxes, swapdims, permute, reshape, t, as_strided, squeeze, unsqueeze,
                 unflatten, narrow, select, diagonal, split, unbind, chunk, cat, concat, concatenate,
                 stack, gather, scatter, scatter_add, index_select, index_add, index_copy,
                 masked_fill, masked_select, tril, triu, flip, roll)
from ._C import _addmm_activation  # torch's private fused addmm + ReLU (Note [GEMM epilogues])
# Imports follow the package's layering (tests/test_import_layers.py): _C, the leaf modules
# (_creation, _dtype_info, _tensor_str, _indexing), _tensor, the functions, autograd, then the
# subpackages; no module imports this one or a module above its own layer.
from ._tensor import Size
from ._functions import *  # noqa: F401,F403  (reductions, stacking, comparisons; re-exports creation, dtype info)
from ._creation import (tensor, as_tensor, asarray, scalar_tensor, full, zeros, ones, empty, zeros_like, ones_like,
                        empty_like, full_like, arange, range, linspace, logspace, eye, manual_seed, seed, initial_seed,
                        rand, randn, rand_like, randn_like, randint, randint_like, randperm, normal, bernoulli,
                        Generator, default_generator)
from ._dtype_info import finfo, iinfo
from ._functions import (sum, mean, max, min, where, nonzero, softmax, log_softmax, hstack, vstack, row_stack, dstack,
                         tile, broadcast_shapes, broadcast_to, broadcast_tensors, numel, is_tensor, is_floating_point,
                         is_nonzero, result_type, isclose, allclose, equal, clone, square, norm, flatten, prod,
                         var_mean, std_mean, clamp_min, clamp_max)
from ._legacy import (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor,  # noqa: E402
                      ShortTensor, IntTensor, LongTensor, BoolTensor)
from ._sorting import sort, argsort, msort, topk, kthvalue, median, nanmedian  # noqa: E402
from . import return_types  # noqa: E402
from ._linalg_extra import cross, tensordot, einsum, chain_matmul, cdist, dist, renorm, trace
from . import _linalg_extra as _le
from . import autograd
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled
from . import profiler
from .autograd.grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode
from . import cuda
from . import backends
from . import cpu
from . import nn
from . import amp
from .amp import autocast, GradScaler
from ._autocast_state import (is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
                              get_autocast_gpu_dtype, get_autocast_cpu_dtype, set_autocast_gpu_dtype,
                              set_autocast_cpu_dtype, is_autocast_cpu_enabled, set_autocast_cpu_enabled,
                              clear_autocast_cache, is_autocast_cache_enabled, set_autocast_cache_enabled,
                              autocast_increment_nesting, autocast_decrement_nesting)
from . import linalg
from ._special_ops import (digamma, lgamma, polygamma, mvlgamma, logit, i0, sgn, signbit, frexp, igamma,  # noqa: E402
                           igammac, gcd, lcm, bitwise_left_shift, bitwise_right_shift, nextafter, heaviside, rsub,
                           isin, float_power, ldexp, xlogy_)
from . import special  # noqa: E402
from ._linalg_decomp import (det, logdet, slogdet, inverse, cholesky, cholesky_inverse, cholesky_solve,  # noqa: E402
                             triangular_solve, lu_unpack, matrix_power, matrix_exp, pinverse, svd, qr, cov, corrcoef,
                             kron, block_diag)
from . import func  # noqa: E402
from . import optim
from ._nn_ops import (conv1d, conv2d, conv_transpose1d, conv_transpose2d, prelu, bilinear, cosine_similarity,
                      pairwise_distance, pdist, dropout, layer_norm, group_norm, embedding, selu, celu, selu_,
                      celu_, relu_)
from ._nn_ops_more import (hardshrink, threshold, threshold_, rrelu, rrelu_, instance_norm, feature_alpha_dropout,
                           norm_except_dim, _weight_norm)
from . import _nn_ops as _nn_ops_mod
_nn_ops_mod.install_missing(globals())  # torch.kl_div, torch.vdot, torch.convolution, ... (issue 13)
from .nn._ctc_fracpool import ctc_loss  # noqa: E402  (torch.ctc_loss: reduction as an enum int)
from . import _shape_extra as _shape_extra_mod
_shape_extra_mod.install(globals())  # atleast_nd, tensor_split, take, rot90, *_copy, ... where undefined (issue 13)

# dtypes and torch's aliases (after the imports above: these names shadow builtins in this module)
bool = _C.bool
uint8 = _C.uint8
int8 = _C.int8
int16 = _C.int16
int32 = _C.int32
int64 = _C.int64
float16 = _C.float16
bfloat16 = _C.bfloat16
float32 = _C.float32
float64 = _C.float64
uint16 = _C.uint16
uint32 = _C.uint32
uint64 = _C.uint64
half = float16
float = float32
double = float64
long = int64
int = int32
short = int16

Tensor.cross = lambda self, other, dim=None: _le.cross(self, other, dim)
Tensor.renorm = lambda self, p, dim, maxnorm: _le.renorm(self, p, dim, maxnorm)
Tensor.dist = lambda self, other, p=2: _le.dist(self, other, p)



from ._surface import (use_deterministic_algorithms, are_deterministic_algorithms_enabled,  # noqa: E402
                       is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
                       get_deterministic_debug_mode, set_float32_matmul_precision, get_float32_matmul_precision,
                       compile)
from ._C import pixel_shuffle, pixel_unshuffle, channel_shuffle  # noqa: E402  (ops/spatial.cpp)
native_channel_shuffle = channel_shuffle
from . import accelerator  # noqa: E402
from . import utils  # noqa: E402
from . import multiprocessing  # noqa: E402  (shared-memory tensors through queues and Process args)
from ._rnn import lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell  # noqa: E402  (fused cell ops, csrc/ops/rnn.cpp)
from . import distributed  # noqa: E402
from .serialization import save, load  # noqa: E402
from ._creation import get_rng_state, set_rng_state  # noqa: E402
from . import masked  # noqa: E402  (torch.masked reductions, issue 13)
from . import signal  # noqa: E402  (torch.signal.windows, issue 13)
from . import distributions  # noqa: E402  (torch.distributions: Distribution, Categorical, Normal, constraints)
from math import e, inf, nan, pi  # noqa: E402,F401  (torch re-exports these)
newaxis = None  # torch.newaxis
from . import _misc_ops as _misc_ops_mod  # noqa: E402
_misc_ops_mod.install(globals())  # *_window, combinations, gradient, quantile, mode, unique, ... (issue 13)
from . import _aten_ops as _aten_ops_mod  # noqa: E402
_aten_ops_mod.install(globals())  # native_layer_norm / _group_norm / _batch_norm, histogram, _chunk_cat, ... (issue 13)
from ._scan_index import (scatter_reduce, index_reduce, cummax, cummin, logcumsumexp, searchsorted,  # noqa: E402
                          bucketize, bincount, histc)  # (csrc/ops/scan_index.cpp)
from . import types, library  # noqa: E402  (torch.library custom ops, issue 18)
from ._ops import ops, Tag  # noqa: E402  (torch.ops.<ns>.<name>)
from . import _ops as _ops_mod  # noqa: E402
_ops_mod._aten_names = globals()  # torch.ops.aten.<name> falls back to ampgrad.<name>

from ._dlpack import from_dlpack  # noqa: E402  (DLPack and NumPy's array protocols on Tensor, issue 16)
from . import testing  # noqa: E402  (assert_close, make_tensor)
from . import onnx  # noqa: E402  (no exporter: torch.onnx's names, export raises)

from . import sparse  # noqa: E402  (COO tensors, Note [Sparse COO]; before the parser wrappers below)
from .sparse import sparse_coo_tensor, layout, strided, sparse_coo  # noqa: E402

from . import _inplace_methods  # noqa: E402  (addmm_, cumsum_, fill_diagonal_, apply_, aliases: after every method)
_inplace_methods.install(globals())

# torch's TypeError for wrong-typed arguments of the ops composed in Python (issue 10; _argparse.py): last, so
# that every public function, Tensor method and nn.functional function defined above is covered
from . import _argparse  # noqa: E402
_argparse.install(globals(), "fn")
_argparse.install(Tensor, "method")
_argparse.install(nn.functional.__dict__, "F")

# torch's out= on every function whose torch binding takes it (Note [out= overloads]; _out.py): outermost
import sys as _sys  # noqa: E402
from . import _out  # noqa: E402
_out.install({"torch": _sys.modules[__name__], "linalg": linalg, "special": special, "F": nn.functional,
              **({"fft": globals()["fft"]} if "fft" in globals() else {})})

# Sparse COO tensors (Note [Sparse COO], sparse/__init__.py): torch.mm / spmm take a sparse operand; outermost,
# so the dense path is the call above unchanged (one type check more). matmul stays the builtin (attention's hot
# path): sparse @ dense and Tensor.matmul reach sparse.mm through the operators.
spmm = mm = sparse._dispatching(mm)

__version__ = "0.1.0"
