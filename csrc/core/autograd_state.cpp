// The thread-local inference mode flag (core/autograd_state.h).
#include "core/autograd_state.h"

namespace ampgrad {

namespace {
thread_local bool t_inference = false;
}  // namespace

bool inference_mode_enabled() { return t_inference; }
void set_inference_mode_enabled(bool on) { t_inference = on; }

}  // namespace ampgrad
