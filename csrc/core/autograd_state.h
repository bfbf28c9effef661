// The thread-local autograd state that core itself needs (torch keeps it in c10/core too): whether
// inference mode is on (Note [Inference tensors]). autograd::InferenceMode reads and sets it.
#pragma once

namespace ampgrad {

bool inference_mode_enabled();
void set_inference_mode_enabled(bool on);

}  // namespace ampgrad
