// The CPU generator: mt19937 with torch's transforms (uniform_real, Box-Muller with a cached
// second sample, normal_fill for >= 16 contiguous values, randint and randperm), so that a
// seeded ampgrad run draws torch's CPU numbers.
#include <cmath>
#include <mutex>
#include <random>
#include "kernels/cpu/loops.h"

namespace ampgrad {

namespace {
struct CpuGenerator {
  std::mt19937 engine{static_cast<uint32_t>(67280421310721ULL)};
  uint64_t seed = 67280421310721ULL;
  bool has_next_normal = false;
  double next_normal = 0;
  std::mutex mu;
  uint32_t random() { return engine(); }
  uint64_t random64() { uint32_t hi = engine(), lo = engine(); return (static_cast<uint64_t>(hi) << 32) | lo; }
};
CpuGenerator& gen() { static CpuGenerator g; return g; }

template <typename T> constexpr int digits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, Half>) return 11;
  else return 8;
}
template <typename T> using dacc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T> dacc_t<T> uniform_real(CpuGenerator& g, T from, T to) {
  using A = dacc_t<T>;
  uint64_t v = std::is_same_v<T, double> ? g.random64() : g.random();
  constexpr uint64_t mask = (uint64_t(1) << digits<T>()) - 1;
  const A divisor = A(1) / static_cast<A>(uint64_t(1) << digits<T>());
  A x = static_cast<A>(v & mask) * divisor;
  return x * (static_cast<A>(to) - static_cast<A>(from)) + static_cast<A>(from);
}

double normal_double(CpuGenerator& g, double mean, double std) {
  if (g.has_next_normal) { g.has_next_normal = false; return g.next_normal * std + mean; }
  double u1 = uniform_real<double>(g, 0.0, 1.0), u2 = uniform_real<double>(g, 0.0, 1.0);
  double r = std::sqrt(-2.0 * std::log1p(-u2));
  double theta = 2.0 * M_PI * u1;
  g.has_next_normal = true;
  g.next_normal = r * std::sin(theta);
  return r * std::cos(theta) * std + mean;
}

// Visits the elements of `t` in logical (row-major) order.
template <typename T, typename F> void for_elements(Tensor& t, F f) {
  const int64_t n = t.numel(), nd = t.dim();
  T* base = t.data<T>();
  if (t.is_contiguous()) { for (int64_t i = 0; i < n; ++i) f(base[i]); return; }
  std::vector<int64_t> idx(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * t.strides()[d];
    f(base[off]);
    for (int64_t d = nd - 1; d >= 0; --d) { if (++idx[d] < t.sizes()[d]) break; idx[d] = 0; }
  }
}

void k_uniform(Tensor& t, double from, double to) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  AG_DISPATCH_FLOAT(t.dtype(), "uniform_", [&] {
    scalar_t f = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(from)), e = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(to));
    for_elements<scalar_t>(t, [&](scalar_t& x) { x = static_cast<scalar_t>(uniform_real<scalar_t>(g, f, e)); });
  });
}

void k_normal(Tensor& t, double mean, double std) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  const int64_t n = t.numel();
  AG_DISPATCH_FLOAT(t.dtype(), "normal_", [&] {
    using A = acc_t<scalar_t>;
    if (n >= 16 && t.is_contiguous()) {
      // torch's normal_fill: n uniforms, Box-Muller in blocks of 16, the tail block redrawn.
      scalar_t* d = t.data<scalar_t>();
      std::vector<A> u(n);
      for (int64_t i = 0; i < n; ++i) u[i] = static_cast<A>(static_cast<scalar_t>(uniform_real<scalar_t>(g, scalar_t(0), scalar_t(1))));
      auto fill16 = [&](A* data) {
        for (int j = 0; j < 8; ++j) {
          const A u1 = A(1) - data[j], u2 = data[j + 8];
          const A radius = std::sqrt(A(-2) * std::log(u1));
          const A theta = static_cast<A>(2.0f * M_PI * u2);
          data[j] = radius * std::cos(theta) * static_cast<A>(std) + static_cast<A>(mean);
          data[j + 8] = radius * std::sin(theta) * static_cast<A>(std) + static_cast<A>(mean);
        }
      };
      for (int64_t i = 0; i + 16 <= n; i += 16) fill16(u.data() + i);
      if (n % 16 != 0) {
        A* tail = u.data() + n - 16;
        for (int j = 0; j < 16; ++j) tail[j] = static_cast<A>(static_cast<scalar_t>(uniform_real<scalar_t>(g, scalar_t(0), scalar_t(1))));
        fill16(tail);
      }
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<scalar_t>(u[i]);
    } else {
      for_elements<scalar_t>(t, [&](scalar_t& x) { x = static_cast<scalar_t>(static_cast<A>(normal_double(g, mean, std))); });
    }
  });
}

// exponential_(lambd): -log1p(-u) / lambd from a double uniform per element, rounded to t's type
// (torch's CPU transform: every dtype draws the 53-bit uniform).
void k_exponential(Tensor& t, double lambd, double) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  AG_DISPATCH_FLOAT(t.dtype(), "exponential_", [&] {
    for_elements<scalar_t>(t, [&](scalar_t& x) {
      const double u = uniform_real<double>(g, 0.0, 1.0);
      x = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(-1.0 / lambd * std::log1p(-u)));
    });
  });
}

// Note [Multinomial kernel]. Rows are independent: split across threads.
void k_multinomial(const Tensor& probs, const Tensor& uniforms, Tensor& out, int64_t n) {
  const int64_t D = probs.sizes()[0], C = probs.sizes()[1];
  const double* u = uniforms.data<double>();
  int64_t* o = out.data<int64_t>();
  AG_DISPATCH_FLOAT(probs.dtype(), "multinomial", [&] {
    using A = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    const scalar_t* p = probs.data<scalar_t>();
    cpu::parallel_for(D, std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(C + n, 1)), [&](int64_t d0, int64_t d1) {
      std::vector<A> cum(C);
      for (int64_t d = d0; d < d1; ++d) {
        A sum = 0;
        for (int64_t j = 0; j < C; ++j) { sum += static_cast<A>(p[d * C + j]); cum[j] = sum; }
        for (int64_t j = 0; j < C; ++j) cum[j] /= sum;
        cum[C - 1] = 1;
        for (int64_t s = 0; s < n; ++s) {
          const double x = u[d * n + s];
          int64_t lo = 0, hi = C;
          while (hi - lo > 0) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (static_cast<double>(cum[mid]) < x) lo = mid + 1; else hi = mid;
          }
          o[d * n + s] = lo;
        }
      }
    });
  });
}

// randperm: shuffles t, which holds 0..n-1, in place (torch's CPU algorithm; a and b unused).
void k_randperm(Tensor& t, double, double) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  const int64_t n = t.numel();
  AG_DISPATCH_NUMERIC(t.dtype(), "randperm", [&] {
    scalar_t* d = t.data<scalar_t>();
    const int64_t s = t.strides()[0];
    for (int64_t i = 0; i + 1 < n; ++i) {
      int64_t z = n < static_cast<int64_t>(UINT32_MAX / 20) ? static_cast<int64_t>(g.random() % static_cast<uint64_t>(n - i))
                                                             : static_cast<int64_t>(g.random64() % static_cast<uint64_t>(n - i));
      std::swap(d[i * s], d[(z + i) * s]);
    }
  });
}

// randint: [low, high) with the bounds packed bit for bit (Note [Integer bounds of randint]); the range
// is formed in uint64, so the full int64 range neither overflows nor becomes 0.
void k_randint(Tensor& t, double a, double b) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  const int64_t low = unpack_i64(a);
  const uint64_t range = static_cast<uint64_t>(unpack_i64(b)) - static_cast<uint64_t>(low);
  AG_DISPATCH_ALL(t.dtype(), "random_from_to", [&] {
    const bool wide = range >= (uint64_t(1) << 32) &&
                      (std::is_same_v<scalar_t, int64_t> || std::is_same_v<scalar_t, double> || std::is_same_v<scalar_t, float> ||
                       std::is_same_v<scalar_t, BFloat16>);
    for_elements<scalar_t>(t, [&](scalar_t& x) {
      uint64_t v = wide ? g.random64() : g.random();
      x = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(static_cast<int64_t>(v % range + static_cast<uint64_t>(low))));
    });
  });
}
}  // namespace

AG_REGISTER_KERNEL(uniform, CPU, k_uniform);
AG_REGISTER_KERNEL(normal, CPU, k_normal);
AG_REGISTER_KERNEL(randint, CPU, k_randint);
AG_REGISTER_KERNEL(randperm, CPU, k_randperm);
AG_REGISTER_KERNEL(exponential, CPU, k_exponential);
AG_REGISTER_KERNEL(multinomial, CPU, k_multinomial);

void manual_seed(uint64_t seed) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.engine.seed(static_cast<uint32_t>(seed & 0xffffffffu));
  g.has_next_normal = false;
}
uint64_t initial_seed() { return gen().seed; }
// One 64-bit draw (the seed of a Philox stream: dropout's masks, kernels/cpu/nn_misc.cpp).
uint64_t cpu_generator_random64() {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.random64();
}

}  // namespace ampgrad
