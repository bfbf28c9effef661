// Thread-local grad mode and inference mode.
#pragma once

namespace ampgrad::autograd {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool on);
};
struct InferenceMode {
  static bool is_enabled();
  static void set_enabled(bool on);
};
struct AutoGradMode {
  bool prev;
  explicit AutoGradMode(bool on) : prev(GradMode::is_enabled()) { GradMode::set_enabled(on); }
  ~AutoGradMode() { GradMode::set_enabled(prev); }
};

}  // namespace ampgrad::autograd
