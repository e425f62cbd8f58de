#include "layout/default_case.hpp"

namespace moesim::layout {

std::string_view default_case_text() {
  // Source: data/measurements/groundtruth.csv row GT001 (1648 TFLOPS/GPU), groundtruth.md §3.1 and §6 (the
  // 26.06 GB300 recipes run FP8 attention); Megatron-Bridge scripts/performance/configs/deepseek/
  // deepseek_workload_base_configs.py @8f341b04f DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V1
  // cutedsl_fused_grouped_mlp=True (TE's fused grouped MLP) and the 26.06 container's TE 2.16.
  static constexpr std::string_view text = R"({
  "source": "groundtruth.csv GT001: Megatron-Bridge 26.06 DeepSeek-V3 recipe on 256 GB300",
  "model": "deepseek-v3",
  "system": "gb300-nvl72",
  "gpus": 256,
  "tp": 1,
  "pp": 2,
  "vpp": 8,
  "cp": 1,
  "ep": 32,
  "etp": 1,
  "mbs": 1,
  "gbs": 4096,
  "seq": 4096,
  "precision": "mxfp8",
  "dispatcher": "hybridep",
  "recompute": "none",
  "mtp": 1,
  "cuda_graph": "full",
  "a2a_overlap": true,
  "grouped_gemm": "fused-mlp",
  "te_version": "2.16",
  "pp_layout": "Et*4|(t*4|)*14tmL",
  "grad_reduce_dtype": "bf16",
  "optimizer_moment_dtype": "bf16",
  "fp8_attention": true
})";
  return text;
}

config::Json default_case_json() { return config::Json::parse(default_case_text()); }

}  // namespace moesim::layout
