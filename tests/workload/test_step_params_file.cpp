// data/params/step_params.json: the defaults StepParams starts from, and a strict reader for bad files.
#include <doctest/doctest.h>

#include <string>

#include "config/data_dir.hpp"
#include "core/error.hpp"
#include "workload/step_params_file.hpp"

using namespace moesim;
using namespace moesim::workload;

TEST_CASE("a default StepParams holds the data file's values") {
  const StepParams p;
  for (const auto& e : step_param_entries(config::data_dir())) {
    CAPTURE(e.name);
    CHECK(get_step_param(p, e.name) == e.value);
  }
  // Hand-copied from data/params/step_params.json: a change of a default is a change of this test too.
  CHECK(p.framework_host_factor == 2.8);
  CHECK(p.x86_host_factor == 2.7);
  CHECK(p.unbound_host_factor == 1.4);
  CHECK(p.fp8_module_host_factor == 2.0);
  CHECK(p.graph_launch_us == 5.0);
  CHECK(p.kernel_launch_us == -1.0);  // the system file's figure
  CHECK(p.scale_up_efficiency_scale == 1.0);
}

TEST_CASE("a bad step parameter file reports every problem at once, with file, JSON pointer and did-you-mean") {
  const std::string f = MOESIM_FIXTURES_DIR "/workload/bad_step_params.json";
  try {
    load_step_param_entries(f);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.code() == ExitCode::bad_config);
    const std::string what = e.what();
    CAPTURE(what);
    // Missing source.
    CHECK(what.find(f + ":/params/scale_up_efficiency_scale/source: missing required key \"source\"") !=
          std::string::npos);
    // Unknown key in an entry, and an unknown parameter, each with a did-you-mean.
    CHECK(what.find(f + ":/params/scale_out_efficiency_scale/sorce: unknown key \"sorce\" (did you mean "
                        "\"source\"?)") != std::string::npos);
    CHECK(what.find(f + ":/params/framework_host_facter: unknown key \"framework_host_facter\" (did you mean "
                        "\"framework_host_factor\"?)") != std::string::npos);
    CHECK(what.find(f + ":/params/framework_host_factor: missing step parameter \"framework_host_factor\"") !=
          std::string::npos);
    // Wrong type, wrong unit, a fitted value without its command, a negative time where none is allowed.
    CHECK(what.find(f + ":/params/x86_host_factor/value: expected a number, got string") != std::string::npos);
    CHECK(what.find(f + ":/params/unbound_host_factor/unit: expected \"x\", got \"us\"") != std::string::npos);
    CHECK(what.find(f + ":/params/fp8_module_host_factor/fitted: a fitted value's source must say") !=
          std::string::npos);
    CHECK(what.find(f + ":/params/graph_launch_us/value: a time must be >= 0") != std::string::npos);
    CHECK(what.find(f + ":/params/kernel_launch_us/fitted: missing required key \"fitted\"") != std::string::npos);
    CHECK(e.diagnostics().size() == 9);  // the nine above, one each (no range complaint on top of the type)
  }
}

TEST_CASE("step parameter text: a FITTED source needs fitted true; -1 is allowed only for the system's figures") {
  const std::string head = R"({"params": {)";
  std::string body;
  for (const auto& name : step_param_names()) {
    const bool factor = name.find("_scale") != std::string::npos || name.find("_factor") != std::string::npos;
    const bool fraction = name.find("_fraction") != std::string::npos;
    body += (body.empty() ? "" : ",") + std::string("\"") + name +
            "\": {\"value\": " + (step_param_from_system(name) ? "-1" : "1") + ", \"unit\": \"" +
            (fraction ? "fraction"
             : factor ? "x"
                      : "us") +
            "\", \"source\": \"FITTED: moesim validate --fit x\", \"fitted\": true}";
  }
  const auto good = parse_step_param_entries(head + body + "}}", "good.json");
  CHECK(good.size() == step_param_names().size());
  std::string wrong = body;
  wrong.replace(wrong.find("\"fitted\": true"), 14, "\"fitted\": false");
  CHECK_THROWS_AS(parse_step_param_entries(head + wrong + "}}", "wrong.json"), ConfigError);
}
