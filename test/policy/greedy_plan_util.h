// Greedy's plan of a zoo model on a profile, with one reduced math mode
// allowed beside f32 (as cagr optimize --precision tf32 / bf16) and f32
// storage: shared by the greedy precision tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/policy.h"

namespace cagr::greedytest {

inline std::optional<Graph> greedyPlan(const HardwareProfile& hw, const char* model, int64_t batch, Precision low) {
  auto t = makeTarget(hw);
  EXPECT_TRUE(t.isOk()) << t.status().message();
  if (!t.isOk()) return std::nullopt;
  auto policy = makePolicy("greedy");
  EXPECT_TRUE(policy.isOk());
  if (!policy.isOk()) return std::nullopt;
  EnvConfig cfg;
  cfg.batch = batch;
  cfg.precision.math = {low};
  cfg.precision.maxError = INFINITY;  // the pricing is under test, not the budget
  auto r = optimize(rwtest::zoo(model), *t, **policy, cfg);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  if (!r.isOk()) return std::nullopt;
  return std::move(r->plan);
}

}  // namespace cagr::greedytest
