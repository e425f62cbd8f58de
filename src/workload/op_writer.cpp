#include "workload/op_writer.hpp"

#include <utility>

namespace moesim::workload {

OpWriter::OpWriter(OpGraph& graph, const HostCostPolicy& host, const NetworkBinding& binding, const StepParams& params)
    : graph_(graph), host_(host), binding_(binding), params_(params) {}

OpId OpWriter::compute(int rank, const Block& b, const char* name, Chain& chain, int layer, int mb, Phase phase,
                       std::uint32_t graph_scope, opgraph::OpIds extra) {
  if (b.kernels == 0 && b.seconds <= 0) return chain.last;
  Op op;
  op.rank = rank;
  op.stream = Stream::compute;
  op.kind = OpKind::compute;
  op.name = graph_.name_id(name);
  op.category = graph_.category_id(phase == Phase::optimizer ? "optimizer" : "compute");
  op.layer = layer;
  op.microbatch = mb;
  op.phase = phase;
  op.duration = seconds_to_ps(b.seconds);
  host_.set_launch(op, b.kernels, graph_scope, b.host_s);
  if (chain.last >= 0) op.deps.push_back(chain.last);
  for (OpId e : extra)
    if (e >= 0) op.deps.push_back(e);
  chain.last = graph_.add_op(std::move(op));
  return chain.last;
}

OpId OpWriter::comm(int rank, const CommSpec& s, opgraph::OpIds deps, int layer, int mb, Phase phase) {
  if (s.demand.empty()) return deps.empty() ? -1 : deps.back();
  Collective c;
  // The what-if scales divide the achieved rate: 0.5 = half of comm/'s calibrated efficiency.
  c.flows = binding_.flows(rank, s.demand.nvlink_bytes / params_.scale_up_efficiency_scale,
                           s.demand.nic_bytes / params_.scale_out_efficiency_scale, s.traffic);
  c.latency = seconds_to_ps(s.demand.latency_s);
  c.sm_count = s.demand.sms;
  const CollectiveId cid = graph_.add_collective(std::move(c));
  Op op;
  op.rank = rank;
  op.stream = s.stream;
  op.kind = OpKind::collective;
  op.collective = cid;
  op.name = graph_.name_id(s.name);
  op.category = graph_.category_id(s.category);
  op.layer = layer;
  op.microbatch = mb;
  op.phase = phase;
  host_.set_launch(op, 1, 0, s.demand.host_s);
  for (OpId d : deps)
    if (d >= 0) op.deps.push_back(d);
  return graph_.add_op(std::move(op));
}

Op OpWriter::label_op(int rank, int layer, int mb, Stream stream, OpKind kind, const char* name, const char* category) {
  Op op;
  op.rank = rank;
  op.stream = stream;
  op.kind = kind;
  op.name = graph_.name_id(name);
  op.category = graph_.category_id(category);
  op.layer = layer;
  op.microbatch = mb;
  return op;
}

OpId OpWriter::join(int rank, int layer, int mb, OpId after, OpId other) {
  Op op = label_op(rank, layer, mb, Stream::compute, OpKind::delay, "wait", "compute");
  op.graph_captured = true;
  if (after >= 0) op.deps.push_back(after);
  op.deps.push_back(other);
  return graph_.add_op(std::move(op));
}

OpId OpWriter::input_marker(int rank, int mb) {
  Op op = label_op(rank, -1, mb, Stream::compute, OpKind::delay, "wait_stage_input", "compute");
  op.graph_captured = true;
  return graph_.add_op(std::move(op));
}

OpId OpWriter::host_sync(int rank, int layer, int mb, OpId after, Phase phase, const char* name) {
  Op op = label_op(rank, layer, mb, Stream::host, OpKind::host_sync, name, "host");
  op.phase = phase;
  op.deps.push_back(after);
  return graph_.add_op(std::move(op));
}

void OpWriter::graph_launch(int rank) {
  Op launch;
  launch.rank = rank;
  launch.stream = Stream::host;
  launch.kind = OpKind::delay;
  launch.name = graph_.name_id("cuda_graph_launch");
  launch.category = graph_.category_id("host");
  launch.duration = seconds_to_ps(host_.graph_launch_s());
  graph_.add_op(std::move(launch));
}

}  // namespace moesim::workload
