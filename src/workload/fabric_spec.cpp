#include "workload/fabric_spec.hpp"

#include "core/error.hpp"

namespace moesim::workload {

SpineRouting parse_spine_routing(const std::string& text) {
  if (text == "adaptive") return SpineRouting::adaptive;
  if (text == "ecmp") return SpineRouting::ecmp;
  throw ConfigError({{"<flags>", "--fabric-routing", "\"" + text + "\": expected adaptive or ecmp"}});
}

EpPlacement parse_ep_placement(const std::string& text) {
  if (text == "packed" || text == "in-rack") return EpPlacement::packed;
  if (text == "across-domains" || text == "across-racks") return EpPlacement::across_domains;
  throw ConfigError(
      {{"<flags>", "--ep-placement", "\"" + text + "\": expected packed (in-rack) or across-domains (across-racks)"}});
}

std::string to_string(SpineRouting r) { return r == SpineRouting::ecmp ? "ecmp" : "adaptive"; }
std::string to_string(EpPlacement p) { return p == EpPlacement::across_domains ? "across-domains" : "packed"; }

std::string FabricSpec::to_string() const {
  std::string s = binding;
  if (binding != "per-gpu-ports") {
    s += ", " + workload::to_string(routing);
    if (routing == SpineRouting::ecmp)
      s += " seed " + std::to_string(seed) + ", " + std::to_string(flows_per_peer) + " flow(s) per peer";
  }
  return s + ", EP " + (ep_placement == EpPlacement::across_domains ? "across domains" : "packed");
}

}  // namespace moesim::workload
