// moesim fit --data DIR --out FILE: fits the kernel cost-model families to calibration records (JSONL) and
// writes the fit file. Unphysical data (negative coefficients, faster than roofline) is refused with exit 2.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "core/error.hpp"
#include "kernels/fit/fitter.hpp"

namespace moesim::cli {

void add_fit_command(CLI::App& app, Context& ctx) {
  struct Options {
    std::string data;
    std::string out;
    kernels::fit::FitOptions fit;
  };
  auto opts = std::make_shared<Options>();
  auto* sub =
      app.add_subcommand("fit", "Fit kernel cost models to calibration measurements (kernels-sim/data/<gpu>/*.jsonl)");
  sub->add_option("--data", opts->data, "Folder of *.jsonl calibration records (or one .jsonl file)")->required();
  sub->add_option("--out", opts->out, "Fit file to write, e.g. kernels-sim/fits/h200.json")->required();
  sub->add_option("--roofline-tolerance", opts->fit.roofline_tolerance,
                  "How far (fraction) a measurement may beat its roofline bound before it is refused")
      ->check(CLI::Range(0.0, 0.5));
  sub->callback([&ctx, opts] {
    namespace kf = kernels::fit;
    const kf::CalibrationData data = kf::read_calibration_data(opts->data);
    const kf::FitFile fit = kf::fit_calibration(data, opts->fit);
    const std::filesystem::path out(opts->out);
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    std::ofstream file(out, std::ios::binary);
    if (!file) throw ConfigError({{opts->out, "", "cannot write file"}});
    file << kf::write_fit_file(fit);
    if (!file) throw ConfigError({{opts->out, "", "write failed"}});

    ctx.out << "fit " << fit.gpu << " (" << fit.records << " records, " << fit.data_hash << ") -> " << opts->out
            << "\n";
    for (const auto& f : fit.families) {
      ctx.out << "  " << std::left << std::setw(24) << f.family << " n=" << f.n << std::fixed << std::setprecision(4)
              << " R^2=" << f.r2 << std::setprecision(1) << " median_err=" << 100 * f.median_rel_error
              << "% max_err=" << 100 * f.max_rel_error << "%\n";
      ctx.out.unsetf(std::ios::fixed);
    }
    for (const auto& s : fit.skipped) ctx.out << "  skipped " << s.family << " (n=" << s.n << "): " << s.reason << "\n";
  });
}

}  // namespace moesim::cli
