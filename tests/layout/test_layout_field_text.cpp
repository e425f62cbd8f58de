// set_layout_field: a layout field from its text form (measurements tables, rule files), driven by the field
// table; every field of the table is settable.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "layout/layout.hpp"
#include "layout/layout_fields.hpp"

using namespace moesim::layout;

namespace {
void set(Layout& l, const char* key, const char* text) { set_layout_field(l, *find_layout_field(key), text); }
}  // namespace

TEST_CASE("set_layout_field: integers, booleans, enums, numbers and the pipeline layout") {
  Layout l;
  set(l, "tp", "4");
  set(l, "tensor_model_parallel_size", "8");  // the Megatron name finds the same field
  set(l, "mtp", "1");
  set(l, "a2a_overlap", "1");
  set(l, "cpu_binding", "false");
  set(l, "sequence_parallel", "0");
  set(l, "precision", "MXFP8");
  set(l, "cuda_graph", "partial: attn");
  set(l, "grad_reduce_dtype", "bf16");
  set(l, "optimizer_moment_dtype", "bf16");
  set(l, "te_version", "2.9");
  set(l, "expert_capacity_factor", "1.5");
  set(l, "pp_layout", "Et|tL");
  CHECK(l.tp == 8);
  CHECK(l.mtp == 1);
  CHECK(l.a2a_overlap);
  CHECK_FALSE(l.cpu_binding);
  CHECK(l.sequence_parallel == false);
  CHECK(l.precision == Precision::mxfp8);
  CHECK(l.cuda_graph == CudaGraph::partial);
  CHECK(l.cuda_graph_scopes == parse_cuda_graph_setting("partial: attn").scopes);
  CHECK(l.grad_reduce_dtype == Dtype::bf16);
  CHECK(l.optimizer_moment_dtype == Dtype::bf16);
  CHECK(l.te_version == TeVersion{2, 9});
  CHECK(l.expert_capacity_factor == 1.5);
  CHECK(l.pp_layout == "Et|tL");
}

TEST_CASE("set_layout_field: every field of the table takes a value of its kind") {
  for (const auto& f : layout_fields()) {
    CAPTURE(f.key);
    Layout l;
    const char* text = "1";
    switch (f.kind) {
      case FieldKind::precision: text = "bf16"; break;
      case FieldKind::dispatcher: text = "deepep"; break;
      case FieldKind::cuda_graph: text = "full"; break;
      case FieldKind::grouped_gemm: text = "fused"; break;
      case FieldKind::schedule: text = "zb-h1"; break;
      case FieldKind::dtype: text = "bf16"; break;
      case FieldKind::recompute: text = "full"; break;
      case FieldKind::pp_layout: text = "EtL"; break;
      case FieldKind::te_version: text = "2.12"; break;
      case FieldKind::cp_comm_type: text = "a2a"; break;
      case FieldKind::cross_entropy_impl: text = "native"; break;
      default: break;
    }
    CHECK_NOTHROW(set_layout_field(l, f, text));
  }
}

TEST_CASE("set_layout_field: bad text says what was expected") {
  Layout l;
  CHECK_THROWS_WITH_AS(set(l, "gbs", "12x"), "expected an integer, got \"12x\"", std::invalid_argument);
  CHECK_THROWS_WITH_AS(set(l, "fsdp", "yes"), "expected 0 or 1 (or true / false), got \"yes\"", std::invalid_argument);
  CHECK_THROWS_WITH_AS(set(l, "expert_capacity_factor", "0"), "expected a positive number, got \"0\"",
                       std::invalid_argument);
  CHECK_THROWS_AS(set(l, "precision", "fp7"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(set(l, "schedule", "dualpip"),
                       "expected schedule auto | 1f1b | interleaved | zb-h1 | interleaved-zb | zbv | dualpipe | "
                       "dualpipev, got \"dualpip\" (did you mean \"dualpipe\"?)",
                       std::invalid_argument);
  set(l, "schedule", "ZB_H1");
  CHECK(l.schedule == Schedule::zb_h1);
  set(l, "delay_wgrad", "0");
  CHECK(l.delay_wgrad == false);
  set(l, "align_param_gather", "false");
  CHECK(l.align_param_gather == false);
  set(l, "moe_shared_expert_overlap", "1");
  CHECK(l.moe_shared_expert_overlap);
  set(l, "cp_comm_type", "a2a+p2p");
  CHECK(l.cp_comm_type == CpCommType::a2a_p2p);
  set(l, "cp_comm_type", "allgather");
  CHECK(l.cp_comm_type == CpCommType::all_gather);
  CHECK_THROWS_AS(set(l, "cp_comm_type", "ring"), std::invalid_argument);
}
