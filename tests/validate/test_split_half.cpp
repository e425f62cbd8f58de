// split_half_check: the split rules are the documented ones; on rows made by the model at a known parameter value
// the full fit and both half fits recover it, the judged half is exact there, and the parameter at its unfitted
// value (nothing left to refit) costs the judged half what the hand-made rows say.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "config/csv_table.hpp"
#include "kernels/efficiency_param_names.hpp"
#include "validate/param_fit.hpp"
#include "validate/split_half.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"
#include "workload/step_params.hpp"

namespace {
using namespace moesim;

const std::string kHeader =
    "id,model,hardware,gpus,tp,pp,vpp,ep,etp,cp,dp,mbs,gbs,seq,precision,framework,dispatcher,recompute,mtp,"
    "cuda_graph,a2a_overlap,routing,pp_layout,metric,value,unit,source,notes\n";

std::string row(const std::string& id, double tflops, const std::string& cuda_graph = "none") {
  return id + ",small-moe,DGX-H100,8,1,2,,4,1,1,4,1,32,4096,BF16,Megatron-Core,alltoall,none,0," + cuda_graph +
         ",0,balanced,,tflops_per_gpu," + std::to_string(tflops) + ",unit,test,notes\n";
}

validate::Resolvers resolvers() {
  static const auto rules =
      std::make_shared<const validate::DatasetRules>(validate::load_dataset_rules(MOESIM_SOURCE_DIR));
  return {[](const std::string& name) {
            if (name != "small-moe") throw ConfigError({{"<test>", "", "unknown model \"" + name + "\""}});
            return test::h100x8().model;
          },
          [](const std::string& name) { return test::systems().resolve(name); },
          rules,
          {}};
}

double tflops_at(double framework_factor, layout::CudaGraph graph = layout::CudaGraph::none) {
  predict::PredictOptions o;
  o.check_memory = false;
  o.params.framework_host_factor = framework_factor;
  auto c = test::h100x8();
  c.layout.cuda_graph = graph;
  return predict::predict_step(c, o).report.tflops_per_gpu;
}
}  // namespace

TEST_CASE("split rules: parity puts odd ids in the fit half, pairs keeps 2k and 2k+1 together") {
  const auto& rules = validate::split_rules();
  REQUIRE(rules.size() == 2);
  CHECK(rules[0].name == "parity");
  CHECK(rules[0].fit_half(41));
  CHECK_FALSE(rules[0].fit_half(40));
  CHECK(rules[1].name == "pairs");
  for (long n : {2, 3, 6, 7, 42, 43}) CHECK(rules[1].fit_half(n));
  for (long n : {0, 1, 4, 5, 40, 41}) CHECK_FALSE(rules[1].fit_half(n));
}

TEST_CASE("the fitted parameters: known names, built-in and unfitted values inside their bounds") {
  const auto names = validate::general_param_names();
  const auto k = kernels::builtin_kernel_efficiency();
  const workload::StepParams step;
  REQUIRE(validate::fitted_params().size() == 5);
  for (const auto& p : validate::fitted_params()) {
    CAPTURE(p.name);
    CHECK(std::find(names.begin(), names.end(), p.name) != names.end());
    const double builtin = kernels::is_kernel_param(p.name) ? kernels::get_kernel_param(k, p.name)
                                                            : workload::get_step_param(step, p.name);
    CHECK(builtin >= p.lo);
    CHECK(builtin <= p.hi);
    CHECK(p.unfitted >= p.lo);
    CHECK(p.unfitted <= p.hi);
    CHECK_FALSE(p.unfitted_why.empty());
  }
}

TEST_CASE("split-half check on rows the model made at framework_host_factor 2") {
  // Four eager rows "measured" at factor 2, and a full-graph row that no host factor moves. Ids 1..4 and 5: parity
  // fits on 1, 3, 5 and judges 2, 4; pairs fits on 2, 3 and judges 1, 4, 5.
  const double eager = tflops_at(2.0), graphed = tflops_at(2.0, layout::CudaGraph::full);
  const auto table = config::parse_csv(
      kHeader + row("R1", eager) + row("R2", eager) + row("R3", eager) + row("R4", eager) + row("R5", graphed, "full"),
      "t.csv");
  validate::SplitHalfRequest req;
  req.params = {{"framework_host_factor", 1, 8, 1, "test"}};
  req.evaluations = 30;
  predict::PredictOptions base;
  base.params.framework_host_factor = 3.0;  // the start is off: every fit must move
  const auto r = validate::split_half_check(table, resolvers(), base, req);

  REQUIRE(r.builtin == std::vector<double>{3.0});
  CHECK(r.full_fit[0] == doctest::Approx(2.0).epsilon(1e-3));
  CHECK(r.moving_rows[0] == std::vector<std::string>{"R1", "R2", "R3", "R4"});
  CHECK(r.full_at_full_fit.mean_abs_log < 1e-4);
  CHECK(r.full_at_builtin.mean_abs_log > r.full_at_full_fit.mean_abs_log);
  REQUIRE(r.splits.size() == 2);
  CHECK(r.splits[0].fit_rows == 3);
  CHECK(r.splits[0].judge_rows == 2);
  CHECK(r.splits[1].fit_rows == 2);
  CHECK(r.splits[1].judge_rows == 3);
  const double unfitted_error = std::fabs(std::log(tflops_at(1.0) / eager));
  for (const auto& s : r.splits) {
    CAPTURE(s.split);
    CHECK(s.half_fit[0] == doctest::Approx(2.0).epsilon(1e-3));
    CHECK(s.judge_at_half_fit.mean_abs_log < 1e-4);
    REQUIRE(s.unfitted.size() == 1);
    CHECK(s.unfitted[0].values == std::vector<double>{1.0});
    // At the unfitted factor the eager judged rows are off by the factor-1 prediction; the graphed one is exact.
    const int eager_judged = 2;  // parity judges R2, R4; pairs R1, R4 and the graphed R5
    CHECK(s.unfitted[0].judge.mean_abs_log ==
          doctest::Approx(unfitted_error * eager_judged / s.judge_rows).epsilon(1e-6));
  }
  const auto md = validate::split_half_markdown(r);
  CHECK(md.find("| `framework_host_factor` | 3 | 2 | 4 | 1 | test |") != std::string::npos);
  CHECK(md.find("Split `pairs`") != std::string::npos);
}

TEST_CASE("split-half check: unknown parameters and unfitted values outside the bounds are bad input") {
  const auto table = config::parse_csv(kHeader + row("R1", 100), "t.csv");
  validate::SplitHalfRequest req;
  req.params = {{"framework_host_facto", 1, 8, 1, "test"}};
  CHECK_THROWS_AS(validate::split_half_check(table, resolvers(), {}, req), ConfigError);
  req.params = {{"framework_host_factor", 1, 8, 9, "test"}};
  CHECK_THROWS_AS(validate::split_half_check(table, resolvers(), {}, req), ConfigError);
}
