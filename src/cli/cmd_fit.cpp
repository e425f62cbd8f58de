// moesim fit --data DIR [--out FILE]: fits the kernel cost-model families to calibration records (JSONL) and
// writes the fit file, by default kernels-sim/fits/<catalog gpu>.json of the data directory. A family that cannot
// be fitted (too few records, unphysical data, a reference kernel) is listed as skipped with its reason and never
// stops the others; --strict makes unphysical data an error (exit 2). Records that are a rehearsal's fake timings
// are refused unless --allow-rehearsal (and then --out is required: a rehearsal never becomes a GPU's fit).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <ostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "config/data_dir.hpp"
#include "core/error.hpp"
#include "kernels/fit/fitter.hpp"
#include "kernels/fit_vs_roofline.hpp"
#include "kernels/fitted_model.hpp"
#include "topology/part_files.hpp"
#include "workload/step_builder.hpp"

namespace moesim::cli {
namespace {

namespace fs = std::filesystem;
namespace kf = kernels::fit;

fs::path gpu_parts(const fs::path& root) { return root / "topologies" / "parts" / "gpu"; }

// The catalog GPUs (topologies/parts/gpu/<name>.json) whose peaks row is the fit's.
std::vector<std::string> catalog_gpus(const fs::path& root, const kf::FitFile& fit) {
  std::vector<std::string> matches;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(gpu_parts(root), ec))
    if (e.path().extension() == ".json" && kernels::peaks_key_for_gpu(e.path().stem().string()) == fit.peaks.key)
      matches.push_back(e.path().stem().string());
  std::sort(matches.begin(), matches.end());
  return matches;
}

// The fit file of the one catalog GPU the records belong to.
fs::path default_fit_path(const fs::path& root, const kf::FitFile& fit) {
  const auto matches = catalog_gpus(root, fit);
  if (matches.size() != 1)
    throw ConfigError({{gpu_parts(root).string(), "",
                        std::to_string(matches.size()) + " catalog GPUs match the fit's peaks row " + fit.peaks.key +
                            " (records from \"" + fit.gpu + "\"); name the fit file with --out"}});
  return root / "kernels-sim" / "fits" / (matches.front() + ".json");
}

// Before and after: each fitted family's error on its own records, and the built-in roofline's on the same
// kernels at the catalog GPU's rates (kernels/fit_vs_roofline.hpp).
void print_comparison(std::ostream& out, const fs::path& root, const kf::FitFile& fit,
                      const kf::CalibrationData& data) {
  const auto gpus = catalog_gpus(root, fit);
  if (gpus.size() != 1) {
    out << "  (no comparison with the roofline: " << gpus.size() << " catalog GPUs match peaks row " << fit.peaks.key
        << ")\n";
    return;
  }
  const auto device = workload::device_rates(topology::read_gpu_file(gpu_parts(root) / (gpus.front() + ".json")));
  out << "  error on the fitted records, median / p90 / max |predicted - measured| / measured [median signed: < 0 = "
         "predicted too fast] (roofline: the built-in model on "
      << gpus.front() << "):\n";
  const auto pct = [](const kernels::RelativeErrors& e) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << 100 * e.median << " / " << 100 * e.p90 << " / " << 100 * e.max << " % ["
      << std::showpos << 100 * e.median_signed << "]";
    return s.str();
  };
  for (const auto& c : kernels::compare_fit_with_roofline(fit, data, device))
    out << "  " << std::left << std::setw(36) << c.family << " n=" << std::setw(4) << c.fit.n << " fit "
        << std::setw(30) << pct(c.fit) << " roofline "
        << (c.roofline.n > 0 ? pct(c.roofline) : std::string("(no simulator kernel)")) << "\n";
}

void refuse_rehearsal(const kf::CalibrationData& data) {
  for (const auto& r : data.records)
    if (kf::is_rehearsal(r.source))
      throw ConfigError({{r.location, "/source",
                          "these records are a rehearsal's fake timings (\"" + r.source +
                              "\"), not measurements; --allow-rehearsal fits them for a test, with --out"}});
  for (const auto& h : data.host_costs)
    if (kf::is_rehearsal(h.source))
      throw ConfigError({{h.location, "/source",
                          "these records are a rehearsal's fake timings, not measurements; --allow-rehearsal fits "
                          "them for a test, with --out"}});
}

void print_summary(std::ostream& out, const kf::FitFile& fit, const kf::CalibrationData& data, const fs::path& file) {
  std::int64_t skip_records = 0;
  for (const auto& r : data.records) skip_records += r.skipped.empty() ? 0 : 1;
  out << "fit " << fit.gpu << " (" << fit.records << " records, " << fit.data_hash << ") -> " << file.string() << "\n";
  if (skip_records > 0)
    out << "  " << skip_records << " skip records (configurations the run could not time; reasons in the data)\n";
  const kf::MeasuredTable table(fit.table, fit.peaks);
  out << "  per family: the fit's residual on its records (relative error; least squares on relative error), and the\n"
         "  measured shapes it keeps as a table (a kernel of one of them costs the measurement; between two, the\n"
         "  interpolation; the fit only off the table)\n";
  for (const auto& f : fit.families) {
    out << "  " << std::left << std::setw(28) << f.family << " n=" << f.n << std::fixed << std::setprecision(4)
        << " R^2=" << f.r2 << std::setprecision(1) << " median_err=" << 100 * f.median_rel_error
        << "% max_err=" << 100 * f.max_rel_error << "% table=" << table.shapes(f.family) << " shapes\n";
    out.unsetf(std::ios::fixed);
  }
  for (const auto& s : fit.skipped) out << "  skipped " << s.family << " (n=" << s.n << "): " << s.reason << "\n";
  for (const auto& h : fit.host_costs)
    out << "  host " << std::left << std::setw(14) << h.op << std::setw(11) << h.mode << std::fixed
        << std::setprecision(2) << " issue " << h.issue_us_per_op << " us/op, wall " << h.wall_us_per_op << " us/op\n";
  out.unsetf(std::ios::fixed);
}

}  // namespace

void add_fit_command(CLI::App& app, Context& ctx) {
  struct Options {
    std::string data;
    std::string out;
    std::string check;
    bool allow_rehearsal = false;
    kf::FitOptions fit;
  };
  auto opts = std::make_shared<Options>();
  auto* sub =
      app.add_subcommand("fit", "Fit kernel cost models to calibration measurements (kernels-sim/data/<gpu>/*.jsonl)");
  sub->add_option("--data", opts->data, "Folder of *.jsonl calibration records (or one .jsonl file)")->required();
  sub->add_option("--out", opts->out,
                  "Fit file to write (default: kernels-sim/fits/<catalog gpu>.json of the data directory)");
  sub->add_option("--roofline-tolerance", opts->fit.roofline_tolerance,
                  "How far (fraction) a measurement may beat its roofline bound before its family is refused")
      ->check(CLI::Range(0.0, 0.5));
  sub->add_option("--check", opts->check,
                  "Fit file to check against the records instead of fitting: per family (kernel, dtype, pass), the "
                  "fit's and the roofline's median / p90 / max error; writes nothing")
      ->excludes("--out");
  sub->add_flag("--nonnegative", opts->fit.nonnegative,
                "Fit each family under c >= 0 instead of refusing one whose free fit has a negative coefficient; the "
                "fit file marks the coefficients held at zero");
  sub->add_flag("--strict", opts->fit.strict, "Unphysical data in any family is an error (exit 2), not a skip");
  sub->add_flag("--allow-rehearsal", opts->allow_rehearsal,
                "Accept a rehearsal's fake-timed records (tests of the record format); requires --out");
  sub->callback([&ctx, opts] {
    const kf::CalibrationData data = kf::read_calibration_data(opts->data);
    if (opts->allow_rehearsal && opts->out.empty())
      throw UsageError("--allow-rehearsal needs --out: a rehearsal's fit never goes into kernels-sim/fits/");
    if (!opts->allow_rehearsal) refuse_rehearsal(data);
    if (!opts->check.empty()) {
      const kf::FitFile fit = kf::read_fit_file(opts->check);
      ctx.out << "check " << opts->check << " (" << fit.gpu << ", fitted on " << fit.data_hash << ") against "
              << data.records.size() << " records (" << data.hash << ")\n";
      print_comparison(ctx.out, config::data_dir(ctx.data_dir), fit, data);
      return;
    }
    const kf::FitFile fit = kf::fit_calibration(data, opts->fit);
    const fs::path out =
        opts->out.empty() ? default_fit_path(config::data_dir(ctx.data_dir), fit) : fs::path(opts->out);
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    std::ofstream file(out, std::ios::binary);
    if (!file) throw ConfigError({{out.string(), "", "cannot write file"}});
    file << kf::write_fit_file(fit);
    if (!file) throw ConfigError({{out.string(), "", "write failed"}});
    print_summary(ctx.out, fit, data, out);
    print_comparison(ctx.out, config::data_dir(ctx.data_dir), fit, data);
  });
}

}  // namespace moesim::cli
