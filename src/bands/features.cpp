#include "bands/features.hpp"

#include <algorithm>
#include <cctype>
#include "core/text.hpp"

namespace moesim::bands {
namespace {

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

int Features::matches(const Features& other) const {
  int n = 0;
  for (std::size_t i = 0; i < values.size(); ++i) n += !values[i].empty() && values[i] == other.values[i];
  return n;
}

std::string gpu_count_bucket(int gpus) {
  if (gpus <= 8) return "1 node";
  if (gpus <= 64) return "9-64";
  if (gpus <= 512) return "65-512";
  if (gpus <= 2048) return "513-2048";
  return "2049+";
}

std::string framework_family(std::string_view framework_column) {
  const auto f = to_lower(framework_column);
  // NeMo AutoModel is NeMo's PyTorch-FSDP2 stack, not Megatron code: it shares only the NeMo name.
  if (has(f, "automodel")) return "automodel";
  if (f.empty() || has(f, "megatron") || has(f, "nemo") || has(f, "mcore")) return "megatron";
  if (has(f, "titan")) return "torchtitan";
  if (has(f, "maxtext") || has(f, "jax")) return "maxtext";
  return "other";
}

Features features_of(const predict::Case& c, std::string_view framework, std::string row_kind) {
  const auto& l = c.layout;
  const bool moe = c.model.is_moe();
  std::string precision = "bf16";
  if (l.precision == layout::Precision::nvfp4)
    precision = "fp4";
  else if (l.precision != layout::Precision::bf16)
    precision = "fp8";
  Features f;
  f.values = {c.system.gpu.arch.empty() ? c.system.gpu.name : c.system.gpu.arch,  // the part file's arch
              c.system.scale_up.domain_size > 8 ? "nvl72" : "8-gpu node",
              moe ? "moe" : "dense",
              gpu_count_bucket(l.gpus),
              precision,
              moe ? std::string(layout::to_string(l.dispatcher)) : "none",
              framework_family(framework),
              std::move(row_kind)};
  return f;
}

}  // namespace moesim::bands
