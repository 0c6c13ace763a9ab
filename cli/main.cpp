// untangle: the command-line program of cloth-untangle. Dispatches to one command per file and
// turns every error into a readable message and a non-zero exit status.
#include <untangle.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "args.hpp"
#include "command.hpp"
#include "heap_policy.hpp"

namespace untangle::cli {
namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(CommandArgs);
};

constexpr Command kCommands[] = {
    {"detect", "find where a mesh cuts through itself (pairs, contours, timings)", run_detect},
    {"run", "run a built-in scene headless, printing intersections per frame", run_run},
    {"fix", "untangle a mesh file: OBJ in, intersection-free OBJ out", run_fix},
    {"bake", "untangle every frame of a PC2 cache, writing a clean PC2", run_bake},
    {"compare", "every scene with every method, side by side", run_compare},
};

std::string version_text() {
  const uint32_t abi = ut_abi_version();
  return std::string("untangle ") + UNTANGLE_VERSION + " (libuntangle ABI " +
         std::to_string(abi >> 16) + "." + std::to_string((abi >> 8) & 0xff) + "." +
         std::to_string(abi & 0xff) + ")\n";
}

std::string program_help() {
  std::string text =
      "usage: untangle COMMAND [options]\n"
      "       untangle COMMAND --help\n\n"
      "Repairs cloth meshes that already cut through themselves (intersection contour\n"
      "minimization and three other methods), headless.\n\ncommands:\n";
  for (const Command& command : kCommands) {
    std::string name = std::string("  ") + command.name;
    name.resize(12, ' ');
    text += name + command.summary + "\n";
  }
  text +=
      "\noptions:\n"
      "  -h, --help  show this help and exit\n"
      "  --version   show the program and library versions and exit\n\n"
      "exit status: 0 success, 1 failure (file, mesh, engine), 2 bad command line,\n"
      "130 interrupted\n";
  return text;
}

int dispatch(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << program_help();
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << program_help();
    return kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << version_text();
    return kExitOk;
  }
  // The library must speak the major version this program was built against.
  if ((ut_abi_version() >> 16) != UT_ABI_VERSION_MAJOR) {
    std::cerr << "untangle: libuntangle has ABI " << (ut_abi_version() >> 16)
              << ".x, this program needs " << UT_ABI_VERSION_MAJOR << ".x\n";
    return kExitFailure;
  }
  for (const Command& command : kCommands) {
    if (args[0] != command.name) continue;
    const std::string prefix = std::string("untangle ") + command.name + ": ";
    const CommandArgs rest(args.data() + 1, args.size() - 1);
    try {
      return command.run(rest);
    } catch (const UsageError& error) {
      std::cerr << prefix << error.what() << "\n(see 'untangle " << command.name << " --help')\n";
      return kExitUsage;
    } catch (const std::exception& error) {
      std::cerr << prefix << error.what() << "\n";
      return kExitFailure;
    }
  }
  std::cerr << "untangle: unknown command '" << args[0] << "' (see 'untangle --help')\n";
  return kExitUsage;
}

}  // namespace
}  // namespace untangle::cli

int main(int argc, char** argv) {
  untangle::cli::use_large_page_heap();
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return untangle::cli::dispatch(args);
  } catch (const std::exception& error) {
    std::cerr << "untangle: " << error.what() << "\n";
    return untangle::cli::kExitFailure;
  }
}
