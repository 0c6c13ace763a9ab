#include "args.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace untangle::cli {
namespace {

std::string format_real(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::vector<std::string> split_names(const std::string& names) {
  std::vector<std::string> result;
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = names.find(',', start);
    const std::size_t end = comma == std::string::npos ? names.size() : comma;
    if (end > start) result.push_back(names.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return result;
}

}  // namespace

long long parse_integer(std::string_view text, std::string_view name, long long min,
                        long long max) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    throw UsageError(std::string(name) + " expects a whole number from " + std::to_string(min) +
                     " to " + std::to_string(max) + ", got '" + std::string(text) + "'");
  }
  return value;
}

double parse_real(std::string_view text, std::string_view name, double min, double max) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < min || value > max) {
    throw UsageError(std::string(name) + " expects a number from " + format_real(min) + " to " +
                     format_real(max) + ", got '" + std::string(text) + "'");
  }
  return value;
}

ArgParser::ArgParser(std::string usage, std::string summary)
    : usage_(std::move(usage)), summary_(std::move(summary)) {}

ArgParser& ArgParser::positional(std::string name, std::string help, std::string* value) {
  positionals_.push_back({std::move(name), std::move(help), value});
  return *this;
}

ArgParser& ArgParser::flag(std::string name, std::string help, bool* value) {
  options_.push_back({split_names(name), "", std::move(help),
                      [value](std::string_view, std::string_view) { *value = true; }});
  return *this;
}

ArgParser& ArgParser::option(std::string names, std::string metavar, std::string help,
                             std::string* value) {
  options_.push_back({split_names(names), std::move(metavar), std::move(help),
                      [value](std::string_view text, std::string_view) { *value = text; }});
  return *this;
}

ArgParser& ArgParser::option(std::string names, std::string metavar, std::string help, int* value,
                             int min, int max) {
  options_.push_back({split_names(names), std::move(metavar), std::move(help),
                      [value, min, max](std::string_view text, std::string_view name) {
                        *value = static_cast<int>(parse_integer(text, name, min, max));
                      }});
  return *this;
}

ArgParser& ArgParser::option(std::string names, std::string metavar, std::string help,
                             double* value, double min, double max) {
  options_.push_back({split_names(names), std::move(metavar), std::move(help),
                      [value, min, max](std::string_view text, std::string_view name) {
                        *value = parse_real(text, name, min, max);
                      }});
  return *this;
}

ArgParser& ArgParser::epilog(std::string text) {
  epilog_ = std::move(text);
  return *this;
}

ArgParser::Option* ArgParser::find(std::string_view name) {
  for (Option& option : options_) {
    for (const std::string& candidate : option.names) {
      if (candidate == name) return &option;
    }
  }
  return nullptr;
}

bool ArgParser::given(std::string_view name) const {
  for (const Option& option : options_) {
    for (const std::string& candidate : option.names) {
      if (candidate == name) return option.given;
    }
  }
  return false;
}

bool ArgParser::parse(std::span<const std::string> args) {
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h") return false;
  }
  std::size_t positional = 0;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    // A lone "-" and negative numbers are values, not options.
    const bool looks_like_option = !options_done && arg.size() > 1 && arg[0] == '-' &&
                                   !(arg[1] >= '0' && arg[1] <= '9') && arg[1] != '.';
    if (!looks_like_option) {
      if (positional == positionals_.size()) {
        throw UsageError("unexpected argument '" + arg + "'");
      }
      *positionals_[positional++].value = arg;
      continue;
    }
    std::string name = arg;
    std::string inline_value;
    bool has_inline_value = false;
    if (const std::size_t equals = arg.find('=');
        arg.starts_with("--") && equals != std::string::npos) {
      name = arg.substr(0, equals);
      inline_value = arg.substr(equals + 1);
      has_inline_value = true;
    }
    Option* option = find(name);
    if (option == nullptr) throw UsageError("unknown option '" + name + "'");
    if (option->given) throw UsageError(name + " is given twice");
    option->given = true;
    if (option->metavar.empty()) {
      if (has_inline_value) throw UsageError(name + " takes no value");
      option->set("", name);
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 == args.size()) throw UsageError(name + " needs a value (" + option->metavar + ")");
      inline_value = args[++i];
    }
    option->set(inline_value, name);
  }
  if (positional < positionals_.size()) {
    throw UsageError("missing " + positionals_[positional].name);
  }
  return true;
}

std::string ArgParser::help() const {
  std::string text = "usage: " + usage_ + "\n\n" + summary_ + "\n";
  if (!positionals_.empty()) {
    text += "\narguments:\n";
    for (const Positional& p : positionals_) {
      std::string left = "  " + p.name;
      left.resize(std::max<std::size_t>(left.size() + 2, 26), ' ');
      text += left + p.help + "\n";
    }
  }
  text += "\noptions:\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Option& option : options_) {
    std::string left = "  ";
    for (std::size_t k = 0; k < option.names.size(); ++k) {
      if (k > 0) left += ", ";
      left += option.names[k];
    }
    if (!option.metavar.empty()) left += " " + option.metavar;
    rows.emplace_back(left, option.help);
  }
  rows.emplace_back("  -h, --help", "show this help and exit");
  for (auto& [left, help] : rows) {
    // Continuation lines of a help text line up under its first line.
    for (std::size_t at = help.find('\n'); at != std::string::npos; at = help.find('\n', at + 1)) {
      help.insert(at + 1, std::string(26, ' '));
    }
    if (left.size() + 2 > 26) {
      text += left + "\n" + std::string(26, ' ') + help + "\n";
    } else {
      left.resize(26, ' ');
      text += left + help + "\n";
    }
  }
  if (!epilog_.empty()) text += "\n" + epilog_ + "\n";
  return text;
}

}  // namespace untangle::cli
