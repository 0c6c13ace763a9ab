// JSON output of the `untangle` commands: a streaming writer with correct string escaping and
// numbers that read back exactly (non-finite numbers, which JSON cannot hold, become null).
// Objects get one key per line; arrays of numbers stay on one line. Misuse (a value without a
// key, unbalanced ends) throws std::logic_error.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace untangle::cli {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(double number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(std::uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& null();

  // key + value in one call.
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  template <typename T>
  JsonWriter& array(std::string_view name, std::span<const T> values) {
    key(name);
    begin_array();
    for (const T& v : values) value(v);
    return end_array();
  }

  static std::string escape(std::string_view text);
  static std::string number(double value);

 private:
  void before_value();
  void newline();

  struct Level {
    bool object;
    std::size_t count = 0;
  };
  std::ostream& out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool done_ = false;
};

}  // namespace untangle::cli
