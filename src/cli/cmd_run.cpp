// moesim run: simulate one training step of a case and print the step report.
#include <fstream>
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/opt_case.hpp"
#include "report/chrome_trace.hpp"

namespace moesim::cli {

void add_run_command(CLI::App& app, Context& ctx) {
  struct Args {
    CaseFlags flags;
    bool json = false;
    std::string trace;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "run", "Simulate one training step (default: DeepSeek-V3 on 256 GB300 NVL72, the published Megatron recipe)");
  add_case_flags(*sub, args->flags);
  sub->add_flag("--json", args->json, "Print the StepReport as JSON");
  sub->add_option("--trace", args->trace, "Write a Chrome trace / Perfetto JSON of the step to FILE");
  sub->callback([&ctx, args] {
    auto prepared = prepare_flags(args->flags, ctx);
    prepared.options.keep_timeline = !args->trace.empty();
    const auto& kernel_model = prepared.kernel_model;
    const auto p = predict::predict_step(prepared.c, prepared.options);
    if (!args->trace.empty()) {
      std::ofstream f(args->trace);
      if (!f) throw UsageError("--trace: cannot write " + args->trace);
      report::write_chrome_trace(f, p.workload->graph, *p.result);
    }
    ctx.out << (args->json ? report::to_json_text(p.report) : report::to_table(p.report));
    if (!args->json) ctx.out << "  kernel model: " << kernel_model.why << "\n";
  });
}

}  // namespace moesim::cli
