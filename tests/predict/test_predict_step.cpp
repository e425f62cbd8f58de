// predict_step: properties of whole simulated steps on small cases (determinism, conservation of bytes,
// monotonicity in hardware speed, the breakdown's accounting, the throughput identities).
#include <doctest/doctest.h>

#include "model/model_catalog.hpp"

#include <cmath>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "model/flops.hpp"
#include "predict_cases.hpp"
#include "report/chrome_trace.hpp"

namespace {
using namespace moesim;
using test::gb200x64;
using test::h100x8;

predict::Prediction run(const predict::Case& c, bool timeline = false) {
  predict::PredictOptions o;
  o.keep_timeline = timeline;
  return predict::predict_step(c, o);
}

std::string trace_of(const predict::Prediction& p) {
  std::ostringstream out;
  report::write_chrome_trace(out, p.workload->graph, *p.result);
  return out.str();
}

struct Named {
  const char* name;
  predict::Case c;
};
predict::Case fsdp(predict::Case c) {
  c.layout.fsdp = true;
  return c;
}
std::vector<Named> cases() {
  return {{"h100x8", h100x8()},
          {"gb200x64", gb200x64()},
          {"h100x8 fsdp", fsdp(h100x8())},
          {"gb200x64 fsdp", fsdp(gb200x64())}};
}
}  // namespace

TEST_CASE("a step is deterministic: byte-identical JSON report and Chrome trace across runs") {
  for (const auto& [name, c] : cases()) {
    CAPTURE(name);
    const auto a = run(c, true);
    const auto b = run(c, true);
    CHECK(report::to_json_text(a.report) == report::to_json_text(b.report));
    CHECK(trace_of(a) == trace_of(b));
    CHECK(*a.result == *b.result);
    // keep_timeline does not change the prediction.
    CHECK(report::to_json_text(run(c, false).report) == report::to_json_text(a.report));
  }
}

TEST_CASE("every collective delivers the bytes it injected") {
  for (const auto& [name, c] : cases()) {
    CAPTURE(name);
    const auto p = run(c, true);
    const auto& g = p.workload->graph;
    REQUIRE(p.result->collectives.size() == g.collectives().size());
    REQUIRE(g.collectives().size() > 0);
    double total = 0;
    for (std::size_t i = 0; i < g.collectives().size(); ++i) {
      const auto& t = p.result->collectives[i];
      double flow_bytes = 0;
      for (const auto& f : g.collectives()[i].flows) flow_bytes += f.bytes;
      CAPTURE(i);
      CHECK(t.bytes_injected == doctest::Approx(flow_bytes).epsilon(1e-12));
      CHECK(std::fabs(t.bytes_delivered - t.bytes_injected) <= 1e-6 * t.bytes_injected);
      CHECK(t.end >= t.rendezvous);
      total += t.bytes_injected;
    }
    // The links carried exactly what the flows delivered.
    double links = 0;
    for (double b : p.result->link_bytes) links += b;
    CHECK(links == doctest::Approx(total).epsilon(1e-6));
  }
}

TEST_CASE("faster hardware never lengthens the step") {
  for (const auto& [name, c] : cases()) {
    CAPTURE(name);
    const double base = run(c).report.step_time_s;
    CHECK(base > 0);

    auto links = c;
    links.system.gpu.nvlink_Bps_per_direction *= 2;
    links.system.scale_out.nic.Bps_per_direction *= 2;
    const double fast_links = run(links).report.step_time_s;
    CHECK(fast_links <= base);

    auto flops = c;
    for (auto& f : flops.system.gpu.dense_flops)
      if (f) *f *= 2;
    const double fast_math = run(flops).report.step_time_s;
    CHECK(fast_math <= base);
    CHECK(fast_math < base);  // these steps are compute-heavy: twice the peak must show

    auto both = flops;
    both.system.gpu.nvlink_Bps_per_direction *= 2;
    both.system.scale_out.nic.Bps_per_direction *= 2;
    CHECK(run(both).report.step_time_s <= std::min(fast_links, fast_math));
  }
}

TEST_CASE("sharding the experts over an ETP group never shortens the step: same FLOPs per GPU, more traffic") {
  // Not under FSDP: there a smaller expert data-parallel group also means fewer expert weight gathers.
  for (const auto& [name, c] : std::vector<Named>{{"h100x8", h100x8()}, {"gb200x64", gb200x64()}}) {
    CAPTURE(name);
    // The small H100 case is partly host-bound when eager (golden), and there ETP=2 comes out 0.02 % faster: its
    // expert data-parallel group shrinks from 2 to 1, so the expert-gradient reduction leaves the step's tail,
    // while its extra TP traffic and slower expert GEMMs hide under host issue. Under a full-iteration graph the
    // property this test is about (same FLOPs, more traffic) shows; the GB200 case keeps its own graphs.
    auto same_ep = c;
    same_ep.layout.ep /= 2;
    if (name == std::string("h100x8")) same_ep.layout.cuda_graph = layout::CudaGraph::full;
    auto etp = same_ep;
    etp.layout.etp = 2;
    CHECK(run(etp).report.step_time_s > run(same_ep).report.step_time_s);
  }
}

TEST_CASE("throughput identities: tokens, TFLOPS and MFU follow from the step time") {
  for (const auto& [name, c] : cases()) {
    CAPTURE(name);
    const auto r = run(c).report;
    const double tokens = static_cast<double>(c.layout.gbs) * c.layout.seq;
    // Exactly the documented expressions.
    CHECK(r.tokens_per_s_per_gpu == tokens / r.step_time_s / c.layout.gpus);
    // tokens/s/GPU x step x GPUs = GBS x seq (to rounding: three floating-point operations).
    CHECK(r.tokens_per_s_per_gpu * r.step_time_s * c.layout.gpus == doctest::Approx(tokens).epsilon(1e-14));
    model::FlopsOptions fo;
    fo.seq_length = c.layout.seq;
    fo.tp = c.layout.tp;
    fo.mtp_num_layers = c.layout.mtp;
    const double fpt = model::training_flops_per_token(c.model, fo).total();
    CHECK(r.flops_per_token == fpt);
    CHECK(r.tflops_per_gpu == fpt * tokens / r.step_time_s / c.layout.gpus / 1e12);
    CHECK(
        r.mfu ==
        doctest::Approx(r.tflops_per_gpu * 1e12 / *c.system.gpu.peak_flops(topology::MathDtype::bf16)).epsilon(1e-15));
    CHECK(r.flops_convention == "megatron");
    CHECK(r.gpus == c.layout.gpus);
    CHECK(r.simulated_ranks == c.layout.pp);
    CHECK(r.memory.size() == static_cast<std::size_t>(c.layout.pp));
    // MFU below 1: the simulated step cannot beat the BF16 peak on these BF16-or-slower-FLOP-count cases.
    CHECK(r.mfu > 0);
    CHECK(r.mfu < 1);
  }
}

TEST_CASE("breakdown: the documented parts, each non-negative") {
  const std::set<std::string> documented{"compute",    "optimizer",  "exposed_tp", "exposed_cp", "exposed_ep",
                                         "exposed_dp", "exposed_pp", "host",       "bubble"};
  for (const auto& [name, c] : cases()) {
    CAPTURE(name);
    const auto r = run(c).report;
    std::set<std::string> keys;
    for (const auto& [k, v] : r.breakdown) {
      CAPTURE(k);
      keys.insert(k);
      CHECK(v >= 0);
      CHECK(v <= r.step_time_s);
    }
    CHECK(keys == documented);
    CHECK(r.breakdown.at("compute") > 0);
    CHECK(r.breakdown.at("exposed_tp") == 0);  // TP1
    CHECK(r.breakdown.at("exposed_cp") == 0);  // CP1
  }
}

TEST_CASE("breakdown parts add up to the step time within 1%") {
  for (const auto& [name, c] : cases()) {
    CAPTURE(name);
    const auto r = run(c).report;
    double sum = 0;
    for (const auto& [k, v] : r.breakdown) sum += v;
    CAPTURE(r.step_time_s);
    CHECK(sum == doctest::Approx(r.step_time_s).epsilon(0.01));
  }
}

// The parts partition the step: compute, optimizer, then each group's exposed communication outside everything
// counted before it, then idle time as host and bubble. Before this was made disjoint, the engine's per-category
// `exposed` times overlapped (EP, DP and PP exposed at the same instants) and on gb200x256 the parts other than
// the bubble added up to 100.25% of the step, with the bubble clamped to 0.
TEST_CASE("breakdown parts are disjoint: without the bubble they never exceed the step, with it they are the step") {
  for (const auto& c : {h100x8(), gb200x64(), test::gb200x256()}) {
    const auto r = run(c).report;
    double accounted = 0, sum = 0;
    for (const auto& [k, v] : r.breakdown) {
      sum += v;
      if (k != "bubble") accounted += v;
    }
    CAPTURE(r.layout_summary);
    CHECK(accounted <= r.step_time_s * (1 + 1e-12));
    CHECK(sum == doctest::Approx(r.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("memory: a layout that does not fit is infeasible unless the check is off") {
  auto c = h100x8();
  c.system.gpu.hbm_usable_bytes = 4.0 * (1ull << 30);  // 4 GiB: below the ~13 GiB this case needs
  try {
    run(c);
    FAIL("expected InfeasibleError");
  } catch (const InfeasibleError& e) {
    const std::string what = e.what();
    CHECK(what.find("GiB usable") != std::string::npos);
    CHECK(what.find("weights") != std::string::npos);
  }
  predict::PredictOptions o;
  o.check_memory = false;
  const auto r = predict::predict_step(c, o).report;
  CHECK(r.memory_max_GiB > r.usable_hbm_GiB);
  CHECK(r.usable_hbm_GiB == doctest::Approx(4.0).epsilon(1e-12));
}

TEST_CASE("layout_summary names the parallel sizes and the stack") {
  CHECK(predict::layout_summary(h100x8().layout) ==
        "TP1 PP2 EP4 DP4 MBS1 GBS32 seq4096 bf16 alltoall, recompute none, cuda graph none, TE 2.16");
  CHECK(predict::layout_summary(gb200x64().layout) ==
        "TP1 PP2 VPP2 EP32 DP32 MBS1 GBS256 seq4096 mxfp8 hybridep, recompute selective: moe_act, cuda graph partial, "
        "a2a overlap, TE 2.16");
  auto old_te = h100x8().layout;
  old_te.te_version = {2, 9};
  CHECK(predict::layout_summary(old_te).ends_with(", cuda graph none, TE 2.9"));
  auto fused = old_te;
  fused.grouped_gemm = layout::GroupedGemm::fused_mlp;
  CHECK(predict::layout_summary(fused).ends_with(", cuda graph none, fused grouped MLP, TE 2.9"));
  CHECK(predict::layout_summary(fsdp(h100x8()).layout).starts_with("TP1 PP2 EP4 FSDP4 MBS1"));
}

TEST_CASE(
    "host share: GPU idle time while ready ops waited for their launch; grows with host costs, vanishes in a full "
    "graph") {
  predict::PredictOptions o;
  const auto base = predict::predict_step(h100x8(), o).report;
  CHECK(base.breakdown.at("host") > 0);  // the small eager case is partly host-bound (golden)
  o.params.te_module_host_us = 500;
  const auto slow = predict::predict_step(h100x8(), o).report;
  CHECK(slow.breakdown.at("host") > base.breakdown.at("host") + 0.01);
  CHECK(slow.step_time_s > base.step_time_s);
  // Host is a part of the rank's idle time, so bubble (the rest) is never negative.
  double busy = 0;
  for (const auto& [k, v] : slow.breakdown)
    if (k != "host" && k != "bubble") busy += v;
  CHECK(slow.breakdown.at("host") <= slow.step_time_s - busy + 1e-12);
  CHECK(slow.breakdown.at("bubble") >= 0);
  auto graphed = h100x8();
  graphed.layout.cuda_graph = layout::CudaGraph::full;
  const auto full = predict::predict_step(graphed, o).report;
  CHECK(full.breakdown.at("host") <= 5e-6);  // at most the one graph launch before the first kernel
}

TEST_CASE("tp_comm_overlap hides most TP time behind the GEMMs and needs sequence parallelism") {
  predict::PredictOptions o;
  o.check_memory = false;
  // Small model, TP2: the exposed TP time drops; the step itself barely moves (each chunk pays the collective's
  // latency and the overlapped part holds SMs from the GEMMs), so only the exposed time is asserted.
  auto serial = test::h100x8();
  serial.layout.tp = 2, serial.layout.ep = 2;
  serial.layout.cuda_graph = layout::CudaGraph::full;  // eager, this small case is partly host-bound (golden)
  auto overlapped = serial;
  overlapped.layout.tp_comm_overlap = true;
  const auto a = predict::predict_step(serial, o).report;
  const auto b = predict::predict_step(overlapped, o).report;
  REQUIRE(a.breakdown.at("exposed_tp") > 0);
  CHECK(b.breakdown.at("exposed_tp") < 0.75 * a.breakdown.at("exposed_tp"));
  // Llama 3.1 70B with TP8 on H100, where Megatron-Bridge's recipes overlap: a large share of the step is TP
  // time, and overlapping it shortens the step by more than a tenth.
  const model::ModelCatalog models(MOESIM_SOURCE_DIR);
  predict::Case big{models.load("llama3.1-70b"), test::systems().resolve("dgx-h100"), serial.layout};
  big.layout = layout::Layout{};
  big.layout.gpus = 64, big.layout.tp = 8, big.layout.pp = 8, big.layout.mbs = 1, big.layout.gbs = 128,
  big.layout.seq = 8192;
  const double t_serial = predict::predict_step(big, o).report.step_time_s;
  big.layout.tp_comm_overlap = true;
  CHECK(predict::predict_step(big, o).report.step_time_s < 0.9 * t_serial);
  // With context parallelism the ring exchange shares the TP stream: the attention still overlaps it (the
  // serial TP chunk goes first), so overlapping TP does not expose more CP time.
  big.layout.cp = 2, big.layout.pp = 4, big.layout.tp_comm_overlap = false;
  const auto cp_serial = predict::predict_step(big, o).report;
  big.layout.tp_comm_overlap = true;
  const auto cp_overlapped = predict::predict_step(big, o).report;
  REQUIRE(cp_serial.breakdown.at("exposed_cp") > 0);
  CHECK(cp_overlapped.breakdown.at("exposed_cp") <= cp_serial.breakdown.at("exposed_cp") * 1.01);
  CHECK(cp_overlapped.step_time_s < cp_serial.step_time_s);

  auto tp1 = test::h100x8();
  tp1.layout.tp_comm_overlap = true;
  CHECK_THROWS_AS(predict::predict_step(tp1, o), InfeasibleError);
  auto no_sp = overlapped;
  no_sp.layout.sequence_parallel = false;
  CHECK_THROWS_AS(predict::predict_step(no_sp, o), InfeasibleError);
}
