// moesim import-kernels --simumax FILE --gpu NAME --source TEXT --date DATE --out DIR: turns a published per-shape
// kernel table (a SimuMax system file's measured GEMM, grouped-GEMM and attention efficiencies) into calibration
// records (DIR/simumax.jsonl), which `moesim fit --data DIR` fits like records from our own CUDA program. The
// facts the table does not carry (the GPU, the software, the date, the timed repetitions) come from the command
// line, with the provenance that every record keeps.
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "config/data_dir.hpp"
#include "core/error.hpp"
#include "kernels/fit/gpu_peaks.hpp"
#include "kernels/fit/simumax_import.hpp"
#include "kernels/fitted_model.hpp"
#include "topology/part_files.hpp"

namespace moesim::cli {
namespace {

namespace fs = std::filesystem;
namespace kf = kernels::fit;

// "cuda=13.1,torch=2.10" -> {cuda: 13.1, torch: 2.10}; the keys a record's "software" object takes.
std::map<std::string, std::string> software_pairs(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--software: expected name=version pairs separated by commas, got \"" + part + "\"");
    const std::string key = part.substr(0, eq);
    if (key != "driver" && key != "cuda" && key != "cublas" && key != "cudnn" && key != "torch" && key != "python")
      throw UsageError("--software: \"" + key + "\" is not one of driver, cuda, cublas, cudnn, torch, python");
    out[key] = part.substr(eq + 1);
  }
  return out;
}

}  // namespace

void add_import_kernels_command(CLI::App& app, Context& ctx) {
  struct Options {
    std::string simumax, out, gpu, source, date, software, implementation = "Transformer Engine";
    std::int64_t gemm_repeats = 0, grouped_repeats = 0, attention_repeats = 0;
  };
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "import-kernels", "Turn a published per-shape kernel table (SimuMax system file) into calibration records");
  sub->add_option("--simumax", opts->simumax, "SimuMax system file (configs/system/*.json)")->required();
  sub->add_option("--out", opts->out, "Folder to write simumax.jsonl into (kernels-sim/data/<name>/)")->required();
  sub->add_option("--gpu", opts->gpu, "Catalog GPU the table was measured on (topologies/parts/gpu/<name>.json)")
      ->required();
  sub->add_option("--source", opts->source, "Provenance of the table: repository, path, commit")->required();
  sub->add_option("--date", opts->date, "ISO 8601 date of the measurement (or of the file's commit)")->required();
  sub->add_option("--software", opts->software, "Software of the measuring machine: cuda=13.1,torch=2.10,...");
  sub->add_option("--implementation", opts->implementation,
                  "Library that ran the kernels (\"Transformer Engine 2.11.0\")");
  // A record's repetitions are part of its provenance (kernels-sim/data/README.md): the measuring scripts say them.
  sub->add_option("--gemm-repeats", opts->gemm_repeats, "Timed calls per GEMM figure (the measuring script's)")
      ->required()
      ->check(CLI::PositiveNumber);
  sub->add_option("--grouped-gemm-repeats", opts->grouped_repeats, "Timed calls per grouped-GEMM figure")
      ->required()
      ->check(CLI::PositiveNumber);
  sub->add_option("--attention-repeats", opts->attention_repeats, "Profiled calls per attention figure")
      ->required()
      ->check(CLI::PositiveNumber);
  sub->callback([&ctx, opts] {
    const fs::path root = config::data_dir(ctx.data_dir);
    const fs::path part = root / "topologies" / "parts" / "gpu" / (opts->gpu + ".json");
    if (!fs::exists(part))
      throw ConfigError({{part.string(), "", "no catalog GPU \"" + opts->gpu + "\" (moesim list parts)"}});
    const auto spec = topology::read_gpu_file(part);
    kf::SimumaxFacts facts;
    // Records name the GPU as the driver does ("NVIDIA B200"): the peaks row the catalog name maps to.
    const std::string key = kernels::peaks_key_for_gpu(opts->gpu);
    if (key.empty())
      throw ConfigError({{part.string(), "",
                          "GPU \"" + opts->gpu +
                              "\" has no peaks row "
                              "(kernels-sim/kernels/fit/gpu_peaks.cpp): no fit can use its records"}});
    facts.gpu.name = "NVIDIA " + key;
    facts.gpu.sm_count = spec.sm_count;
    auto software = software_pairs(opts->software);
    if (auto it = software.find("cuda"); it != software.end()) {
      facts.cuda = it->second;
      software.erase(it);
    }
    facts.other_software = software;
    facts.implementation_prefix = opts->implementation;
    facts.date = opts->date;
    facts.source = opts->source;
    facts.gemm_repeats = opts->gemm_repeats;
    facts.grouped_gemm_repeats = opts->grouped_repeats;
    facts.attention_repeats = opts->attention_repeats;

    std::ifstream in(opts->simumax, std::ios::binary);
    if (!in) throw ConfigError({{opts->simumax, "", "cannot open file"}});
    std::stringstream buf;
    buf << in.rdbuf();
    const kf::SimumaxImport im = kf::import_simumax_system(buf.str(), opts->simumax, facts);

    const fs::path dir(opts->out);
    fs::create_directories(dir);
    std::string jsonl;
    for (const auto& r : im.records) jsonl += kf::to_jsonl(r) + "\n";
    std::ofstream file(dir / "simumax.jsonl", std::ios::binary);
    file << jsonl;
    if (!file) throw ConfigError({{(dir / "simumax.jsonl").string(), "", "cannot write file"}});
    ctx.out << "import-kernels: " << im.records.size() << " records (" << im.gemm << " GEMM, " << im.grouped_gemm
            << " grouped GEMM, " << im.attention_fwd << " attention forward, " << im.attention_bwd
            << " attention backward; peak " << im.peak_tflops << " TFLOPS) -> " << (dir / "simumax.jsonl").string()
            << "\n";
    if (!im.not_converted.empty())
      ctx.out << "  not converted: " << im.not_converted.size() << " collective entries (" << im.not_converted.front()
              << ", ...)\n";
  });
}

}  // namespace moesim::cli
