// Anomaly mode: forward traces on nodes, failure reports and the NaN check of backward outputs.
#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "ops/ops.h"

namespace ampgrad::autograd {

AnomalyHooks anomaly_hooks;

namespace {
thread_local std::shared_ptr<Node> t_running;
}

AnomalyParentGuard::AnomalyParentGuard(std::shared_ptr<Node> running) : prev(std::move(t_running)) {
  t_running = std::move(running);
}
AnomalyParentGuard::~AnomalyParentGuard() { t_running = std::move(prev); }

void anomaly_store(Node& node) {
  if (anomaly_hooks.store) anomaly_hooks.store(node, t_running);
}

void anomaly_report(const Node& node) {
  if (!AnomalyMode::is_enabled() || !anomaly_hooks.report) return;
  try {
    anomaly_hooks.report(node);
  } catch (...) {  // the report must not replace the error being reported
  }
}

void anomaly_check_nan(const Node& node, const variable_list& outputs) {
  if (!AnomalyMode::is_enabled() || !AnomalyMode::should_check_nan()) return;
  AutoGradMode off(false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    if (!o.defined() || !is_floating(o.dtype())) continue;
    AG_CHECK(item_double(any(isnan(o), std::nullopt, false)) == 0, "Function '", node.name(), "' returned nan values in its ", i, "th output.");
  }
}

}  // namespace ampgrad::autograd
