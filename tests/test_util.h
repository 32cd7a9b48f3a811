// Helpers for kiln's tests.
#pragma once
#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kiln::testing {

// A fresh path under the temp directory, unique to this process (removed if it exists).
inline std::string temp_path(const std::string& name) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("kiln_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(p);
  return p.string();
}

// Checks dtype, shape and values (exact).
template <class T>
void expect_tensor(const Tensor& t, const std::vector<T>& values, const std::vector<int64_t>& shape) {
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.shape(), TensorShape(shape));
  EXPECT_EQ(t.to_vector<T>(), values);
}

// Checks values to a relative tolerance.
template <class T>
void expect_near(const Tensor& t, const std::vector<T>& values, const std::vector<int64_t>& shape, double tol = 1e-6) {
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.shape(), TensorShape(shape));
  auto got = t.to_vector<T>();
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], values[i], tol * (1 + std::abs(static_cast<double>(values[i])))) << "at " << i;
}

// Runs f, expects an exception of type E whose message contains `substring`.
template <class E>
void expect_error(const std::function<void()>& f, const std::string& substring) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << substring;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << "message was: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type; message: " << e.what();
  }
}

}  // namespace kiln::testing
