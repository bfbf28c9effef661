// The autograd profiler's recorder: while it is enabled, kernels, backward nodes and
// record_function ranges append timed events to a per-thread buffer; while it is disabled every
// hook costs one predictable branch on a relaxed atomic load (Note [Profiled kernels]).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>
#include "kernels/profiler_hooks.h"
#include "ops/op_list.h"

namespace ampgrad::autograd::profiler {

// The session flag, the kernel stack and the shapes of kernel events are the kernel table's side of the
// profiler (kernels/profiler_hooks.h, Note [Profiled kernels]), implemented in profiler.cpp.
using profiler_hooks::g_enabled;
using profiler_hooks::enabled;

enum class Kind : uint8_t { Op, Function, Backward };  // a kernel / record_function / autograd node

using profiler_hooks::Shapes;

struct Event {
  std::string name;
  Kind kind = Kind::Op;
  int64_t start_ns = 0, end_ns = 0;  // steady_clock
  int64_t parent = -1;               // index of the enclosing event in the list stop() returns
  uint64_t thread = 0;               // OS thread id
  int64_t self_bytes = 0;            // allocated while this was the innermost event
  int64_t flops = 0;
  int64_t seq = -1;                  // backward nodes: the node's sequence_nr
  Shapes shapes;
  std::string stack;                 // record_function ranges under with_stack: "\n"-joined frames
};

struct Config {
  bool record_shapes = false, with_flops = false, profile_memory = false;
  bool nvtx = false;  // emit_nvtx: every range is also an NVTX range (CUDA builds)
};

// Throws RuntimeError when a session is already running. Returns the session's start (ns).
int64_t start(const Config& c);
// Ends the session: events still open are closed now; returns every thread's events, each
// thread's in the order they opened.
std::vector<Event> stop();
const Config& config();

// A handle for close(), or -1 when disabled.
int64_t open(std::string name, Kind kind, int64_t seq = -1, std::string stack = {});
void close(int64_t handle);
void note_alloc(size_t nbytes);
// Input shapes of the innermost open event; flops are estimated from them for `op`.
void set_shapes(int64_t handle, Op op, Shapes&& shapes);

struct RecordScope {
  int64_t handle = -1;
  explicit RecordScope(const char* name, Kind kind = Kind::Function) {
    if (enabled()) handle = open(name, kind);
  }
  RecordScope(std::string name, Kind kind, int64_t seq) { if (enabled()) handle = open(std::move(name), kind, seq); }
  ~RecordScope() { if (handle >= 0) close(handle); }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;
};

}  // namespace ampgrad::autograd::profiler

