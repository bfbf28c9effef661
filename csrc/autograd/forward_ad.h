// Forward-mode AD: the dual level, tangents on tensors, and the helpers op front ends use to
// compute an output's tangent next to their backward (Note [Forward AD]).
#pragma once
#include "autograd/grad_mode.h"
#include "core/tensor.h"

namespace ampgrad::autograd::fw {

// Note [Forward AD]: one dual level at a time, process-wide (torch's rule). A tangent lives in the
// primal's AutogradMeta with the generation of the level that set it; exiting the level clears
// every tangent set under it. Ops test on() first, so with no level open forward AD costs one
// predictable branch and no allocation. Rules run with forward AD off (t_off) and read primals,
// so a rule's own ops never compute tangents of tangents.
extern bool g_level_open;
extern thread_local bool t_off;
// Inference mode turns forward AD off as well (torch's rule); only consulted with a level open.
inline bool on() { return g_level_open && !t_off && !InferenceMode::is_enabled(); }

int64_t enter_level();
void exit_level(int64_t level);
int64_t current_level();  // -1 when none is open

Tensor tangent(const Tensor& t);  // undefined when t has none at the open level, or forward AD is off
void set_tangent(const Tensor& t, const Tensor& tangent);

// Forward AD off for a scope (jvp rules, custom Function forwards).
struct Disable {
  bool prev;
  Disable() : prev(t_off) { t_off = true; }
  ~Disable() { t_off = prev; }
  Disable(const Disable&) = delete;
  Disable& operator=(const Disable&) = delete;
};

// Gives `out` the tangent `r`, cast to out's dtype and expanded to its shape.
void set_result_tangent(const Tensor& out, Tensor r);
// self was overwritten in place by a value with tangent `r` (undefined: a constant). Writes into
// self's tangent when it has one, so views and bases that share it see the change.
void update_inplace(const Tensor& self, const Tensor& r);
// A tangent laid out with `like`'s strides (view rules address it with the primal's geometry).
Tensor with_layout(const Tensor& t, const Tensor& like);

}  // namespace ampgrad::autograd::fw
