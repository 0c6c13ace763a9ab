#include "json.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace untangle::cli {

std::string JsonWriter::escape(std::string_view text) {
  std::string result = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        result += "\\\"";
        break;
      case '\\':
        result += "\\\\";
        break;
      case '\n':
        result += "\\n";
        break;
      case '\r':
        result += "\\r";
        break;
      case '\t':
        result += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          constexpr char kHex[] = "0123456789abcdef";
          result += "\\u00";
          result += kHex[(c >> 4) & 0xf];
          result += kHex[c & 0xf];
        } else {
          result += c;
        }
    }
  }
  return result + "\"";
}

std::string JsonWriter::number(double value) {
  if (!std::isfinite(value)) return "null";
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

void JsonWriter::newline() {
  out_ << '\n' << std::string(2 * stack_.size(), ' ');
}

void JsonWriter::before_value() {
  if (done_) throw std::logic_error("JsonWriter: a second top-level value");
  if (stack_.empty()) return;
  Level& level = stack_.back();
  if (level.object) {
    if (!after_key_) throw std::logic_error("JsonWriter: a value in an object needs a key");
    after_key_ = false;
    return;
  }
  if (level.count++ > 0) out_ << ", ";
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (stack_.empty() || !stack_.back().object || after_key_) {
    throw std::logic_error("JsonWriter: a key outside an object");
  }
  if (stack_.back().count++ > 0) out_ << ',';
  newline();
  out_ << escape(name) << ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (stack_.empty() || !stack_.back().object || after_key_) {
    throw std::logic_error("JsonWriter: end_object without an open object");
  }
  const bool empty = stack_.back().count == 0;
  stack_.pop_back();
  if (!empty) newline();
  out_ << '}';
  if (stack_.empty()) {
    out_ << '\n';
    done_ = true;
  }
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (stack_.empty() || stack_.back().object) {
    throw std::logic_error("JsonWriter: end_array without an open array");
  }
  stack_.pop_back();
  out_ << ']';
  if (stack_.empty()) {
    out_ << '\n';
    done_ = true;
  }
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  out_ << number(v);
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t v) {
  before_value();
  out_ << v;
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t v) {
  before_value();
  out_ << v;
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  before_value();
  out_ << (v ? "true" : "false");
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ << escape(text);
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ << "null";
  if (stack_.empty()) done_ = true;
  return *this;
}

}  // namespace untangle::cli
