#pragma once
// Shared by the layout tests: the model facts of two catalog models and the message of an infeasible layout.
#include <string>

#include <doctest/doctest.h>

#include "core/error.hpp"
#include "layout/feasibility.hpp"

namespace moesim::layout::test {

// DeepSeek-V3: 61 layers, 256 experts, 128 heads (MLA: as many query groups), one MTP layer.
inline ModelFacts deepseek_v3() {
  ModelFacts f;
  f.num_layers = 61;
  f.num_experts = 256;
  f.num_attention_heads = 128;
  f.num_query_groups = 128;
  f.mtp_layers_available = 1;
  return f;
}

// Qwen3-30B-A3B (groundtruth.md §2): 48 layers, 32 q / 4 kv heads, 128 experts.
inline ModelFacts qwen3_30b() {
  ModelFacts f;
  f.num_layers = 48;
  f.num_experts = 128;
  f.num_attention_heads = 32;
  f.num_query_groups = 4;
  return f;
}

// What `check()` throws as InfeasibleError (exit 3), or "(feasible)" when it does not throw.
template <class Check>
std::string infeasible_reason(Check&& check) {
  try {
    check();
  } catch (const InfeasibleError& e) {
    CHECK(static_cast<int>(e.code()) == 3);
    return e.what();
  }
  return "(feasible)";
}

}  // namespace moesim::layout::test
