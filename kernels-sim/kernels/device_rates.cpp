#include "kernels/device_rates.hpp"

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::kernels {

const std::vector<std::string>& arch_names() {
  static const std::vector<std::string> names{"hopper", "blackwell", "blackwell_ultra"};
  return names;
}
const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names{"bf16", "fp8", "fp8_block", "fp4"};
  return names;
}

std::string to_string(Arch a) { return arch_names().at(static_cast<std::size_t>(a)); }
std::string to_string(DType d) { return dtype_names().at(static_cast<std::size_t>(d)); }

namespace {
template <class E>
E parse_enum(const std::string& name, const std::vector<std::string>& names, const char* what) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<E>(i);
  throw ConfigError({{"", "",
                      std::string("unknown ") + what + " \"" + name + "\"" + did_you_mean(name, names) +
                          "; known: " + join_names(names)}});
}
}  // namespace

Arch parse_arch(const std::string& name) { return parse_enum<Arch>(name, arch_names(), "architecture"); }
DType parse_dtype(const std::string& name) { return parse_enum<DType>(name, dtype_names(), "dtype"); }

double bytes_per_element(DType d) {
  switch (d) {
    case DType::bf16: return 2.0;
    case DType::fp8: return 1.0;
    case DType::fp8_block: return 1.0 + 4.0 / 128.0;
    case DType::fp4: return 0.5 + 1.0 / 16.0;
  }
  throw InternalError("bytes_per_element: bad dtype");
}

double DeviceRates::peak_flops(DType d) const {
  double peak = 0;
  switch (d) {
    case DType::bf16: peak = bf16_flops; break;
    case DType::fp8:
    case DType::fp8_block: peak = fp8_flops; break;
    case DType::fp4: peak = fp4_flops; break;
  }
  if (!(peak > 0)) throw InfeasibleError("GPU \"" + name + "\" has no " + to_string(d) + " tensor-core datapath");
  return peak;
}

void check_device_rates(const DeviceRates& r) {
  auto bad = [&](const char* field) {
    throw ConfigError({{"", "", "device rates for \"" + r.name + "\": " + field + " must be positive"}});
  };
  if (r.sms <= 0) bad("sms");
  if (!(r.hbm_Bps > 0)) bad("hbm_Bps");
  if (!(r.bf16_flops > 0)) bad("bf16_flops");
  if (!(r.fp8_flops > 0)) bad("fp8_flops");
  if (r.fp4_flops < 0) bad("fp4_flops");
}

}  // namespace moesim::kernels
