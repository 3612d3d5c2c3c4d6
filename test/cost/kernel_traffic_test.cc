// A kernel reading a value another kernel wrote pays for the read, even when
// it is that value's only consumer (through views too); only values computed
// inside the kernel are saved traffic. All figures modelled.
#include <gtest/gtest.h>

#include "cagr/cost.h"
#include "cuda_pricing_util.h"
#include "hw/backend_probes_text.h"

namespace cagr {
namespace {

using hw::probe::Input;
using hw::probe::opLine;
using hw::probe::tensorType;
using pricingtest::parsed;
using pricingtest::priced;

TEST(KernelTraffic, ReadOfAnotherKernelsOutputIsNotSaved) {
  const std::string in = tensorType({22, 2, 16}), out = tensorType({2, 22, 16});
  const std::string perm = "perm = [0, 2, 1, 3]";
  // relu and transpose in two kernels (no groups): the transpose reads the relu's output from memory.
  std::string chained = opLine("%r", "relu", "%arg0", "", in, in) + opLine("%out", "transpose", "%r", perm, in, out);
  std::string alone = opLine("%out", "transpose", "%arg0", perm, in, out);
  for (const char* platform : {"x86-64", "h200"}) {
    auto hw = builtinProfile(platform);
    ASSERT_TRUE(hw.isOk());
    GraphEstimate a = priced(*hw, parsed(hw::probe::graphText({Input{{22, 2, 16}}}, alone, out), "alone"), 4096);
    GraphEstimate c = priced(*hw, parsed(hw::probe::graphText({Input{{22, 2, 16}}}, chained, out), "chain"), 4096);
    ASSERT_EQ(c.kernels.size(), 2u) << platform;
    const KernelEstimate& t = c.kernels.back().estimate;
    ASSERT_FALSE(a.kernels.empty());
    EXPECT_NEAR(t.memoryS, a.kernels.front().estimate.memoryS, 1e-3 * a.kernels.front().estimate.memoryS) << platform;
  }
}

}  // namespace
}  // namespace cagr
