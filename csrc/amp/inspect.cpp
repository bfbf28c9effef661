// The AMP inspector's kernel watch (Note [Watched kernels] in kernels/profiler_hooks.h): per-op kernel
// counts by dtype and the first forward kernel that turned finite inputs into an inf/NaN. State is per
// thread; python/ampgrad/amp/debug.py drains it at every module hook (so a record gets the module path
// that was innermost when the kernel ran) and at the end.
#include "amp/inspect.h"
#include <cmath>
#include <map>
#include "autograd/engine.h"
#include "kernels/profiler_hooks.h"

namespace ampgrad::profiler_hooks {
std::atomic<bool> g_watch{false};
}  // namespace ampgrad::profiler_hooks

namespace ampgrad::amp::inspect {
namespace hooks = profiler_hooks;

namespace {

struct Scan {
  double max_abs = 0;
  bool nan = false, inf = false;
  bool finite() const { return !nan && !inf; }
};

// The innermost dimension in one loop (max |x| of the finite values; a second look only when some
// value is not finite), the outer ones recursively.
template <typename T> void scan_row(const char* p, int64_t n, int64_t st, Scan& s) {
  float m = 0.f;
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(static_cast<float>(*reinterpret_cast<const T*>(p + i * st)));
    bad |= !(a <= 3.4028234663852886e38f);
    m = a > m && a <= 3.4028234663852886e38f ? a : m;
  }
  if (m > s.max_abs) s.max_abs = m;
  if (bad)
    for (int64_t i = 0; i < n; ++i) {
      const float x = static_cast<float>(*reinterpret_cast<const T*>(p + i * st));
      if (std::isnan(x)) s.nan = true;
      else if (std::isinf(x)) s.inf = true;
    }
}
template <> void scan_row<double>(const char* p, int64_t n, int64_t st, Scan& s) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = *reinterpret_cast<const double*>(p + i * st);
    if (std::isnan(x)) s.nan = true;
    else if (std::isinf(x)) s.inf = true;
    else if (std::fabs(x) > s.max_abs) s.max_abs = std::fabs(x);
  }
}
template <typename T> void scan_rec(const hooks::WatchView& v, size_t d, const char* p, Scan& s) {
  if (v.shape.empty()) return scan_row<T>(p, 1, 0, s);
  if (d + 1 == v.shape.size()) return scan_row<T>(p, v.shape[d], v.strides[d], s);
  for (int64_t i = 0; i < v.shape[d]; ++i) scan_rec<T>(v, d + 1, p + i * v.strides[d], s);
}

// Floating operands only (integers and bools are always finite); CPU kernels only (the scan reads memory).
bool scannable(const hooks::WatchView& v) {
  switch (v.dtype) {
    case ScalarType::Float32: case ScalarType::Float64: case ScalarType::Float16: case ScalarType::BFloat16: return true;
    default: return false;
  }
}
Scan scan(const hooks::WatchView& v) {
  Scan s;
  for (int64_t n : v.shape)
    if (n == 0) return s;
  switch (v.dtype) {
    case ScalarType::Float32: scan_rec<float>(v, 0, v.data, s); break;
    case ScalarType::Float64: scan_rec<double>(v, 0, v.data, s); break;
    case ScalarType::Float16: scan_rec<Half>(v, 0, v.data, s); break;
    case ScalarType::BFloat16: scan_rec<BFloat16>(v, 0, v.data, s); break;
    default: break;
  }
  return s;
}

struct Pending {
  bool scanned = false, inputs_finite = true;
  std::vector<std::pair<int8_t, double>> inputs;  // dtype, max |x| (inf: some value not finite; NaN: not floating)
  std::vector<bool> done;                         // input i scanned
};

void scan_input(const hooks::WatchView& v, Pending& p, size_t i) {
  p.done[i] = true;
  if (!scannable(v)) {
    p.inputs[i] = {static_cast<int8_t>(v.dtype), NAN};
    return;
  }
  Scan s = scan(v);
  p.inputs_finite &= s.finite();
  p.inputs[i] = {static_cast<int8_t>(v.dtype), s.finite() ? s.max_abs : INFINITY};
}

struct State {
  std::map<std::pair<int16_t, int8_t>, int64_t> counts;  // (op, dtype) -> forward kernel calls
  bool have_event = false;
  WatchEvent event;
  int depth = 0;
  std::vector<Pending> stack;
};
thread_local State t_state;

// Kernels whose output is the caller's value (fill writes the scalar it is given: full(-inf) is a mask,
// not an overflow).
bool intentional(Op op) { return op == Op::fill; }

}  // namespace

std::atomic<bool> g_scan{true};

bool take_watch(std::vector<WatchCount>& counts, WatchEvent& event) {
  State& st = t_state;
  for (auto& [k, n] : st.counts) counts.push_back({k.first, k.second, n});
  st.counts.clear();
  bool had = st.have_event && !st.event.taken;
  if (had) {
    event = st.event;
    st.event.taken = true;
  }
  return had;
}

void reset_watch() { t_state = State{}; }

}  // namespace ampgrad::amp::inspect

namespace ampgrad::profiler_hooks {
using namespace amp::inspect;

int64_t watch_before(Op op, const WatchOperands& ops, bool cpu) {
  State& st = t_state;
  if (st.depth++ > 0 || autograd::current_graph_task_id() >= 0) return -1;  // nested, or the backward pass
  const hooks::WatchView* first = !ops.out.empty() ? &ops.out[0] : !ops.in.empty() ? &ops.in[0] : nullptr;
  ++st.counts[{static_cast<int16_t>(op), first ? static_cast<int8_t>(first->dtype) : int8_t(-1)}];
  Pending p;
  if (cpu && !st.have_event && g_scan.load(std::memory_order_relaxed) && !intentional(op)) {
    // Outputs are scanned after the call; inputs only where an output overwrites them (in place), now, and
    // the others after the call if an output is not finite (they are unchanged then): every activation is
    // read once per kernel that makes it, not once per kernel that reads it.
    p.scanned = true;
    p.inputs.assign(ops.in.size(), {int8_t(-1), NAN});
    p.done.assign(ops.in.size(), false);
    for (size_t i = 0; i < ops.in.size(); ++i) {
      const auto& v = ops.in[i];
      bool aliased = false;
      for (auto& o : ops.out) aliased |= o.data == v.data;
      if (aliased) scan_input(v, p, i);
    }
  }
  st.stack.push_back(std::move(p));
  return static_cast<int64_t>(st.stack.size()) - 1;
}

void watch_after(int64_t token, Op op, const WatchOperands& ops, bool ok) {
  State& st = t_state;
  --st.depth;
  if (token < 0) return;
  Pending p = std::move(st.stack.back());
  st.stack.pop_back();
  if (!ok || !p.scanned || !p.inputs_finite || st.have_event) return;
  for (auto& v : ops.out) {
    if (!scannable(v)) continue;
    Scan s = scan(v);
    if (s.finite()) continue;
    for (size_t i = 0; i < ops.in.size(); ++i)
      if (!p.done[i]) scan_input(ops.in[i], p, i);
    if (!p.inputs_finite) return;  // not made here: it came in
    st.have_event = true;
    st.event = WatchEvent{static_cast<int16_t>(op), static_cast<int8_t>(v.dtype), s.nan, s.inf, p.inputs, false};
    return;
  }
}

}  // namespace ampgrad::profiler_hooks
