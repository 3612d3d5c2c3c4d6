// Golden-file comparison shared by the IR, import and rewrite tests:
// CAGR_UPDATE_GOLDEN=1 rewrites the file instead of comparing.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace cagr::testing {

inline void expectGoldenText(const std::string& text, const std::string& path) {
  if (std::getenv("CAGR_UPDATE_GOLDEN") != nullptr) std::ofstream(path) << text;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden " << path << " (run with CAGR_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "golden " << path << " differs (CAGR_UPDATE_GOLDEN=1 rewrites it)";
}

}  // namespace cagr::testing
