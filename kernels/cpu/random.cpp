// The CPU generator: mt19937 with torch's transforms (uniform_real, Box-Muller with a cached
// second sample, normal_fill for >= 16 contiguous values, randint and randperm), so that a
// seeded ampgrad run draws torch's CPU numbers.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <random>
#include <cstring>
#include <sstream>
#include "kernels/cpu/cpu_generator.h"
#include "kernels/cpu/loops.h"

namespace ampgrad {

struct CpuGenerator {
  std::mt19937 engine{static_cast<uint32_t>(67280421310721ULL)};
  uint64_t seed = 67280421310721ULL;
  bool has_next_normal = false;
  double next_normal = 0;
  bool has_next_float_normal = false;  // torch's float normal cache: kept in the state, unused here
  float next_float_normal = 0;
  bool fresh = true;  // seeded, nothing drawn yet: torch's state says next = 0 (624 after a full block)
  std::mutex mu;
  uint32_t random() { fresh = false; return engine(); }
  uint64_t random64() { fresh = false; uint32_t hi = engine(), lo = engine(); return (static_cast<uint64_t>(hi) << 32) | lo; }
};

namespace {
CpuGenerator& default_gen() { static CpuGenerator g; return g; }
// Note [Generator objects]: a `generator=` argument makes its generator current on the calling
// thread for the call (ampgrad.Generator's scope); random kernels draw on the calling thread.
thread_local CpuGenerator* tls_current = nullptr;
CpuGenerator& gen() { return tls_current ? *tls_current : default_gen(); }

template <typename T> using dacc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Note [Low-precision uniforms]: torch 2.13 draws a float16 / bfloat16 uniform as float's (24 bits of
// random(), computed in float) and rounds the result once: rand, uniform_, rand_like and normal_'s
// uniforms in those dtypes are float32's draws rounded.
template <typename T> dacc_t<T> uniform_real(CpuGenerator& g, T from, T to) {
  using A = dacc_t<T>;
  uint64_t v = std::is_same_v<T, double> ? g.random64() : g.random();
  constexpr int bits = std::is_same_v<T, double> ? 53 : 24;
  constexpr uint64_t mask = (uint64_t(1) << bits) - 1;
  const A divisor = A(1) / static_cast<A>(uint64_t(1) << bits);
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

// Visits the elements in memory order as torch's TensorIterator does (dimensions sorted by stride,
// the smallest innermost; equal strides keep their order), so a transposed or permuted tensor gets
// the same draws at the same elements as torch's.
template <typename T, typename F> void for_elements(Tensor& t, F f) {
  const int64_t n = t.numel(), nd = t.dim();
  T* base = t.data<T>();
  if (t.is_contiguous()) { for (int64_t i = 0; i < n; ++i) f(base[i]); return; }
  std::vector<int64_t> order;  // the dimensions of size > 1, outermost first
  for (int64_t d = 0; d < nd; ++d)
    if (t.sizes()[d] != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return t.strides()[a] > t.strides()[b]; });
  const int64_t k = static_cast<int64_t>(order.size());
  std::vector<int64_t> idx(k, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < k; ++d) off += idx[d] * t.strides()[order[d]];
    f(base[off]);
    for (int64_t d = k - 1; d >= 0; --d) { if (++idx[d] < t.sizes()[order[d]]) break; idx[d] = 0; }
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
      // torch's normal_fill: n uniforms, Box-Muller in blocks of 16, the tail block redrawn; float16 /
      // bfloat16 are float32's normals rounded once (Note [Low-precision uniforms]).
      // float16 / bfloat16 (torch 2.13's reduced-precision normal_fill, measured bit for bit): the 16
      // redrawn uniforms go after the n first ones in a float buffer, and the tail block's Box-Muller
      // reads the 16 values that follow the last whole block (the n % 16 unused first draws, then the
      // first of the new ones), writing the last 16 outputs. float / double redraw in place.
      constexpr bool lowp = std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>;
      scalar_t* d = t.data<scalar_t>();
      std::vector<A> u(lowp ? n + 16 : n);
      for (int64_t i = 0; i < n; ++i) u[i] = uniform_real<A>(g, A(0), A(1));
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
        if constexpr (lowp) {
          for (int j = 0; j < 16; ++j) u[n + j] = uniform_real<A>(g, A(0), A(1));
          A* window = u.data() + n / 16 * 16;
          fill16(window);
          std::copy(window, window + 16, u.data() + n - 16);  // (overlapping: copy runs forward, dst < src)
        } else {
          A* tail = u.data() + n - 16;
          for (int j = 0; j < 16; ++j) tail[j] = uniform_real<A>(g, A(0), A(1));
          fill16(tail);
        }
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

// cauchy_: median + sigma tan(pi (u - 1/2)); log_normal_: exp of a double normal; geometric_:
// ceil(log(u) / log1p(-p)), every dtype but bool (torch's transforms, double math, one cast).
void k_cauchy(Tensor& t, double median, double sigma) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  AG_DISPATCH_FLOAT(t.dtype(), "cauchy_", [&] {
    for_elements<scalar_t>(t, [&](scalar_t& x) {
      const double u = uniform_real<double>(g, 0.0, 1.0);
      x = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(median + sigma * std::tan(M_PI * (u - 0.5))));
    });
  });
}

void k_log_normal(Tensor& t, double mean, double std) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  AG_DISPATCH_FLOAT(t.dtype(), "log_normal_", [&] {
    for_elements<scalar_t>(t, [&](scalar_t& x) { x = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(std::exp(normal_double(g, mean, std)))); });
  });
}

void k_geometric(Tensor& t, double p, double) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  const double lp = std::log1p(-p);
  AG_DISPATCH_ALL(t.dtype(), "geometric_", [&] {
    for_elements<scalar_t>(t, [&](scalar_t& x) {
      const double u = uniform_real<double>(g, 0.0, 1.0);
      x = static_cast<scalar_t>(static_cast<acc_t<scalar_t>>(std::ceil(std::log(u) / lp)));
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
  AG_DISPATCH_ALL_U(t.dtype(), "random_from_to", [&] {
    // torch's public wheels draw 64 bits from a range of 2**28 on, whatever the dtype (DistributionsHelper.h's
    // non-FBCODE branch: "allow approx 5% skew"); the 2**32 threshold with a dtype list is its FBCODE branch.
    const bool wide = range >= (uint64_t(1) << 28);
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
AG_REGISTER_KERNEL(cauchy, CPU, k_cauchy);
AG_REGISTER_KERNEL(log_normal, CPU, k_log_normal);
AG_REGISTER_KERNEL(geometric, CPU, k_geometric);
AG_REGISTER_KERNEL(multinomial, CPU, k_multinomial);

void manual_seed(uint64_t seed) { cpu_generator_manual_seed(&default_gen(), seed); }
uint64_t initial_seed() { return default_gen().seed; }

std::shared_ptr<CpuGenerator> cpu_generator_new() { return std::make_shared<CpuGenerator>(); }
CpuGenerator* cpu_generator_default() { return &default_gen(); }
CpuGenerator* cpu_generator_set_current(CpuGenerator* g) { CpuGenerator* prev = tls_current; tls_current = g; return prev; }

void cpu_generator_manual_seed(CpuGenerator* gp, uint64_t seed) {
  auto& g = *gp;
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.engine.seed(static_cast<uint32_t>(seed & 0xffffffffu));
  g.has_next_normal = false;
  g.has_next_float_normal = false;
  g.fresh = true;
}
uint64_t cpu_generator_initial_seed(CpuGenerator* g) { return g->seed; }

// torch's CPUGeneratorImplState (5056 bytes): THGeneratorState {uint64 the_initial_seed; int left;
// int seeded; uint64 next; uint64 state[624]; double normal_x, normal_y, normal_rho; int
// normal_is_valid;} then float next_float_normal_sample; bool is_next_float_normal_sample_valid.
// torch's mt19937 counts `left` down to a refill: left = 625 - p and next = p for libstdc++'s index p.
namespace {
struct LegacyPod {
  uint64_t the_initial_seed;
  int32_t left;
  int32_t seeded;
  uint64_t next;
  uint64_t state[624];
  double normal_x, normal_y, normal_rho;
  int32_t normal_is_valid;
};
struct StatePod {
  LegacyPod legacy;
  float next_float_normal_sample;
  bool is_next_float_normal_sample_valid;
};
static_assert(sizeof(LegacyPod) == 5048 && sizeof(StatePod) == 5056, "torch's CPU generator state layout");
}  // namespace

std::string cpu_generator_get_state(CpuGenerator* gp) {
  auto& g = *gp;
  std::lock_guard<std::mutex> lock(g.mu);
  std::stringstream ss;
  ss << g.engine;  // libstdc++: the 624 state words, then the index p
  StatePod pod;
  std::memset(&pod, 0, sizeof(pod));
  uint64_t p = 0;
  for (int i = 0; i < 624; ++i) ss >> pod.legacy.state[i];
  ss >> p;
  pod.legacy.the_initial_seed = g.seed;
  pod.legacy.left = static_cast<int32_t>(625 - p);
  pod.legacy.seeded = 1;
  pod.legacy.next = g.fresh ? 0 : p;
  pod.legacy.normal_is_valid = g.has_next_normal ? 1 : 0;
  pod.legacy.normal_y = g.has_next_normal ? g.next_normal : 0.0;
  pod.next_float_normal_sample = g.has_next_float_normal ? g.next_float_normal : 0.0f;
  pod.is_next_float_normal_sample_valid = g.has_next_float_normal;
  return std::string(reinterpret_cast<const char*>(&pod), sizeof(pod));
}

void cpu_generator_set_state(CpuGenerator* gp, const std::string& bytes) {
  const size_t n = bytes.size();
  AG_CHECK(n == sizeof(StatePod), "Expected a CPUGeneratorImplState of size ", sizeof(StatePod),
           " but found the input RNG state size to be ", n);
  StatePod pod;
  std::memset(&pod, 0, sizeof(pod));
  std::memcpy(&pod, bytes.data(), n);
  const auto& L = pod.legacy;
  AG_CHECK(L.seeded == 1 && L.left > 0 && L.left <= 624 && L.next <= 624, "Invalid mt19937 state");
  // libstdc++'s index p: left = 625 - p (a left of 1 means a refill before the next draw: p = 624)
  const uint64_t p = static_cast<uint64_t>(625 - L.left);
  std::stringstream ss;
  for (int i = 0; i < 624; ++i) ss << (L.state[i] & 0xffffffffu) << ' ';
  ss << p;
  auto& g = *gp;
  std::lock_guard<std::mutex> lock(g.mu);
  ss >> g.engine;
  g.seed = L.the_initial_seed;
  g.fresh = L.left == 1 && L.next == 0;
  g.has_next_normal = L.normal_is_valid != 0;
  g.next_normal = L.normal_y;
  g.has_next_float_normal = pod.is_next_float_normal_sample_valid;
  g.next_float_normal = pod.next_float_normal_sample;
}
// One 64-bit draw of the current generator.
uint64_t cpu_generator_random64() {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.random64();
}

// Note [Bernoulli draws]: torch's CPU bernoulli_(p) with a scalar p (dropout's noise.bernoulli_(1 - p))
// draws, element by element in order, a 53-bit double uniform from random64() and keeps u < p
// (bernoulli_distribution<double>). keep[i] = that draw for n elements. (On Intel CPUs torch built with
// MKL takes MKL's MCG31 stream instead; ampgrad follows the portable path, see issue 13's note.)
void cpu_generator_bernoulli(double p, uint8_t* keep, int64_t n) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  for (int64_t i = 0; i < n; ++i) keep[i] = uniform_real<double>(g, 0.0, 1.0) < p;
}

}  // namespace ampgrad
