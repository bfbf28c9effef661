// Thread-local grad and inference modes.
#include "autograd/grad_mode.h"
#include "core/autograd_state.h"

namespace ampgrad::autograd {

namespace {
thread_local bool t_grad_enabled = true;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool on) { t_grad_enabled = on; }
bool InferenceMode::is_enabled() { return inference_mode_enabled(); }  // (core/autograd_state.h)
void InferenceMode::set_enabled(bool on) { set_inference_mode_enabled(on); }

}  // namespace ampgrad::autograd
