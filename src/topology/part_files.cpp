#include "topology/part_files.hpp"

#include "config/document.hpp"
#include "topology/spec_readers.hpp"

namespace moesim::topology {
namespace {

template <class Read>
auto read_part_file(const std::filesystem::path& path, Read read) {
  Diagnostics diags;
  const config::Document doc = config::load_file(path, diags);
  auto spec = [&] {
    config::ObjectReader r(doc, diags);
    return read(r, path.stem().string());
  }();
  diags.throw_if_any();
  return spec;
}

}  // namespace

GpuSpec read_gpu_file(const std::filesystem::path& path) { return read_part_file(path, detail::read_gpu); }
NicSpec read_nic_file(const std::filesystem::path& path) { return read_part_file(path, detail::read_nic); }
SwitchSpec read_switch_file(const std::filesystem::path& path) { return read_part_file(path, detail::read_switch); }

}  // namespace moesim::topology
