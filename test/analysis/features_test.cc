// Per-graph features: the fingerprint tells the two exports of one model apart
// from a different model, and the per-node counts add up.
#include <gtest/gtest.h>

#include "cagr/analysis.h"
#include "cagr/importer.h"

namespace cagr {
namespace {

std::string src(const std::string& rel) { return std::string(CAGR_SOURCE_DIR) + "/" + rel; }

GraphFingerprint fp(const std::string& model) {
  auto g = importOnnx(src(model));
  EXPECT_TRUE(g.isOk()) << g.status().message();
  auto st = computeStats(*g, defaultBindings(*g, 256));
  EXPECT_TRUE(st.isOk());
  return fingerprint(*g, *st);
}

TEST(Fingerprint, SameModelFromBothExportersIsCloserThanAnotherModel) {
  GraphFingerprint ts = fp("zoo/onnx/dlrm_criteo.ts.onnx");
  GraphFingerprint dy = fp("zoo/onnx/dlrm_criteo.dynamo.onnx");
  GraphFingerprint other = fp("zoo/onnx/xdeepfm.dynamo.onnx");
  EXPECT_EQ(ts.opHistogram[static_cast<size_t>(OpKind::kEmbeddingBag)], 26);
  EXPECT_GT(fingerprintSimilarity(ts, dy), 0.99);
  EXPECT_LT(fingerprintSimilarity(ts, other), fingerprintSimilarity(ts, dy));
  EXPECT_GE(ts.depth, 9);  // 4 bottom layers + relus, interaction, 3 top layers at least
  EXPECT_GT(ts.embeddingByteShare, 0.0);
  EXPECT_GT(other.meanIntensity, 0.0);
}

TEST(Stats, TotalsAreSumsOfNodes) {
  auto g = importOnnx(src("zoo/onnx/deepfm.ts.onnx"));
  ASSERT_TRUE(g.isOk());
  auto st = computeStats(*g, defaultBindings(*g, 512));
  ASSERT_TRUE(st.isOk());
  double flops = 0;
  for (const NodeStats& n : st->nodes) flops += n.counts.flops;
  EXPECT_DOUBLE_EQ(flops, st->flops);
  // DNN 352-400-400-400-1 at batch 512: 2*512*(352*400 + 400*400*2 + 400) FLOPs of GEMMs dominate.
  EXPECT_GT(st->flops, 2.0 * 512 * (352 * 400 + 2 * 400 * 400));
  EXPECT_GT(st->peakActivationBytes, 512 * 400 * 4);
}

}  // namespace
}  // namespace cagr
