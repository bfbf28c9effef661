// The AMP inspector's seam (python/ampgrad/amp/debug.py): while it is on, the autocast gate's cast
// step (apply, Note [Autocast gate]) appends one record per gated call to a per-thread list; while
// it is off the gate pays one relaxed load, and only under autocast (apply runs only then).
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

namespace ampgrad::amp::inspect {

struct Record {
  int16_t op;         // Op
  int8_t device;      // 0 = cpu, 1 = cuda
  int8_t policy;      // AmpPolicy
  int8_t run_dtype;   // ScalarType the op runs in (first eligible argument after the cast), -1 if none
  int16_t n_tensors;  // tensor arguments seen by the gate
  int16_t n_eligible; // floating, not float64, on the autocast device
  int16_t n_cast;     // arguments whose dtype the gate changed
  int16_t n_cache_hits;
};

// The kernel watch (Note [Watched kernels], amp/inspect.cpp): forward kernel counts and the first kernel
// that turned finite inputs into inf/NaN, drained by the inspector.
struct WatchCount {
  int16_t op;
  int8_t dtype;  // ScalarType of the first output (else the first input), -1 if none
  int64_t n;
};
struct WatchEvent {
  int16_t op;
  int8_t out_dtype;
  bool nan, inf;
  std::vector<std::pair<int8_t, double>> inputs;  // dtype, max |x| (NaN when not floating)
  bool taken;
};
// Drains the calling thread's counts; returns true and fills `event` the first time after the event.
bool take_watch(std::vector<WatchCount>& counts, WatchEvent& event);
void reset_watch();
// Scanning for inf/NaN (the watch counts kernels either way).
extern std::atomic<bool> g_scan;

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }
std::vector<Record>& records();  // the calling thread's

}  // namespace ampgrad::amp::inspect
