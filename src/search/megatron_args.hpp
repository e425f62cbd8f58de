#pragma once
// megatron_args: a layout as the Megatron-LM command-line arguments that run it, ready to paste (flag names of
// Megatron-LM's arguments.py as documented for Megatron Core 0.15+: --cuda-graph-impl / --cuda-graph-modules
// (docs.nvidia.com/megatron-core developer guide, "CUDA Graph"), the flex dispatcher with
// --moe-flex-dispatcher-backend (Megatron-Bridge flex_dispatcher_backend), --overlap-moe-expert-parallel-comm).
// Model-shape arguments (layers, hidden size...) are the model's, not the layout's, and are left out.
#include <string>

#include "layout/layout.hpp"

namespace moesim::search {

std::string megatron_args(const layout::Layout& l);

}  // namespace moesim::search
