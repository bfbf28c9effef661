// Anomaly mode (torch.autograd.detect_anomaly): nodes remember the forward call that made them,
// backward reports that trace for the node that failed and checks node outputs for NaN.
#pragma once
#include "autograd/node.h"

namespace ampgrad::autograd {

// Global, as torch's AnomalyMode is (not thread-local).
struct AnomalyMode {
  static bool is_enabled() { return enabled_; }
  static bool should_check_nan() { return check_nan_; }
  static void set_enabled(bool on, bool check_nan = true) { enabled_ = on; check_nan_ = check_nan; }
  static inline bool enabled_ = false;
  static inline bool check_nan_ = true;
};

// The Python side of anomaly mode, installed by python_function.cpp (the only code that calls
// Python): store the current Python stack (and the parent node, if any) in the node's metadata,
// and warn with a failing node's stored traces.
struct AnomalyHooks {
  void (*store)(Node& node, const std::shared_ptr<Node>& parent) = nullptr;
  void (*report)(const Node& node) = nullptr;
};
extern AnomalyHooks anomaly_hooks;

void anomaly_store(Node& node);
// Node creation: a single flag check when anomaly mode is off.
inline void anomaly_on_create(Node& node) {
  if (AnomalyMode::enabled_) anomaly_store(node);
}
void anomaly_report(const Node& node);
// Raises torch's "returned nan values" error when check_nan is on and an output has a NaN.
void anomaly_check_nan(const Node& node, const variable_list& outputs);

// The node whose backward runs now; nodes made meanwhile (create_graph) record it as their
// parent, so a failure in double backward also shows the first backward's forward trace.
struct AnomalyParentGuard {
  std::shared_ptr<Node> prev;
  explicit AnomalyParentGuard(std::shared_ptr<Node> running);
  ~AnomalyParentGuard();
};

}  // namespace ampgrad::autograd
