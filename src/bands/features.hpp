#pragma once
// The named features an error band matches on: what the bundled tables' errors are seen to depend on (GPU
// generation, scale-up domain, dense or MoE, GPU count, precision class, dispatcher, framework, and whether the
// row is a published recipe or an off-recipe layout). A case and a table row are described the same way, so a
// case's band is built from the errors on rows like it (band.hpp).
#include <array>
#include <string>
#include <string_view>

#include "predict/predict_step.hpp"

namespace moesim::bands {

inline constexpr std::array<std::string_view, 8> kFeatureNames{"generation", "scale_up",   "kind",      "gpus",
                                                               "precision",  "dispatcher", "framework", "row_kind"};

struct Features {
  std::array<std::string, kFeatureNames.size()> values;
  // How many features two descriptions share; an empty value matches nothing (a user's case has no row kind).
  int matches(const Features& other) const;
};

// 1 node, 2-64, 65-512, 513-2048, 2049+ GPUs.
std::string gpu_count_bucket(int gpus);
// The framework column of a table folded to a family: megatron (Megatron-LM / MCore / NeMo / Megatron-Bridge, one
// stack), automodel (NeMo AutoModel, PyTorch FSDP2), torchtitan, maxtext, other.
std::string framework_family(std::string_view framework_column);

// A case's features. `framework` is the table's framework column ("" for a user's case: Megatron-LM, whose flags
// moesim takes), `row_kind` "recipe", "off-recipe", or "" (a user's case: not known, so it matches neither).
Features features_of(const predict::Case& c, std::string_view framework, std::string row_kind);

}  // namespace moesim::bands
