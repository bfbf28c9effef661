"""The autocast op reference lists (PyTorch's AMP docs, newer version), kept as data: the policy
test checks every op ampgrad implements against them."""

CUDA_LOWER = """__matmul__ addbmm addmm addmv addr baddbmm bmm chain_matmul multi_dot conv1d conv2d conv3d
conv_transpose1d conv_transpose2d conv_transpose3d GRUCell linear LSTMCell matmul mm mv prelu RNNCell""".split()

CUDA_FP32 = """__pow__ __rdiv__ __rpow__ __rtruediv__ acos asin binary_cross_entropy_with_logits cosh
cosine_embedding_loss cdist cosine_similarity cross_entropy cumprod cumsum dist erfinv exp expm1 group_norm
hinge_embedding_loss kl_div l1_loss layer_norm log log_softmax log10 log1p log2 margin_ranking_loss mse_loss
multilabel_margin_loss multi_margin_loss nll_loss norm normalize pdist poisson_nll_loss pow prod reciprocal rsqrt
sinh smooth_l1_loss soft_margin_loss softmax softmin softplus sum renorm tan triplet_margin_loss""".split()

# torch 2.13's CUDA autocast casts rms_norm to float32 too (torch.testing._internal.autocast_test_lists'
# torch_fp32 list; newer than the list above).
CUDA_FP32.append("rms_norm")

CUDA_PROMOTE = "addcdiv addcmul atan2 bilinear cross dot grid_sample index_put scatter_add tensordot".split()

CUDA_BANNED = ["binary_cross_entropy"]

CPU_LOWER = """conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear matmul _convolution conv_tbc
mkldnn_rnn_layer conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention
_native_multi_head_attention""".split()

# torch 2.13's CPU autocast lowers _addmm_activation too (autocast_test_lists' AutocastCPUTestLists.torch_16).
CPU_LOWER.append("_addmm_activation")

CPU_FP32 = """avg_pool3d binary_cross_entropy grid_sampler grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d
polar prod quantile nanquantile stft cdist trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse
lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d
reflection_pad2d replication_pad1d replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss
nll_loss2d hinge_embedding_loss poisson_nll_loss cross_entropy_loss l1_loss huber_loss margin_ranking_loss
soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div multilabel_margin_loss
binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2
fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky
linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv
linalg_tensorsolve fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve fractional_max_pool2d
fractional_max_pool3d adaptive_max_pool3d multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd
linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex""".split()
# torch 2.13's CPU autocast also casts smooth_l1_loss to float32 (tests/test_op_table.py found it; the
# list above is SPEC.md's, from an older torch).
CPU_FP32.append("smooth_l1_loss")

CPU_PROMOTE = "cat stack index_copy".split()

# fp32 ops of the CUDA list that take an optional dtype and get dtype=float32 (fp32_set_opt_dtype)
# or append it (fp32_append_dtype), as torch's autocast kernels do.
CUDA_SET_OPT = "prod softmax log_softmax cumprod cumsum sum".split()
CUDA_APPEND = ["norm"]

# Names in the lists that ampgrad's op table spells differently.
ALIASES = {"__matmul__": "matmul", "__pow__": "pow", "__rpow__": "rpow", "__rtruediv__": "rtruediv",
           "__rdiv__": "rtruediv", "cross_entropy_loss": "cross_entropy"}
