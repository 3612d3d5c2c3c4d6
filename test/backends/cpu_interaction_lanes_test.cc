// The DLRM interaction row kernels (src/backends/cpu/rec_kernels.cc and its
// AVX-512 samples-in-lanes path, rec_interaction_lanes.cc) against a plain
// double-precision loop: sample counts below, at and across the 16-sample
// block, F * D and the output width off multiples of 16, strided rows, and
// with / without the self dots.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/gemm_isa.h"
#include "backends/cpu/rec_kernels.h"

namespace cagr::cpu {
namespace {

struct Case {
  int64_t count, fields, dim;
  bool self;
};

std::vector<float> inputs(const Case& c, int64_t ldx) {
  std::vector<float> x(static_cast<size_t>(c.count * ldx), -99.0f);
  for (int64_t s = 0; s < c.count; ++s) {
    for (int64_t k = 0; k < c.fields * c.dim; ++k) {
      x[static_cast<size_t>(s * ldx + k)] = std::sin(0.37f * static_cast<float>(k) + 1.3f * static_cast<float>(s));
    }
  }
  return x;
}

// Runs `kernel` on case c and checks every output against the double loop
// and that the padding between output rows is untouched.
template <typename Kernel>
void check(const Case& c, Kernel kernel) {
  const int64_t ldx = c.fields * c.dim + 3, width = interactionWidth(c.fields, c.self), ldOut = width + 5;
  std::vector<float> x = inputs(c, ldx), out(static_cast<size_t>(c.count * ldOut), 7.0f);
  std::vector<float> scratch(static_cast<size_t>(interactionScratchFloats(c.fields, c.dim)));
  kernel(x.data(), c.count, ldx, c.fields, c.dim, c.self, out.data(), ldOut, scratch.data());
  for (int64_t s = 0; s < c.count; ++s) {
    int64_t w = 0;
    for (int64_t i = 0; i < c.fields; ++i) {
      for (int64_t j = 0; j < (c.self ? i + 1 : i); ++j, ++w) {
        double want = 0;
        for (int64_t d = 0; d < c.dim; ++d) {
          want += static_cast<double>(x[static_cast<size_t>(s * ldx + i * c.dim + d)]) *
                  x[static_cast<size_t>(s * ldx + j * c.dim + d)];
        }
        const float got = out[static_cast<size_t>(s * ldOut + w)];
        ASSERT_NEAR(got, want, 1e-5 * (1.0 + std::fabs(want)))
            << "sample " << s << " dot (" << i << ", " << j << ") of F=" << c.fields << " D=" << c.dim;
      }
    }
    ASSERT_EQ(w, width);
    for (int64_t p = width; p < ldOut; ++p) ASSERT_EQ(out[static_cast<size_t>(s * ldOut + p)], 7.0f) << "padding";
  }
}

const Case kCases[] = {{1, 27, 16, false}, {16, 27, 16, false}, {37, 27, 16, false}, {5, 23, 64, false},
                       {33, 23, 64, true}, {17, 3, 5, false},   {20, 9, 7, true},    {2, 2, 1, false}};

TEST(CpuInteractionRows, MatchesTheDotsOfEverySample) {
  for (const Case& c : kCases) check(c, interactionRows);
}

TEST(CpuInteractionRows, SamplesInLanesMatchTheDotsOfEverySample) {
  if (hostIsa() != Isa::kAvx512) GTEST_SKIP() << "this machine has no AVX-512";
  for (const Case& c : kCases) {
    check(c, [](const float* x, int64_t n, int64_t ldx, int64_t f, int64_t d, bool self, float* out, int64_t ldOut,
                float* scratch) { ASSERT_TRUE(interactionRowsLanes(x, n, ldx, f, d, self, out, ldOut, scratch)); });
  }
}

}  // namespace
}  // namespace cagr::cpu
