// validate_table: rows of a groundtruth.csv-shaped table become cases, predictions and errors; rows that cannot
// be predicted are skipped with the reason; the summary is the distribution of |error|.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "config/csv_table.hpp"
#include "kernels/efficiency_param_names.hpp"
#include "kernels/roofline_model.hpp"
#include "report/validation_report.hpp"
#include "validate/dataset_rules.hpp"
#include "validate/param_fit.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"
#include "validation_row.hpp"

namespace {
using namespace moesim;

const std::string kHeader =
    "id,model,hardware,gpus,tp,pp,vpp,ep,etp,cp,dp,mbs,gbs,seq,precision,framework,dispatcher,recompute,mtp,"
    "cuda_graph,a2a_overlap,routing,pp_layout,metric,value,unit,source,notes\n";

// small-moe on 8 H100 (the h100x8 fixture case) with `metric` and `value`.
std::string row(const std::string& id, const std::string& metric, const std::string& value,
                const std::string& model = "small-moe", const std::string& tp = "1") {
  return id + "," + model + ",DGX-H100,8," + tp +
         ",2,,4,1,1,4,1,32,4096,BF16,Megatron-Core,alltoall,none,0,none,0,balanced,," + metric + "," + value +
         ",unit,test,notes\n";
}

// The repository's dataset rules (data/rules/), read once.
std::shared_ptr<const validate::DatasetRules> rules() {
  static const auto loaded =
      std::make_shared<const validate::DatasetRules>(validate::load_dataset_rules(MOESIM_SOURCE_DIR));
  return loaded;
}

validate::Resolvers resolvers() {
  return {[](const std::string& name) {
            if (name != "small-moe") throw ConfigError({{"<test>", "", "unknown model \"" + name + "\""}});
            return test::h100x8().model;
          },
          [](const std::string& name) { return test::systems().resolve(name); },
          rules(),
          {}};
}

// One small-moe row on 8 H100 as a column map (TP1 PP2 EP4, 32 x 4096 tokens, 100 TFLOPS measured), plus `extra`.
std::map<std::string, std::string> small_row(std::map<std::string, std::string> extra = {}) {
  std::map<std::string, std::string> r{{"id", "X"},
                                       {"model", "small-moe"},
                                       {"hardware", "DGX-H100"},
                                       {"gpus", "8"},
                                       {"tp", "1"},
                                       {"pp", "2"},
                                       {"ep", "4"},
                                       {"mbs", "1"},
                                       {"gbs", "32"},
                                       {"seq", "4096"},
                                       {"metric", "tflops_per_gpu"},
                                       {"value", "100"}};
  for (auto& [k, v] : extra) r[k] = v;
  return r;
}

validate::ValidationResult validate_csv(const std::string& body) {
  return validate::validate_table(config::parse_csv(kHeader + body, "t.csv"), resolvers());
}
validate::ParamFitRequest fit_request(const std::string& name, double lo, double hi, int evaluations) {
  validate::ParamFitRequest r;
  r.name = name, r.lo = lo, r.hi = hi, r.evaluations = evaluations;
  return r;
}
}  // namespace

TEST_CASE("a predictable row: the prediction is predict_step's, with the row's metric") {
  // What validate does to the case: no memory check.
  predict::PredictOptions o;
  o.check_memory = false;
  const auto expected = predict::predict_step(test::h100x8(), o).report;

  const auto r = validate_csv(row("A", "tflops_per_gpu", "300") + row("B", "tokens_per_sec_per_gpu", "100000") +
                              row("C", "step_time_s", "0.5"));
  REQUIRE(r.rows.size() == 3);
  for (const auto& v : r.rows) {
    CAPTURE(v.id);
    CHECK(v.skipped.empty());
    REQUIRE(v.predicted.has_value());
    CHECK(v.layout == expected.layout_summary);
  }
  CHECK(*r.rows[0].predicted == expected.tflops_per_gpu);
  CHECK(*r.rows[1].predicted == expected.tokens_per_s_per_gpu);
  CHECK(*r.rows[2].predicted == expected.step_time_s);
  CHECK(r.rows[0].measured == 300);
  CHECK(r.rows[0].error_pct() == 100.0 * (expected.tflops_per_gpu - 300) / 300);

  // Summary: n, and the median / p90 (linear interpolation) / max of |error|.
  std::vector<double> e;
  for (const auto& v : r.rows) e.push_back(std::fabs(v.error_pct()));
  std::sort(e.begin(), e.end());
  CHECK(r.summary.n == 3);
  CHECK(r.summary.skipped == 0);
  CHECK(r.summary.median_abs_error_pct == e[1]);
  CHECK(r.summary.p90_abs_error_pct == doctest::Approx(e[1] + 0.8 * (e[2] - e[1])).epsilon(1e-12));
  CHECK(r.summary.max_abs_error_pct == e[2]);
}

TEST_CASE("rows that cannot be predicted are skipped with the reason") {
  const auto r = validate_csv(row("U", "tflops_per_gpu", "100", "no-such-model") + row("T", "time_to_train", "12.5") +
                              row("V", "tflops_per_gpu", "n/a") + row("B", "tflops_per_gpu", "100", "small-moe", "") +
                              row("I", "tflops_per_gpu", "100", "small-moe", "3"));
  REQUIRE(r.rows.size() == 5);
  CHECK(r.rows[0].skipped == "<test>: unknown model \"no-such-model\"");
  CHECK(r.rows[1].skipped == "metric time_to_train is not a single-step prediction");
  CHECK(r.rows[2].skipped == "value \"n/a\" is not a number");
  CHECK(r.rows[3].skipped == "column tp is blank or not an integer");
  // TP3 on 8 GPUs: the layout's first infeasibility reason, then " ..." for the others (heads, query groups).
  CHECK(r.rows[4].skipped == "tp*pp*cp=6 does not divide 8 GPUs ...");
  for (const auto& v : r.rows) CHECK_FALSE(v.predicted.has_value());
  CHECK(r.summary.n == 0);
  CHECK(r.summary.skipped == 5);
  CHECK(r.summary.median_abs_error_pct == 0);
  CHECK(r.summary.max_abs_error_pct == 0);
}

TEST_CASE("a blank ep skips an MoE row and means no EP for a dense model") {
  // The small-moe row with its ep column blanked.
  std::string moe = row("M", "tflops_per_gpu", "100");
  moe.replace(moe.find(",2,,4,1,1,4,"), 12, ",2,,,1,1,4,");
  const auto r = validate_csv(moe);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].skipped == "column ep is blank for an MoE model");

  // A dense model (Llama 3.1 8B from the catalog) with ep blank is predicted with EP1.
  const auto dense = model::load_model_file(std::string(MOESIM_SOURCE_DIR) + "/models/llama3.1-8b.json");
  validate::Resolvers rs{[&](const std::string&) { return dense; },
                         [](const std::string& name) { return test::systems().resolve(name); },
                         rules(),
                         {}};
  const auto d = validate::validate_table(
      config::parse_csv(
          kHeader + "D,llama,DGX-H100,8,1,1,,,,,8,1,8,4096,BF16,Megatron-Core,,,,,,,,tflops_per_gpu,400,u,s,n\n",
          "t.csv"),
      rs);
  REQUIRE(d.rows.size() == 1);
  CHECK(d.rows[0].skipped.empty());
  REQUIRE(d.rows[0].predicted.has_value());
  CHECK(d.rows[0].layout.find("EP1 ") != std::string::npos);
}

TEST_CASE("ladder steps: consecutive predicted rows, direction judged only beyond 3 %") {
  validate::ValidationResult r;
  auto add = [&](const char* id, const char* metric, double measured, std::optional<double> predicted,
                 std::map<std::string, std::string> inputs = {{"dispatcher", "alltoall"}}) {
    r.rows.push_back(test::validation_row(id, metric, measured, predicted, std::move(inputs)));
  };
  add("A", "tflops_per_gpu", 100, 200);
  add("B", "tflops_per_gpu", 110, 210, {{"dispatcher", "deepep"}, {"mtp", "1"}});  // +10 % measured, +5 % predicted
  add("C", "tflops_per_gpu", 112, 200);                                            // +1.8 % measured: not judged
  add("D", "tflops_per_gpu", 120, std::nullopt);  // skipped row: no step into or out of it
  add("E", "tflops_per_gpu", 130, 190);
  add("F", "step_time_s", 2.0, 1.0);   // another metric: no step from E
  add("G", "step_time_s", 1.0, 1.25);  // time halves (+100 % rate), predicted 25 % slower: wrong
  const auto steps = validate::ladder_steps(r);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].from == "A");
  CHECK(steps[0].to == "B");
  CHECK(steps[0].measured_change_pct == doctest::Approx(10.0).epsilon(1e-12));
  CHECK(steps[0].predicted_change_pct == doctest::Approx(5.0).epsilon(1e-12));
  CHECK(steps[0].judged);
  CHECK(steps[0].same_direction);
  CHECK(steps[0].changed_columns == std::vector<std::string>{"dispatcher", "mtp"});  // changed, then added
  CHECK(steps[1].to == "C");
  CHECK(steps[1].changed_columns == std::vector<std::string>{"dispatcher", "mtp"});  // changed, then dropped
  CHECK_FALSE(steps[1].judged);
  CHECK(steps[2].from == "F");
  CHECK(steps[2].measured_change_pct == doctest::Approx(100.0).epsilon(1e-12));
  CHECK(steps[2].predicted_change_pct == doctest::Approx(-20.0).epsilon(1e-12));
  CHECK(steps[2].judged);
  CHECK_FALSE(steps[2].same_direction);
  const auto text = report::to_text_table(steps);
  CHECK(text.find("A      -> B         +10.0%      +5.0%  same                                dispatcher, mtp\n") !=
        std::string::npos);
  CHECK(text.find("F      -> G        +100.0%     -20.0%  WRONG                               (none: the change is not "
                  "in the table)\n") != std::string::npos);
  CHECK(
      text.find("steps judged 2, predicted in the measured direction 1; 1 judged step has no input column changed\n") !=
      std::string::npos);

  // A prediction that barely moves (rounding in the inputs) is not a direction.
  r.rows.clear();
  add("H", "tflops_per_gpu", 100, 200);
  add("I", "tflops_per_gpu", 110, 200.1);  // +0.05 %
  const auto still = validate::ladder_steps(r);
  REQUIRE(still.size() == 1);
  CHECK(still[0].judged);
  CHECK_FALSE(still[0].same_direction);
}

TEST_CASE("refitting one general parameter recovers the value that produced the measurements") {
  // "Measurements" = the predictions at framework_host_factor 2; the fit over [1, 8] must find 2 again. The
  // full-graph row does not depend on host costs, so it does not inform the fit.
  predict::PredictOptions at2;
  at2.check_memory = false;
  at2.params.framework_host_factor = 2.0;
  auto eager = test::h100x8();
  const double tf = predict::predict_step(eager, at2).report.tflops_per_gpu;
  auto graphed = eager;
  graphed.layout.cuda_graph = layout::CudaGraph::full;
  const double tf_graphed = predict::predict_step(graphed, at2).report.tflops_per_gpu;
  std::string full_row = row("G", "tflops_per_gpu", std::to_string(tf_graphed));
  full_row.replace(full_row.find(",none,0,balanced"), 16, ",full,0,balanced");
  const auto table = config::parse_csv(kHeader + row("E", "tflops_per_gpu", std::to_string(tf)) + full_row, "t.csv");

  const auto fit = validate::fit_param(table, resolvers(), {}, fit_request("framework_host_factor", 1.0, 8.0, 40));
  CHECK(fit.best == doctest::Approx(2.0).epsilon(1e-3));
  CHECK(fit.objective_at_best < 1e-4);
  CHECK(fit.current == predict::PredictOptions{}.params.framework_host_factor);
  CHECK(fit.rows == 2);
  CHECK(fit.informing_rows == std::vector<std::string>{"E"});
  CHECK(report::to_text(fit).find("rows informing it (prediction moves > 1% across the bounds, 1): E\n") !=
        std::string::npos);

  CHECK_THROWS_AS(validate::fit_param(table, resolvers(), {}, fit_request("framework_host_factor", 2.0, 1.0, 10)),
                  ConfigError);
  CHECK_THROWS_AS(validate::fit_param(table, resolvers(), {}, fit_request("framework_host_facto", 1.0, 2.0, 10)),
                  ConfigError);
}

TEST_CASE(
    "refitting a kernel constant rebuilds the kernel model at every value and recovers the one that made the row") {
  // The row is what the model predicts with Hopper memory-bound kernels at 0.5 of HBM bandwidth; the built-in
  // value differs, and the fit must find 0.5 again through the kernel model factory.
  auto k = kernels::builtin_kernel_efficiency();
  kernels::set_kernel_param(k, "elementwise_hbm_fraction_hopper", 0.5, "test");
  const kernels::RooflineKernelCostModel at_half(k);
  predict::PredictOptions o;
  o.check_memory = false;
  o.kernels = &at_half;
  const double tf = predict::predict_step(test::h100x8(), o).report.tflops_per_gpu;
  const auto table = config::parse_csv(kHeader + row("E", "tflops_per_gpu", std::to_string(tf)), "t.csv");

  auto req = fit_request("elementwise_hbm_fraction_hopper", 0.1, 1.0, 40);
  req.kernel_params = kernels::builtin_kernel_efficiency();
  int built = 0;
  req.kernel_model_for =
      [&built](const kernels::KernelEfficiencyParams& p) -> std::unique_ptr<kernels::KernelCostModel> {
    ++built;
    return std::make_unique<kernels::RooflineKernelCostModel>(p);
  };
  const auto fit = validate::fit_param(table, resolvers(), {}, req);
  CHECK(fit.best == doctest::Approx(0.5).epsilon(1e-3));
  CHECK(fit.current ==
        doctest::Approx(kernels::builtin_kernel_efficiency().elementwise_fraction(kernels::Arch::hopper)));
  CHECK(fit.informing_rows == std::vector<std::string>{"E"});
  CHECK(built >= 40);
  req.kernel_model_for = nullptr;
  CHECK_THROWS_AS(validate::fit_param(table, resolvers(), {}, req), InternalError);
}

TEST_CASE(
    "Megatron-Bridge recipe defaults: BF16 gradient reduce; FP8 attention where the row or groundtruth.md §6 says so") {
  auto bridge = [](const std::string& precision, const std::string& hardware, const std::string& source,
                   const std::string& notes) {
    const auto r = small_row({{"hardware", hardware},
                              {"precision", precision},
                              {"framework", "Megatron-Bridge/MCore"},
                              {"source", source},
                              {"notes", notes}});
    auto rc = validate::case_from_row(r, resolvers());
    REQUIRE(rc.c.has_value());
    return rc.c->layout;
  };
  const auto said = bridge("MXFP8", "DGX-H100", "docs (26.02 NeMo container)", "full-iteration CUDA graph, FP8 DPA");
  CHECK(said.fp8_attention);
  CHECK(said.grad_reduce_dtype == layout::Dtype::bf16);
  CHECK(bridge("MXFP8", "DGX-GB300", "docs (26.06 NeMo container)", "").fp8_attention);
  CHECK_FALSE(bridge("MXFP8", "DGX-GB300", "docs (26.02 NeMo container)", "").fp8_attention);
  CHECK_FALSE(bridge("MXFP8", "DGX-GB200", "docs (26.06 NeMo container)", "").fp8_attention);
  CHECK_FALSE(bridge("BF16", "DGX-H100", "docs", "FP8 DPA").fp8_attention);  // no FP8 recipe, no FP8 attention
}

TEST_CASE("validate_table: the result does not depend on the number of worker threads") {
  std::string body;
  for (int i = 0; i < 7; ++i)
    body += row("R" + std::to_string(i), i % 2 ? "tflops_per_gpu" : "step_time_s", std::to_string(100 + i));
  body += row("U", "tflops_per_gpu", "100", "no-such-model");
  const auto table = config::parse_csv(kHeader + body, "t.csv");
  const auto one = report::to_json_text(validate::validate_table(table, resolvers(), {}, 1));
  CHECK(report::to_json_text(validate::validate_table(table, resolvers(), {}, 3)) == one);
  CHECK(report::to_json_text(validate::validate_table(table, resolvers(), {}, 0)) == one);
  CHECK(one.find("\"id\": \"U\"") != std::string::npos);
}

TEST_CASE("refitting never rewards a value at which rows stop being predictable") {
  // Up to 1e300 the host factor's upper values overflow the engine's clock: those rows are lost there, so those
  // values score +inf and the fit stays where every row is predicted.
  predict::PredictOptions at2;
  at2.check_memory = false;
  at2.params.framework_host_factor = 2.0;
  const double tf = predict::predict_step(test::h100x8(), at2).report.tflops_per_gpu;
  const auto table = config::parse_csv(kHeader + row("E", "tflops_per_gpu", std::to_string(tf)), "t.csv");
  const auto fit = validate::fit_param(table, resolvers(), {}, fit_request("framework_host_factor", 1.0, 1e300, 60));
  CHECK(fit.summary_at_best.n == 1);
  CHECK(fit.best < 1e6);
  CHECK_THROWS_AS(validate::fit_param(table, resolvers(), {}, fit_request("framework_host_factor", 1e200, 1e300, 5)),
                  ConfigError);
}

TEST_CASE("the TE release of a row comes from the container or guide its source names") {
  using layout::TeVersion;
  CHECK(rules()->te_version_from_source("docs/performance-summary-archive.md (25.11 NeMo container)") ==
        TeVersion{2, 9});
  CHECK(rules()->te_version_from_source("archive (26.02 NeMo container); recipe @cfeddcd94") == TeVersion{2, 12});
  CHECK(rules()->te_version_from_source("archive (26.04.01 NeMo container)") == TeVersion{2, 14});
  CHECK(rules()->te_version_from_source("results/theia_ngpu512_ngc26.04_nemo/gpt_oss_20b") == TeVersion{2, 14});
  CHECK(rules()->te_version_from_source("performance-summary.md (26.08 NeMo container)") == layout::kLatestTeVersion);
  CHECK(rules()->te_version_from_source("archive (25.10 NeMo container)") == TeVersion{2, 7});  // 25.09's, not 2.16
  CHECK(rules()->te_version_from_source("archive (26.04.02 NeMo container)") == TeVersion{2, 14});
  CHECK_FALSE(rules()->te_version_from_source("archive (25.07 NeMo container)").has_value());  // before the table
  CHECK(rules()->te_version_from_source("NVIDIA/Megatron-LM docs/discussions/deepseek-v3-gb200-optimization/*.md") ==
        TeVersion{2, 9});
  CHECK_FALSE(rules()->te_version_from_source("arXiv 2407.21783 Llama 3 Herd of Models").has_value());

  // In a row: the source decides; without one the layout default (the newest TE) stays.
  auto r = small_row({{"source", "docs (25.11 NeMo container)"}});
  auto rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.c->layout.te_version == TeVersion{2, 9});
  r["source"] = "a paper";
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.c->layout.te_version == layout::kLatestTeVersion);
  // An optional te_version column (a recipe setting, or the ladder CSV) wins over the source; a bad one skips.
  r["source"] = "docs (25.11 NeMo container)";
  r["te_version"] = "2.6";
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.c->layout.te_version == TeVersion{2, 6});
  r["te_version"] = "two";
  rc = validate::case_from_row(r, resolvers());
  CHECK_FALSE(rc.c.has_value());
  CHECK(rc.skipped.find("two") != std::string::npos);
}

TEST_CASE("token-dropping columns a recipe adds are read; a bad capacity skips the row with the reason") {
  auto r = small_row({{"expert_capacity_factor", "1.0"}, {"pad_expert_input_to_capacity", "1"}});
  auto rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.c->layout.expert_capacity_factor == 1.0);
  CHECK(rc.c->layout.pad_expert_input_to_capacity);
  r["expert_capacity_factor"] = "lots";
  rc = validate::case_from_row(r, resolvers());
  CHECK_FALSE(rc.c.has_value());
  CHECK(rc.skipped == "column expert_capacity_factor is not a positive number: \"lots\"");
}

TEST_CASE("the cpu_binding column a recipe adds is read: 0 = unbound ranks; absent = bound") {
  auto r = small_row({});
  auto rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.c->layout.cpu_binding);
  r["cpu_binding"] = "0";
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK_FALSE(rc.c->layout.cpu_binding);
  // A switch column holding anything but 0 or 1 skips the row with the reason, never reads as the default.
  for (const char* c : {"cpu_binding", "a2a_overlap", "tp_comm_overlap", "pad_expert_input_to_capacity", "fsdp",
                        "fsdp_reshard_after_forward"}) {
    auto bad = small_row({{c, "false"}});
    const auto skipped = validate::case_from_row(bad, resolvers());
    CHECK_FALSE(skipped.c.has_value());
    CHECK(skipped.skipped == std::string("column ") + c + " is not 0 or 1: \"false\"");
  }
}

TEST_CASE("FSDP: a framework naming PyTorch FSDP2 shards fully unless the fsdp column says otherwise") {
  auto r = small_row({});
  auto rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK_FALSE(rc.c->layout.fsdp);
  r["framework"] = "NeMo AutoModel (PyTorch FSDP2)";
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.c->layout.fsdp);
  CHECK(rc.c->layout.fsdp_reshard_after_forward);  // blank: FSDP2's default
  r["fsdp_reshard_after_forward"] = "0";
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK_FALSE(rc.c->layout.fsdp_reshard_after_forward);
  r["fsdp"] = "0";
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK_FALSE(rc.c->layout.fsdp);
  // Another stack's "FSDP" does not say it reshards as FSDP2 does: not this switch unless the column says so.
  r = small_row({{"framework", "Meta internal (4D: TP,CP,PP,FSDP)"}});
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK_FALSE(rc.c->layout.fsdp);
  r["fsdp"] = "1";
  rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.c->layout.fsdp);
}

TEST_CASE("a TFLOPS row that publishes its tokens/s is judged in its own FLOP definition") {
  auto r = small_row({{"notes", "tokens_per_sec_per_gpu=50000; other notes"}});
  auto rc = validate::case_from_row(r, resolvers());
  REQUIRE(rc.c.has_value());
  CHECK(rc.row_flops_per_token == doctest::Approx(2e9).epsilon(1e-12));  // 100 TFLOPS / 50,000 tokens/s
  report::StepReport rep;
  rep.tokens_per_s_per_gpu = 60000;
  rep.tflops_per_gpu = 999;  // moesim's own FLOP count does not enter
  CHECK(rc.value_of(rep) == doctest::Approx(120.0).epsilon(1e-12));
  for (const char* notes : {"derived tokens_per_sec_per_gpu=50000",   // computed from the TFLOPS
                            "Derived: tokens_per_sec_per_gpu=50000",  // in any spelling
                            "tokens_per_sec_per_gpu=50,000",          // not a clean number: not 50
                            "tokens_per_sec_per_gpu=50000x"}) {
    CAPTURE(notes);
    r["notes"] = notes;
    rc = validate::case_from_row(r, resolvers());
    CHECK(rc.row_flops_per_token == 0);
  }
  r["notes"] = "(tokens_per_sec_per_gpu=40000)";
  CHECK(validate::case_from_row(r, resolvers()).row_flops_per_token == doctest::Approx(2.5e9).epsilon(1e-12));
  r["notes"] = "no tokens here";
  rc = validate::case_from_row(r, resolvers());
  CHECK(rc.row_flops_per_token == 0);
  CHECK(rc.value_of(rep) == 999);
}
