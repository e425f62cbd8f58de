// moesim run: simulate one training step of a case and print the step report. `--gpus A,B,C` (optionally with
// `--gbs` of the same length) runs the case at each GPU count and prints a scaling table instead.
#include <fstream>
#include <optional>
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/opt_band.hpp"
#include "cli/opt_case.hpp"
#include "cli/opt_fabric.hpp"
#include "cli/opt_routing.hpp"
#include "core/error.hpp"
#include "kernels/kernel_source_tally.hpp"
#include "report/chrome_trace.hpp"
#include "report/scaling_table.hpp"

namespace moesim::cli {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    out.push_back(text.substr(start, comma - start));
  out.push_back(text.substr(start));
  return out;
}

// The values of a list-valued --gpus / --gbs ("512,2048,8192"); empty when the flag is absent or single.
std::vector<std::string> list_of(const LayoutFlags& flags, const std::string& key) {
  for (const auto& g : flags.given)
    if (g.key == key && g.values.size() == 1 && g.values[0].find(',') != std::string::npos)
      return split_list(g.values[0]);
  return {};
}

void set_given(LayoutFlags& flags, const std::string& key, const std::string& value) {
  for (auto& g : flags.given)
    if (g.key == key) g.values = {value};
}

// `bands` is made at the first point (the error table read and the anchor rows predicted once for the table).
report::ScalingPoint scaling_point(const CaseFlags& flags, const RoutingFlags& routing, const FabricFlags& fabric,
                                   const BandFlags& band, std::optional<BandAttacher>& bands, const Context& ctx) {
  auto prepared = prepare_flags(flags, ctx);
  apply_routing_flags(routing, prepared);
  apply_fabric_flags(fabric, prepared);
  const auto& l = prepared.c.layout;
  report::ScalingPoint p;
  p.report = predict::predict_step(prepared.c, prepared.options).report;
  if (!bands) bands.emplace(band, ctx, prepared.options);
  bands->attach(p.report, prepared.c);
  p.gbs = l.gbs;
  p.micro_batches = l.gbs / (l.mbs * l.dp());
  return p;
}

void run_scaling(const CaseFlags& base, const RoutingFlags& routing, const FabricFlags& fabric, const BandFlags& band,
                 const Context& ctx, bool json) {
  const auto gpus = list_of(base.layout, "gpus");
  const auto gbs = list_of(base.layout, "gbs");
  if (!gbs.empty() && gbs.size() != gpus.size())
    throw UsageError("--gbs: give one value, or as many as --gpus (" + std::to_string(gpus.size()) + ")");
  std::vector<report::ScalingPoint> points;
  std::optional<BandAttacher> bands;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    CaseFlags flags = base;
    set_given(flags.layout, "gpus", gpus[i]);
    if (!gbs.empty()) set_given(flags.layout, "gbs", gbs[i]);
    points.push_back(scaling_point(flags, routing, fabric, band, bands, ctx));
  }
  if (!json) {
    ctx.out << report::scaling_table(points);
    return;
  }
  ctx.out << "[\n";
  for (std::size_t i = 0; i < points.size(); ++i)
    ctx.out << report::to_json_text(points[i].report) << (i + 1 < points.size() ? ",\n" : "");
  ctx.out << "]\n";
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx) {
  struct Args {
    CaseFlags flags;
    RoutingFlags routing;
    FabricFlags fabric;
    BandFlags band;
    bool json = false;
    std::string trace;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "run",
      "Simulate one training step (default: DeepSeek-V3 on 256 GB300 NVL72, the published Megatron recipe); "
      "--gpus A,B,C prints a scaling table");
  add_case_flags(*sub, args->flags);
  add_routing_flags(*sub, args->routing);
  add_fabric_flags(*sub, args->fabric);
  add_band_flags(*sub, args->band);
  sub->add_flag("--json", args->json, "Print the StepReport as JSON");
  sub->add_option("--trace", args->trace, "Write a Chrome trace / Perfetto JSON of the step to FILE");
  sub->callback([&ctx, args] {
    if (!list_of(args->flags.layout, "gpus").empty()) {
      if (!args->trace.empty()) throw UsageError("--trace takes one case; give --gpus a single value");
      run_scaling(args->flags, args->routing, args->fabric, args->band, ctx, args->json);
      return;
    }
    if (!list_of(args->flags.layout, "gbs").empty()) throw UsageError("--gbs A,B,...: only with --gpus A,B,...");
    auto prepared = prepare_flags(args->flags, ctx);
    apply_routing_flags(args->routing, prepared);
    apply_fabric_flags(args->fabric, prepared);
    prepared.options.keep_timeline = !args->trace.empty();
    const auto& kernel_model = prepared.kernel_model;
    // Counts where each kernel class's times came from (measured table, interpolation, fit, roofline).
    std::optional<kernels::KernelSourceTally> tally;
    if (prepared.options.kernels) prepared.options.kernels = &tally.emplace(*prepared.options.kernels);
    const auto p = predict::predict_step(prepared.c, prepared.options);
    if (!args->trace.empty()) {
      std::ofstream f(args->trace);
      if (!f) throw UsageError("--trace: cannot write " + args->trace);
      report::write_chrome_trace(f, p.workload->graph, *p.result);
    }
    auto shown = p.report;
    BandAttacher(args->band, ctx, prepared.options).attach(shown, prepared.c);
    ctx.out << (args->json ? report::to_json_text(shown) : report::to_table(shown));
    if (!args->json) ctx.out << "  kernel model: " << kernel_model.why << "\n";
    if (!args->json && tally) ctx.out << "  kernel sources (shapes priced): " << tally->summary() << "\n";
  });
}

}  // namespace moesim::cli
