// Engine::execute: the backward pass over the graph from some roots.
#pragma once
#include "autograd/node.h"

namespace ampgrad::autograd {

// Runs backward from the `roots` edges seeded with `grad_outputs`. With `inputs` empty every leaf
// reached accumulates into .grad; otherwise the gradients reaching `inputs` are returned (and,
// when `accumulate_into_inputs`, accumulated into their .grad instead). An input is a tensor, or
// when inputs[i] is undefined, the edge input_edges[i] (autograd.graph.GradientEdge).
variable_list run_backward(const std::vector<Edge>& roots, const variable_list& grad_outputs, bool keep_graph,
                           bool create_graph, const variable_list& inputs, const std::vector<Edge>& input_edges,
                           bool allow_unused, bool accumulate_into_inputs);

// The backward pass running on this thread (torch's _current_graph_task_id; -1 outside backward),
// and whether it will run `node` (torch's _will_engine_execute_node; raises outside backward).
int64_t current_graph_task_id();
bool will_engine_execute_node(const Node* node);

}  // namespace ampgrad::autograd
