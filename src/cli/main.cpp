#include <iostream>

#include "cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return moesim::cli::run(args, std::cout, std::cerr);
}
