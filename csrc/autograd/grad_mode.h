// Thread-local grad mode and inference mode.
#pragma once

namespace ampgrad { class Tensor; }

namespace ampgrad::autograd {

// Note [Mutation hook]: allow_mutation_on_saved_tensors must clone a saved tensor before an
// in-place op overwrites it, so every in-place op calls before_mutation(self) before writing
// (torch does this in a dispatch mode). Unused: one null check.
inline void (*mutation_hook)(const Tensor&) = nullptr;
inline void before_mutation(const Tensor& t) {
  if (mutation_hook) mutation_hook(t);
}

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
