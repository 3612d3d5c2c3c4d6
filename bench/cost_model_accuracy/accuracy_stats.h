// Scoring helpers of the cost-model accuracy benchmark: MAPE and Spearman
// rank correlation of predicted (modelled) vs measured times.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace cagr_bench {

inline std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = (static_cast<double>(i + j) / 2.0) + 1;  // average rank of ties
    i = j + 1;
  }
  return r;
}

inline double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 3) return NAN;
  auto ra = ranks(a), rb = ranks(b);
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / static_cast<double>(ra.size());
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / static_cast<double>(rb.size());
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : NAN;
}

/// Predicted and measured times of one group of records.
struct Group {
  std::vector<double> predicted, measured;
  double mape() const {
    double s = 0;
    for (size_t i = 0; i < predicted.size(); ++i) s += std::fabs(predicted[i] - measured[i]) / measured[i];
    return predicted.empty() ? NAN : 100.0 * s / static_cast<double>(predicted.size());
  }
};

/// `cagr_bench_kernel_accuracy --plans ...` (plan_kernels.cc).
int runPlanKernels(int argc, char** argv);

}  // namespace cagr_bench
