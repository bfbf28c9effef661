// The spatial nn ops (ops/spatial.cpp): F.pad, the upsample kernels behind F.interpolate,
// pixel_(un)shuffle, channel_shuffle, unfold / fold (im2col / col2im) and max_unpool.
#pragma once
#include <optional>
#include <string>
#include <vector>
#include "ops/ops.h"

namespace ampgrad {

// torch._C._nn.pad: mode "constant" (any number of trailing dims; negative pads crop), "reflect",
// "replicate", "circular" (1-3 trailing dims of a batched or unbatched input).
Tensor pad(const Tensor& x, IntList pad, const std::string& mode, std::optional<double> value);
Tensor constant_pad_nd(const Tensor& x, IntList pad, Scalar value);
// upsample_{nearest,_nearest_exact,linear1d,bilinear2d,trilinear3d,bicubic2d} over [N, C, spatial...]:
// mode "nearest", "nearest-exact", "linear" (1-3 dims), "bicubic" (2 dims); scales: the user's scale
// factors (nullopt: none), as torch passes them to its kernels.
Tensor upsample(const Tensor& x, const std::string& mode, IntList output_size, const std::vector<std::optional<double>>& scales,
                bool align_corners);
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor);
Tensor channel_shuffle(const Tensor& x, int64_t groups);
// F.unfold / F.fold on [N, C, H, W] / [N, C*kh*kw, L] (or unbatched).
Tensor im2col(const Tensor& x, IntList kernel_size, IntList dilation, IntList padding, IntList stride);
Tensor col2im(const Tensor& x, IntList output_size, IntList kernel_size, IntList dilation, IntList padding, IntList stride);
// max_unpool2d / max_unpool3d (output_size: the spatial sizes, 2 or 3).
Tensor max_unpool(const Tensor& x, const Tensor& indices, IntList output_size);

}  // namespace ampgrad
