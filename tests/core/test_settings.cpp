// Settings: method names round-trip, and validate() rejects each bad field with a message that
// names the field and its range, while accepting the defaults and the edges of each range.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "untangle/settings.hpp"

namespace untangle {
namespace {

TEST(Settings, MethodNamesRoundTrip) {
  for (Method method : {Method::kIcm, Method::kKikuchi, Method::kYe, Method::kBuffet}) {
    const auto back = method_from_name(method_name(method));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, method);
  }
  EXPECT_EQ(method_name(Method::kIcm), "icm");
  EXPECT_EQ(method_name(Method::kBuffet), "buffet");
  EXPECT_FALSE(method_from_name("ICM").has_value());
  EXPECT_FALSE(method_from_name("").has_value());
  EXPECT_FALSE(method_from_name("volino").has_value());
}

TEST(Settings, DefaultsAndRangeEdgesAreValid) {
  EXPECT_NO_THROW(validate(Settings{}));
  Settings edges;
  edges.thickness = 0;
  edges.response_strength = 100;
  edges.iterations = 1;
  edges.time_step = 1;
  edges.friction = 0;
  edges.threads = 0;
  edges.spacing = 0;
  EXPECT_NO_THROW(validate(edges));
}

void expect_rejected(const std::function<void(Settings&)>& spoil, const std::string& field,
                     const std::string& range) {
  Settings settings;
  spoil(settings);
  try {
    validate(settings);
    ADD_FAILURE() << field << ": accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(field), std::string::npos) << message;
    EXPECT_NE(message.find(range), std::string::npos) << message;
  }
}

TEST(Settings, EachBadFieldIsNamedWithItsRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_rejected([](Settings& s) { s.thickness = -2; }, "thickness", "[0, 1000], got -2");
  expect_rejected([&](Settings& s) { s.thickness = nan; }, "thickness", "[0, 1000]");
  expect_rejected([](Settings& s) { s.response_strength = -1; }, "response_strength", "[0, 100]");
  expect_rejected([](Settings& s) { s.iterations = 0; }, "iterations", "[1, 1000], got 0");
  expect_rejected([](Settings& s) { s.iterations = 100000; }, "iterations", "[1, 1000]");
  expect_rejected([](Settings& s) { s.time_step = 0; }, "time_step", "(0, 1]");
  expect_rejected([](Settings& s) { s.gravity.z() = INFINITY; }, "gravity.z", "[-1000, 1000]");
  expect_rejected([](Settings& s) { s.friction = -0.1; }, "friction", "[0, 10]");
  expect_rejected([](Settings& s) { s.stretch_compliance = -1; }, "stretch_compliance", "[0,");
  expect_rejected([&](Settings& s) { s.bending_compliance = nan; }, "bending_compliance", "[0,");
  expect_rejected([](Settings& s) { s.max_speed = 0; }, "max_speed", "(0,");
  expect_rejected([](Settings& s) { s.spacing = -0.1; }, "spacing", "[0,");
  expect_rejected([](Settings& s) { s.threads = -1; }, "threads", "[0, 1024]");
  expect_rejected([](Settings& s) { s.method = static_cast<Method>(7); }, "method", "icm");
}

}  // namespace
}  // namespace untangle
