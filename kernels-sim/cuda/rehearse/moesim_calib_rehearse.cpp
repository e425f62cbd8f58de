// moesim_calib_rehearse: the calibration program's plan and record writer, without a GPU (host-only).
//   moesim_calib_rehearse --plan [--quick] [--only LIST] [--cc MAJOR]   the suites, record counts, time estimate
//   moesim_calib_rehearse --rehearse [--quick] [--only LIST]            JSONL with FAKE timings on stdout
// tools/calibrate.sh --dry-run builds and runs it with the host C++ compiler. See ../calib_rehearsal.hpp.
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "../calib_rehearsal.hpp"

int main(int argc, char** argv) {
  calib::PlanOptions o;
  bool plan = false, rehearse = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--plan")
      plan = true;
    else if (a == "--rehearse")
      rehearse = true;
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else if (a == "--cc" && i + 1 < argc)
      o.cc_major = std::atoi(argv[++i]);
    else {
      std::cerr << "usage: moesim_calib_rehearse --plan|--rehearse [--quick] [--only LIST] [--cc MAJOR]\n";
      return 1;
    }
  }
  if (plan == rehearse) {
    std::cerr << "moesim_calib_rehearse: give exactly one of --plan and --rehearse\n";
    return 1;
  }
  try {
    if (plan)
      calib::print_plan(calib::make_plan(o), std::cout);
    else
      calib::write_rehearsal(o, std::cout);
  } catch (const std::invalid_argument& e) {
    std::cerr << "moesim_calib_rehearse: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
