#include "fuzz_support.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace moesim::fuzz {

std::string write_input(const std::uint8_t* data, std::size_t size, const char* name) {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto d = std::filesystem::path(tmp ? tmp : "/tmp") / ("moesim-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path.string();
}

}  // namespace moesim::fuzz
