#include "topology/parts.hpp"

namespace moesim::topology {

const std::vector<std::string>& math_dtype_names() {
  // Same order as MathDtype.
  static const std::vector<std::string> names{"fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "fp4"};
  return names;
}

std::string_view to_string(MathDtype dtype) { return math_dtype_names()[static_cast<std::size_t>(dtype)]; }

std::optional<MathDtype> parse_math_dtype(std::string_view name) {
  const auto& names = math_dtype_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<MathDtype>(i);
  return std::nullopt;
}

std::string_view to_string(SwitchKind kind) {
  switch (kind) {
    case SwitchKind::nvswitch: return "nvswitch";
    case SwitchKind::infiniband: return "infiniband";
    case SwitchKind::ethernet: return "ethernet";
  }
  return "?";
}

}  // namespace moesim::topology
