// Command-line arguments of the `untangle` commands: a small declarative parser (positionals,
// flags, typed options with ranges) that writes its own --help text and refuses anything it
// does not know with a message naming the argument.
#pragma once

#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace untangle::cli {

// Bad command line: the program prints the message and a pointer to --help, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure while doing the work (a file, a mesh, the engine): exit status 1.
class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "--frames", "abc" -> UsageError "--frames expects a whole number from 1 to 100000, got 'abc'".
long long parse_integer(std::string_view text, std::string_view name, long long min, long long max);
double parse_real(std::string_view text, std::string_view name, double min, double max);

class ArgParser {
 public:
  // usage: the synopsis after "usage: " ("untangle detect MESH.obj [options]"); summary: what
  // the command does, printed under it.
  ArgParser(std::string usage, std::string summary);

  ArgParser& positional(std::string name, std::string help, std::string* value);
  ArgParser& flag(std::string name, std::string help, bool* value);
  // names: "--output" or "-o,--output".
  ArgParser& option(std::string names, std::string metavar, std::string help, std::string* value);
  ArgParser& option(std::string names, std::string metavar, std::string help, int* value, int min,
                    int max);
  ArgParser& option(std::string names, std::string metavar, std::string help, double* value,
                    double min, double max);
  // Free text after the option list (examples, output format).
  ArgParser& epilog(std::string text);

  // Returns false when --help (or -h) was given: the help text is then printed to stdout and
  // nothing else is read. Throws UsageError for an unknown option, a missing or extra
  // positional, a missing or malformed value.
  bool parse(std::span<const std::string> args);
  std::string help() const;
  // Whether the option was on the command line (by any of its names).
  bool given(std::string_view name) const;

 private:
  struct Option {
    std::vector<std::string> names;
    std::string metavar;  // empty for a flag
    std::string help;
    std::function<void(std::string_view text, std::string_view name)> set;
    bool given = false;
  };
  struct Positional {
    std::string name;
    std::string help;
    std::string* value;
  };

  Option* find(std::string_view name);

  std::string usage_;
  std::string summary_;
  std::string epilog_;
  std::vector<Option> options_;
  std::vector<Positional> positionals_;
};

}  // namespace untangle::cli
