// Launch helpers shared by the CUDA kernels. Compile-checked only: not yet run on a GPU.
#include <algorithm>
#include "kernels/cuda/loops.cuh"

namespace ampgrad::cuda {

int grid_size(int64_t work) {
  static const int max_blocks = [] {
    int dev = 0;
    AG_CUDA_CHECK(cudaGetDevice(&dev));
    return device_prop(dev).multiProcessorCount * 16;  // enough resident blocks; the loops stride
  }();
  int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(blocks, max_blocks)));
}

int iter_device(const TensorIter& it) {
  if (device_count() <= 1) return 0;
  cudaPointerAttributes attr{};
  AG_CUDA_CHECK(cudaPointerGetAttributes(&attr, it.data[0]));
  return attr.device;
}

}  // namespace ampgrad::cuda
