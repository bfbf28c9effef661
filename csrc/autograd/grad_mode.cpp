// Thread-local grad and inference modes.
#include "autograd/grad_mode.h"

namespace ampgrad::autograd {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference = false;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool on) { t_grad_enabled = on; }
bool InferenceMode::is_enabled() { return t_inference; }
void InferenceMode::set_enabled(bool on) { t_inference = on; }

}  // namespace ampgrad::autograd
