// validate's output formats on a hand-built result: the JSON rows and summary, the text and markdown tables, the
// no-predictable-row case (no |error| figures), and the additions validate makes (kernel model, recipe cells,
// ladder).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "report/validation_report.hpp"

namespace {
using namespace moesim;

report::ValidationRow predicted_row(const char* id, const char* metric, double measured, double predicted) {
  report::ValidationRow v;
  v.id = id;
  v.metric = metric;
  v.measured = measured;
  v.predicted = predicted;
  v.model = "m";
  v.hardware = "h";
  return v;
}

report::ValidationResult one_predicted_one_skipped() {
  report::ValidationResult r;
  const auto a = predicted_row("A", "tflops_per_gpu", 200, 250);
  report::ValidationRow b;
  b.id = "B";
  b.skipped = "why";
  r.rows = {a, b};
  r.summary = {1, 1, 25, 25, 25};
  return r;
}

report::ValidationResult nothing_predicted() {
  report::ValidationResult r;
  report::ValidationRow b;
  b.id = "B";
  b.skipped = "why";
  r.rows = {b};
  r.summary.skipped = 1;
  return r;
}
}  // namespace

TEST_CASE("JSON and text renderings of a validation result") {
  const auto r = one_predicted_one_skipped();
  const auto j = nlohmann::json::parse(report::to_json_text(r));
  CHECK(j["rows"][0] ==
        nlohmann::json{
            {"id", "A"}, {"metric", "tflops_per_gpu"}, {"measured", 200.0}, {"predicted", 250.0}, {"error_pct", 25.0}});
  CHECK(j["rows"][1] == nlohmann::json{{"id", "B"}, {"skipped", "why"}});
  CHECK(j["summary"] == nlohmann::json{{"n", 1},
                                       {"skipped", 1},
                                       {"median_abs_error_pct", 25.0},
                                       {"p90_abs_error_pct", 25.0},
                                       {"max_abs_error_pct", 25.0}});
  const auto text = report::to_text_table(r);
  CHECK(text.find("A      tflops_per_gpu                200.0      250.0   +25.0%  m / h\n") != std::string::npos);
  CHECK(text.find("B      skipped: why\n") != std::string::npos);
  CHECK(text.find("rows predicted 1, skipped 1; |error| median 25.0%, p90 25.0%, max 25.0%\n") != std::string::npos);
  CHECK(report::to_markdown(r).find("| A | m | h | tflops_per_gpu | 200.0 | 250.0 | +25.0% |\n") != std::string::npos);
}

TEST_CASE("the text table keeps four significant figures of a short step") {
  report::ValidationResult r;
  r.rows.push_back(predicted_row("S", "step_time_s", 0.1883, 0.19774));
  const auto text = report::to_text_table(r);
  CHECK(text.find("S      step_time_s                  0.1883     0.1977    +5.0%  m / h\n") != std::string::npos);
}

TEST_CASE("no predictable row: no |error| figures, the summary says so") {
  const auto r = nothing_predicted();
  const auto text = report::to_text_table(r);
  CHECK(text.find("rows predicted 0, skipped 1; no predictable row\n") != std::string::npos);
  CHECK(text.find("median") == std::string::npos);
  const auto md = report::to_markdown(r);
  CHECK(md.find("Rows predicted: 0; skipped: 1. No predictable row.\n") != std::string::npos);
  CHECK(md.find("median") == std::string::npos);
  const auto j = nlohmann::json::parse(report::to_json_text(r));
  CHECK(j["summary"] == nlohmann::json{{"n", 0}, {"skipped", 1}});
}

TEST_CASE("validate's output: kernel model, recipe cells and the ladder beside the rows") {
  const auto r = one_predicted_one_skipped();
  report::ValidationContext c;
  c.kernel_model = "roofline";
  c.recipe_fills = {{"A", "mtp", "1"}};
  c.recipes_file = "recipes.csv";
  report::LadderStep st;
  st.from = "A";
  st.to = "B";
  st.measured_change_pct = 10;
  st.predicted_change_pct = 5;
  st.judged = st.same_direction = true;
  st.changed_columns = {"dispatcher"};
  c.ladder = std::vector<report::LadderStep>{st};

  const auto j = nlohmann::ordered_json::parse(report::validation_json(r, c));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"rows", "summary", "kernel_model", "recipe_settings", "ladder"});
  CHECK(j["kernel_model"] == "roofline");
  CHECK(j["recipe_settings"] == nlohmann::ordered_json::parse(R"([{"id": "A", "column": "mtp", "value": "1"}])"));
  CHECK(j["ladder"][0]["changed_columns"] == nlohmann::ordered_json::parse(R"(["dispatcher"])"));
  CHECK(j["ladder"][0]["same_direction"] == true);

  const auto text = report::validation_text(r, c, false);
  CHECK(text.find("\nstep              measured  predicted") != std::string::npos);
  CHECK(text.find("kernel model: roofline\n") != std::string::npos);
  CHECK(text.find("recipe settings: 1 unstated cells filled or refined from recipes.csv\n") != std::string::npos);
  const auto md = report::validation_text(r, c, true);
  CHECK(md.find("\n```\nstep ") != std::string::npos);
  CHECK(md.find("\nKernel costs: roofline\n") != std::string::npos);
  CHECK(md.find("\nRecipe settings: 1 unstated") != std::string::npos);

  c.ladder.reset();
  c.recipe_fills.clear();
  CHECK(nlohmann::json::parse(report::validation_json(r, c)).count("ladder") == 0);
  CHECK(report::validation_text(r, c, false).find("recipe settings") == std::string::npos);
}

TEST_CASE("the explained row's first line") {
  CHECK(report::explained_row_line("GT001", "tflops_per_gpu", 1000, 1100) ==
        "GT001 tflops_per_gpu: measured 1000, predicted 1100 (+10.0%)\n");
  CHECK(report::explained_row_line("X", "step_time_s", 2.5, 2.0) ==
        "X step_time_s: measured 2.5, predicted 2 (-20.0%)\n");
}

TEST_CASE("validate --fit's text") {
  report::ParamFit f;
  f.name = "framework_host_factor";
  f.rows = 3;
  f.best = 2;
  f.objective_at_best = 0.05;
  f.summary_at_best = {3, 0, 4, 5, 6};
  f.current = 1;
  f.objective_at_current = 0.1;
  f.summary_at_current = {3, 0, 8, 9, 10};
  f.informing_rows = {"A", "C"};
  CHECK(report::to_text(f) ==
        "fit framework_host_factor on 3 rows: best 2 (mean |ln(predicted/measured)| 0.050; median |error| 4.0%, p90 "
        "5.0%, max 6.0%)\n"
        "  current 1: mean |ln| 0.100; median |error| 8.0%, p90 9.0%, max 10.0%\n"
        "  rows informing it (prediction moves > 1% across the bounds, 2): A C\n");
}
