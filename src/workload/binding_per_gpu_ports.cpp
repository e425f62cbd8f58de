// "per-gpu-ports": each simulated GPU has two outgoing links, its NVLink port and its NIC port(s), shared max-min
// fairly by every concurrent collective of that GPU (so EP, DP and PP traffic on one port contend). A
// collective's bytes of each link class are one flow on that GPU's port of the class; the far ends are not
// modelled (rank symmetry: every member of a group does the same on its own ports). Rank r's links are 2r (NVLink)
// and 2r + 1 (NIC).
#include "workload/network_binding.hpp"

namespace moesim::workload {
namespace {
class PerGpuPorts final : public NetworkBinding {
 public:
  explicit PerGpuPorts(const BindingInputs& in) : scale_up_Bps_(in.scale_up_Bps), scale_out_Bps_(in.scale_out_Bps) {}
  std::string_view name() const override { return "per-gpu-ports"; }

  NetworkModel network(const std::vector<std::string>& rank_names) const override {
    return gpu_port_links(rank_names, scale_up_Bps_, scale_out_Bps_);
  }
  std::vector<Flow> flows(int rank, double scale_up_bytes, double scale_out_bytes, const Traffic&) const override {
    return gpu_port_flows(rank, scale_up_bytes, scale_out_bytes);
  }

 private:
  double scale_up_Bps_, scale_out_Bps_;
};
}  // namespace

std::unique_ptr<NetworkBinding> make_per_gpu_ports_binding(const BindingInputs& inputs) {
  return std::make_unique<PerGpuPorts>(inputs);
}

}  // namespace moesim::workload
