#pragma once
// The built-in case used when a command is given no layout: DeepSeek-V3 on 256 GB300 NVL72 GPUs with the
// Megatron-Bridge 26.06 recipe of groundtruth.csv row GT001 (TP1 PP2 VPP8 EP32 ETP1 CP1, MBS1 GBS4096,
// seq 4096, MXFP8, HybridEP, no recompute, MTP 1, full-iteration CUDA graph, EP A2A overlap,
// pp_layout "Et*4|(t*4|)*14tmL", BF16 gradient reduction and BF16 Adam moments per that row's notes, TE's fused
// grouped MLP and TE 2.16 per its recipe and container).
// Read it with layout/layout_loader.hpp read_case(); "model" and "system" are catalog names.
#include <string_view>

#include "config/document.hpp"

namespace moesim::layout {

// The case as JSON text (reported as file "<built-in>").
std::string_view default_case_text();

// The same, parsed.
config::Json default_case_json();

}  // namespace moesim::layout
