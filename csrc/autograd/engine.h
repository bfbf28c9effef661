// Engine::execute: the backward pass over the graph from some roots.
#pragma once
#include "autograd/node.h"

namespace ampgrad::autograd {

// Runs backward from `roots` seeded with `grad_outputs`. With `inputs` empty every leaf reached
// accumulates into .grad; otherwise the gradients reaching `inputs` are returned (and, when
// `accumulate_into_inputs`, accumulated into their .grad instead).
variable_list run_backward(const variable_list& roots, const variable_list& grad_outputs, bool keep_graph,
                           bool create_graph, const variable_list& inputs, bool allow_unused,
                           bool accumulate_into_inputs);

// Set by anomaly mode (issue: autograd extras); called when a node's backward raises.
extern void (*anomaly_report_hook)(const Node&);

}  // namespace ampgrad::autograd
