// The commands of the `untangle` program, one source file each (command_<name>.cpp). A command
// gets the arguments after its name and returns the exit status; it throws UsageError for a bad
// command line and CliError (or io's IoError) for a failure, which main() prints.
#pragma once

#include <span>
#include <string>

namespace untangle::cli {

using CommandArgs = std::span<const std::string>;

int run_detect(CommandArgs args);
int run_run(CommandArgs args);
int run_fix(CommandArgs args);
int run_bake(CommandArgs args);
int run_compare(CommandArgs args);  // cli/command_compare.cpp

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

}  // namespace untangle::cli
