#pragma once
// Reading a Layout from JSON, strictly (config/object_reader.hpp): unknown keys are errors with a did-you-mean,
// and every problem of the object is added to the Diagnostics sink in one pass.
//
// Keys: the snake_case keys of layout/layout_fields.hpp, each also under its Megatron-LM name; giving both
// spellings of one field is an error. Required: gpus, gbs, seq. Defaults: tp pp cp ep mbs 1, etp = tp,
// vpp = stages/pp of pp_layout when given (else 1), precision bf16, dispatcher alltoall, recompute none,
// cuda_graph none, a2a_overlap false, mtp 0, distributed_optimizer true, fsdp false,
// fsdp_reshard_after_forward true, grad_reduce_dtype and
// optimizer_moment_dtype fp32, sequence_parallel unset (on when tp > 1), align_param_gather unset (on with the
// interleaved schedule).
// Megatron spellings accept Megatron's value shapes: virtual_pipeline_model_parallel_size may be null
// (no interleaving); recompute is recompute_granularity ("selective" | "full" | null) with recompute_modules
// (array), recompute_method and recompute_num_layers; grad_reduce_in_bf16 is a boolean.
// "source" and "notes" (strings) are accepted and ignored.
// Only the syntax of pp_layout is checked here; whether it fits the model is check_feasibility()'s job (exit 3).
#include <string>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "layout/layout.hpp"

namespace moesim::layout {

// Reads the layout keys of `reader`'s object. The caller may read other keys from the same reader first
// (read_case does, for "model" and "system"); the reader reports the remaining unknown keys when it finishes.
Layout read_layout_fields(config::ObjectReader& reader);

// A layout object (model/system keys are unknown here).
Layout read_layout(const config::Json& json, const std::string& file, Diagnostics& diags);

// A case: a layout plus the catalog names of the model and system it runs, as in layout/default_case.hpp.
// "model" and "system" are optional strings (empty when absent); the caller resolves them in the catalog.
struct CaseSpec {
  std::string model;
  std::string system;
  Layout layout;
};
CaseSpec read_case(const config::Json& json, const std::string& file, Diagnostics& diags);

}  // namespace moesim::layout
