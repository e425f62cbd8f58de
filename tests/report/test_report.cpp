// StepReport JSON / table and the Chrome trace writer, on hand-built inputs with exact expected text.
#include <doctest/doctest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/simulator.hpp"
#include "report/chrome_trace.hpp"
#include "report/step_report.hpp"

namespace {
using namespace moesim;

report::StepReport sample() {
  report::StepReport r;
  r.model = "m";
  r.system = "s";
  r.gpus = 8;
  r.layout_summary = "TP1 PP2";
  r.step_time_s = 2.0;
  r.tokens_per_s_per_gpu = 1024.5;
  r.tflops_per_gpu = 400.25;
  r.mfu = 0.5;
  r.memory_max_GiB = 60.0;
  r.usable_hbm_GiB = 74.5;
  r.flops_per_token = 2.5e9;
  r.flops_convention = "megatron";
  r.kernel_cost_model = "roofline";
  r.breakdown = {{"compute", 1.5}, {"bubble", 0.5}};
  r.critical_pp_rank = 1;
  r.memory = {{0, 1, 2, 3, 4, 5, 15}, {1, 1.5, 2, 3, 4, 5, 15.5}};
  r.simulated_ops = 1234;
  r.simulated_ranks = 2;
  return r;
}
}  // namespace

TEST_CASE("to_json_text: stable key order, breakdown as an object of seconds") {
  const std::string text = report::to_json_text(sample());
  const auto j = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"model", "system", "gpus", "layout", "step_time_s", "tokens_per_s_per_gpu",
                                         "tflops_per_gpu", "mfu", "memory_max_GiB", "usable_hbm_GiB", "flops_per_token",
                                         "flops_convention", "kernel_cost_model", "breakdown", "critical_pp_rank",
                                         "memory", "simulated_ops", "simulated_ranks"});
  CHECK(j["step_time_s"] == 2.0);
  CHECK(j["tokens_per_s_per_gpu"] == 1024.5);
  CHECK(j["breakdown"] == nlohmann::ordered_json{{"bubble", 0.5}, {"compute", 1.5}});  // std::map order
  CHECK(j["memory"][1] == nlohmann::ordered_json{{"pp_rank", 1},
                                                 {"weights_GiB", 1.5},
                                                 {"gradients_GiB", 2.0},
                                                 {"optimizer_GiB", 3.0},
                                                 {"activations_GiB", 4.0},
                                                 {"buffers_GiB", 5.0},
                                                 {"total_GiB", 15.5}});
  CHECK(j["simulated_ops"] == 1234);
  CHECK(text.substr(0, 20) == "{\n  \"model\": \"m\",\n  ");  // pretty-printed, two spaces
  CHECK(text.back() == '\n');
}

TEST_CASE("to_table: the terminal summary") {
  CHECK(report::to_table(sample()) ==
        "m on 8 x s, TP1 PP2\n"
        "  step time               2.000 s\n"
        "  tokens/s/GPU           1024.5\n"
        "  TFLOPS/GPU              400.2   (megatron FLOPs, 2.50 GFLOP/token)\n"
        "  MFU (BF16 peak)          50.0 %\n"
        "  memory max/GPU           60.0 GiB of 74.5 GiB usable\n"
        "  breakdown (pp rank 1, seconds and share of the step):\n"
        "    bubble                0.500   25.0 %\n"
        "    compute               1.500   75.0 %\n"
        "  kernel costs: roofline\n");
  // A long layout summary (every option on) is printed whole, never cut at a buffer's width.
  auto r = sample();
  r.layout_summary = std::string(300, 'x');
  const std::string table = report::to_table(r);
  CHECK(table.rfind("m on 8 x s, " + std::string(300, 'x') + "\n  step time", 0) == 0);
}

TEST_CASE("chrome trace: metadata per rank and stream, one X event per op that ran, with its labels") {
  opgraph::OpGraph g;
  g.add_rank({132, 1, "pp0"});
  opgraph::NetworkModel net;
  net.link_capacity_Bps = {1e9};
  opgraph::Op a;
  a.rank = 0;
  a.name = g.name_id("attention_fwd");
  a.category = g.category_id("compute");
  a.layer = 3;
  a.microbatch = 1;
  a.phase = opgraph::Phase::fwd;
  a.duration = 2'000'000;  // 2 us
  const auto ida = g.add_op(a);
  opgraph::Collective c;
  c.flows = {{{0}, 1000.0}};  // 1 us on the 1 GB/s link
  const auto cid = g.add_collective(c);
  opgraph::Op b;
  b.rank = 0;
  b.stream = opgraph::Stream::ep_comm;
  b.kind = opgraph::OpKind::collective;
  b.collective = cid;
  b.name = g.name_id("ep \"dispatch\"");  // a name that needs escaping
  b.category = g.category_id("ep");
  b.phase = opgraph::Phase::bwd_dgrad;
  b.deps = {ida};
  g.add_op(b);
  const auto result = engine::Simulator().run(g, net);

  std::ostringstream out;
  report::write_chrome_trace(out, g, result);
  const std::string text = out.str();
  const auto j = nlohmann::json::parse(text);
  CHECK(j["displayTimeUnit"] == "ms");
  const auto& ev = j["traceEvents"];
  REQUIRE(ev.size() == 1 + opgraph::kStreamCount + 2);
  CHECK(ev[0] == nlohmann::json{{"ph", "M"}, {"name", "process_name"}, {"pid", 0}, {"args", {{"name", "pp0"}}}});
  CHECK(ev[1]["args"]["name"] == "compute");
  CHECK(ev[6]["args"]["name"] == "host");
  const auto& x0 = ev[7];
  CHECK(x0["ph"] == "X");
  CHECK(x0["name"] == "attention_fwd");
  CHECK(x0["cat"] == "compute");
  CHECK(x0["tid"] == 0);
  CHECK(x0["ts"].get<double>() == 0.0);
  CHECK(x0["dur"].get<double>() == 2.0);
  CHECK(x0["args"] == nlohmann::json{{"phase", "fwd"}, {"layer", 3}, {"microbatch", 1}});
  const auto& x1 = ev[8];
  CHECK(x1["name"] == "ep \"dispatch\"");
  CHECK(x1["tid"] == 1);
  CHECK(x1["ts"].get<double>() == 2.0);
  CHECK(x1["dur"].get<double>() == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(x1["args"] == nlohmann::json{{"phase", "bwd_dgrad"}});  // no layer or micro-batch: not printed
  // Exact text of the first X event: microsecond timestamps with six decimals.
  CHECK(text.find("{\"ph\":\"X\",\"name\":\"attention_fwd\",\"cat\":\"compute\",\"pid\":0,\"tid\":0,\"ts\":0.000000,"
                  "\"dur\":2.000000,\"args\":{\"layer\":3,\"microbatch\":1,\"phase\":\"fwd\"}}") != std::string::npos);
}
