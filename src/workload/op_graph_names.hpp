#pragma once
// The op-graph contract (src/opgraph/) is what workload/ writes; its names are used unqualified here, as they were
// when the contract lived in this module.
#include "opgraph/op_graph.hpp"

namespace moesim::workload {

using opgraph::Collective, opgraph::CollectiveId, opgraph::Flow, opgraph::LabelId, opgraph::LinkId, opgraph::Op;
using opgraph::NetworkModel, opgraph::Stream, opgraph::kNoCollective, opgraph::kStreamCount, opgraph::kGpuStreamCount;
using opgraph::OpGraph, opgraph::OpId, opgraph::OpKind, opgraph::Phase, opgraph::RankId, opgraph::RankInfo;

}  // namespace moesim::workload
