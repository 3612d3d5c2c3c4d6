// data/gen.py writes Avazu- and Criteo-shaped batches that the zoo models
// accept: keys, shapes, dtypes, id ranges, and a Zipf skew. Skips without numpy.
#include <cstdlib>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "cagr/importer.h"
#include "cagr/npz.h"
#include "cagr/reference.h"

namespace cagr {
namespace {

std::string src(const std::string& rel) { return std::string(CAGR_SOURCE_DIR) + "/" + rel; }

bool haveNumpy() { return std::system("python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

StatusOr<NpzContents> generate(const std::string& args, const std::string& name) {
  std::string out = (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()) + ".npz")).string();
  std::string cmd = "python3 " + src("data/gen.py") + " " + args + " -o " + out + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return internalError("data/gen.py failed: " + cmd);
  auto r = readNpz(out);
  std::filesystem::remove(out);
  return r;
}

TEST(DataGen, AvazuIdsAreZipfSkewedAndInRange) {
  if (!haveNumpy()) GTEST_SKIP() << "numpy not installed";
  auto x = generate("--dataset avazu --batch 4096 --seed 3", "avazu");
  ASSERT_TRUE(x.isOk()) << x.status().message();
  auto sparse = findArray(*x, "sparse", "avazu");
  ASSERT_TRUE(sparse.isOk());
  ASSERT_EQ(sparse->shape(), (std::vector<int64_t>{4096, 22}));
  ASSERT_EQ(sparse->dtype(), DType::kI64);
  // Field 9 (device_id, 2.7M ids): the hottest id covers far more than 1/4096 of rows.
  std::map<int64_t, int> freq;
  for (int64_t b = 0; b < 4096; ++b) {
    int64_t id = sparse->data<int64_t>()[b * 22 + 9];
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 2686408);
    ++freq[id];
  }
  int top = 0;
  for (auto& [id, n] : freq) top = std::max(top, n);
  EXPECT_GT(top, 100);
}

TEST(DataGen, CriteoDlrmBatchRunsThroughTheModel) {
  if (!haveNumpy()) GTEST_SKIP() << "numpy not installed";
  auto x = generate("--dataset criteo --format dlrm --batch 64 --multi-hot 3 --cap-rows 1000 --seed 1", "criteo");
  ASSERT_TRUE(x.isOk()) << x.status().message();
  auto idx = findArray(*x, "sparse_indices", "criteo");
  auto off = findArray(*x, "sparse_offsets", "criteo");
  ASSERT_TRUE(idx.isOk() && off.isOk());
  EXPECT_EQ(idx->shape(), (std::vector<int64_t>{26, 64 * 3}));
  EXPECT_EQ(off->shape(), (std::vector<int64_t>{26, 64}));
  auto g = importOnnx(src("zoo/onnx/dlrm_criteo.dynamo.onnx"));
  ASSERT_TRUE(g.isOk());
  auto y = runReference(*g, *x);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ((*y)[0].shape(), (std::vector<int64_t>{64, 1}));
}

}  // namespace
}  // namespace cagr
