// The profiler's per-thread event buffers, the session start/stop, and FLOP estimates.
#include "autograd/profiler.h"
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <unistd.h>
#include <sys/syscall.h>
#include "core/check.h"
#include "core/storage.h"

#include "kernels/nvtx.h"

namespace ampgrad::autograd::profiler {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct ThreadBuffer {
  std::mutex mu;  // uncontended except against stop() collecting from another thread
  uint64_t tid = 0;
  uint32_t session = 0;  // the session `events` belong to
  std::vector<Event> events;
  std::vector<int64_t> open;  // indices into events, innermost last
  int64_t pending_bytes = 0;  // allocated since the last event boundary (Note [Profiled memory])
};

std::mutex g_mu;  // guards the globals below
std::vector<std::shared_ptr<ThreadBuffer>> g_buffers;
std::atomic<uint32_t> g_session{0};
Config g_config;

ThreadBuffer& local() {
  thread_local std::shared_ptr<ThreadBuffer> buf = [] {
    auto b = std::make_shared<ThreadBuffer>();
    b->tid = static_cast<uint64_t>(::syscall(SYS_gettid));
    std::lock_guard<std::mutex> g(g_mu);
    g_buffers.push_back(b);
    return b;
  }();
  return *buf;
}

// Called with b.mu held: a buffer left over from an earlier session starts empty.
void sync_session(ThreadBuffer& b) {
  uint32_t s = g_session.load(std::memory_order_acquire);
  if (b.session == s) return;
  b.session = s;
  b.events.clear();
  b.open.clear();
  b.pending_bytes = 0;
}

int64_t make_handle(uint32_t session, size_t idx) { return (static_cast<int64_t>(session) << 32) | static_cast<int64_t>(idx); }

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// torch's estimates: 2mnk for matrix products (every GEMM lands on Op::mm, or Op::addmm for the
// bias-epilogue kernel, whose shapes start with the same two operands), numel for add / mul.
int64_t estimate_flops(Op op, const Shapes& s) {
  if ((op == Op::mm || op == Op::addmm) && s.size() >= 2 && !s[0].empty() && !s[1].empty()) return 2 * numel(s[0]) * s[1].back();
  if ((op == Op::add || op == Op::mul) && !s.empty()) return numel(s[0]);
  return 0;
}

}  // namespace

int64_t start(const Config& c) {
  std::lock_guard<std::mutex> g(g_mu);
  AG_CHECK(!g_enabled.load(), "Profiler is already enabled on this thread");
  g_config = c;
  g_session.fetch_add(1, std::memory_order_acq_rel);
  int64_t t0 = now_ns();
  g_enabled.store(true);
  set_alloc_hook(&note_alloc);  // Note [Allocation hook]
  return t0;
}

std::vector<Event> stop() {
  int64_t t_end = now_ns();
  g_enabled.store(false);
  set_alloc_hook(nullptr);
  std::lock_guard<std::mutex> g(g_mu);
  uint32_t s = g_session.load();
  std::vector<Event> out;
  for (auto& b : g_buffers) {
    std::lock_guard<std::mutex> bg(b->mu);
    if (b->session != s) continue;
    for (int64_t i : b->open) b->events[i].end_ns = t_end;
    int64_t base = static_cast<int64_t>(out.size());
    for (auto& e : b->events) {
      e.thread = b->tid;
      if (e.parent >= 0) e.parent += base;
      out.push_back(std::move(e));
    }
    b->events.clear();
    b->open.clear();
    b->pending_bytes = 0;
  }
  // Buffers of threads that have exited are held only here.
  g_buffers.erase(std::remove_if(g_buffers.begin(), g_buffers.end(), [](auto& b) { return b.use_count() == 1; }), g_buffers.end());
  return out;
}

const Config& config() { return g_config; }

namespace {
// Note [NVTX ranges]: under emit_nvtx each profiler range is also pushed as an NVTX range, named as
// torch names them ("MulBackward0, seq = 12"), so Nsight Systems lines them up with the kernels.
// (kernels/nvtx.h: NVTX in CUDA builds, nothing in the stub.)
void nvtx_push(const std::string& name, int64_t seq) {
  cuda::nvtx_range_push((seq >= 0 ? name + ", seq = " + std::to_string(seq) : name).c_str());
}
void nvtx_pop() { cuda::nvtx_range_pop(); }
}  // namespace

int64_t open(std::string name, Kind kind, int64_t seq, std::string stack) {
  if (g_config.nvtx) nvtx_push(name, seq);
  ThreadBuffer& b = local();
  std::lock_guard<std::mutex> g(b.mu);
  sync_session(b);
  size_t idx = b.events.size();
  Event& e = b.events.emplace_back();
  e.name = std::move(name);
  e.kind = kind;
  e.seq = seq;
  e.stack = std::move(stack);
  e.parent = b.open.empty() ? -1 : b.open.back();
  // Note [Profiled memory]: an op allocates its output just before its kernel runs, so a kernel
  // claims what was allocated since the last event boundary; any other range leaves it to its
  // enclosing event.
  if (kind == Kind::Op) e.self_bytes = b.pending_bytes;
  else if (e.parent >= 0) b.events[e.parent].self_bytes += b.pending_bytes;
  b.pending_bytes = 0;
  b.open.push_back(static_cast<int64_t>(idx));
  e.start_ns = now_ns();
  return make_handle(b.session, idx);
}

void close(int64_t handle) {
  int64_t t = now_ns();
  ThreadBuffer& b = local();
  std::lock_guard<std::mutex> g(b.mu);
  size_t idx = static_cast<size_t>(handle & 0xffffffff);
  if (static_cast<uint32_t>(handle >> 32) != b.session || idx >= b.events.size()) return;  // a finished session's
  if (g_config.nvtx) nvtx_pop();
  Event& e = b.events[idx];
  e.end_ns = t;
  e.self_bytes += b.pending_bytes;
  b.pending_bytes = 0;
  // Ranges close innermost first, except record_function handles closed out of order from Python.
  for (size_t i = b.open.size(); i-- > 0;)
    if (b.open[i] == static_cast<int64_t>(idx)) { b.open.erase(b.open.begin() + static_cast<std::ptrdiff_t>(i)); break; }
}

void note_alloc(size_t nbytes) {
  if (!g_config.profile_memory) return;
  ThreadBuffer& b = local();
  std::lock_guard<std::mutex> g(b.mu);
  sync_session(b);
  b.pending_bytes += static_cast<int64_t>(nbytes);
}

void set_shapes(int64_t handle, Op op, Shapes&& shapes) {
  ThreadBuffer& b = local();
  std::lock_guard<std::mutex> g(b.mu);
  size_t idx = static_cast<size_t>(handle & 0xffffffff);
  if (static_cast<uint32_t>(handle >> 32) != b.session || idx >= b.events.size()) return;
  Event& e = b.events[idx];
  if (g_config.with_flops) e.flops = estimate_flops(op, shapes);
  if (g_config.record_shapes) e.shapes = std::move(shapes);
}

}  // namespace ampgrad::autograd::profiler

// The kernel table's side (kernels/profiler_hooks.h, Note [Profiled kernels]).
namespace ampgrad::profiler_hooks {

std::atomic<bool> g_enabled{false};


int64_t open_kernel(Op op) {
  namespace prof = autograd::profiler;
  return enabled() ? prof::open(std::string("aten::") + op_name(op), prof::Kind::Op, -1) : -1;
}
void close_kernel(int64_t handle) { autograd::profiler::close(handle); }
bool wants_shapes() { return autograd::profiler::config().record_shapes || autograd::profiler::config().with_flops; }
void set_shapes(int64_t handle, Op op, Shapes&& shapes) { autograd::profiler::set_shapes(handle, op, std::move(shapes)); }

}  // namespace ampgrad::profiler_hooks
