#include "topology/parts.hpp"

namespace moesim::topology {

const std::vector<std::string>& math_dtype_names() {
  // Same order as MathDtype.
  static const std::vector<std::string> names{"fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "fp4"};
  return names;
}

std::string_view to_string(MathDtype dtype) { return math_dtype_names()[static_cast<std::size_t>(dtype)]; }

std::string_view to_string(SwitchKind kind) {
  switch (kind) {
    case SwitchKind::nvswitch: return "nvswitch";
    case SwitchKind::infiniband: return "infiniband";
    case SwitchKind::ethernet: return "ethernet";
  }
  return "?";
}

}  // namespace moesim::topology
