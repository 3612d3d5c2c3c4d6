// Every committed zoo export (both exporters) imports and matches ONNX
// Runtime's outputs, computed when the zoo was exported, within 1e-5.
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cagr/importer.h"
#include "cagr/npz.h"
#include "cagr/reference.h"

namespace cagr {
namespace {

struct ZooCase {
  std::string model, exporter, onnx;
  std::vector<std::pair<std::string, std::string>> refs;  // inputs npz, outputs npz
};

std::string repoPath(const std::string& rel) { return std::string(CAGR_SOURCE_DIR) + "/" + rel; }

std::vector<ZooCase> loadManifest() {
  std::ifstream in(repoPath("zoo/manifest.json"));
  std::vector<ZooCase> cases;
  if (!in) return cases;
  auto j = nlohmann::json::parse(in);
  for (const auto& e : j) {
    if (e.value("size", "small") != "small") continue;
    ZooCase c{e["model"], e["exporter"], e["onnx"], {}};
    for (const auto& [batch, inputs] : e["ref_inputs"].items()) {
      c.refs.emplace_back(inputs.get<std::string>(), e["ref_outputs"][batch].get<std::string>());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

void PrintTo(const ZooCase& c, std::ostream* os) { *os << c.onnx; }

class ZooTest : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooTest, ImportsAndMatchesOnnxRuntime) {
  const ZooCase& c = GetParam();
  ImportReport report;
  auto g = importOnnx(repoPath(c.onnx), {}, &report);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  for (const auto& [inPath, outPath] : c.refs) {
    auto inputs = readNpz(repoPath(inPath));
    auto expected = readNpz(repoPath(outPath));
    ASSERT_TRUE(inputs.isOk() && expected.isOk());
    auto got = runReference(*g, *inputs);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    ASSERT_EQ(got->size(), g->outputs().size());
    for (size_t i = 0; i < got->size(); ++i) {
      const std::string& name = g->value(g->outputs()[i]).name;
      auto want = findArray(*expected, name, outPath);
      ASSERT_TRUE(want.isOk()) << want.status().message();
      auto cmp = compareTensors((*got)[i], *want, 1e-5, 0.0);
      EXPECT_TRUE(cmp.close) << c.onnx << " output '" << name << "' on " << inPath << ": " << cmp.message;
      EXPECT_LE(cmp.maxAbsError, 1e-5);
    }
  }
}

// The rec-model subgraphs become their high-level ops, whichever exporter made them.
TEST_P(ZooTest, RecognisesRecOps) {
  const ZooCase& c = GetParam();
  auto g = importOnnx(repoPath(c.onnx));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  std::map<OpKind, int> count;
  for (const Node& n : g->nodes()) ++count[n.op];
  if (c.model == "dlrm_avazu" || c.model == "dlrm_criteo") {
    EXPECT_EQ(count[OpKind::kEmbeddingBag], c.model == "dlrm_avazu" ? 22 : 26);
    EXPECT_EQ(count[OpKind::kInteraction], 1);
    EXPECT_EQ(count[OpKind::kGatherND] + count[OpKind::kMatMul] + count[OpKind::kTranspose], 0);
  }
  if (c.model == "deepfm") {
    EXPECT_EQ(count[OpKind::kFM], 1);
  }
  if (c.model == "xdeepfm") {
    EXPECT_EQ(count[OpKind::kCIN], 3);
    EXPECT_EQ(count[OpKind::kEinsum], 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooTest, ::testing::ValuesIn(loadManifest()),
                         [](const ::testing::TestParamInfo<ZooCase>& info) {
                           bool external = info.param.onnx.find("/external/") != std::string::npos;
                           return info.param.model + "_" + info.param.exporter + (external ? "_external" : "");
                         });

TEST(ZooManifest, ListsBothExportersForEveryModel) {
  auto cases = loadManifest();
  std::map<std::string, std::set<std::string>> exporters;
  for (const auto& c : cases) exporters[c.model].insert(c.exporter);
  EXPECT_GE(exporters.size(), 8u);
  for (const auto& [model, ex] : exporters) {
    EXPECT_TRUE(ex.count("ts") && ex.count("dynamo")) << model;
  }
}

}  // namespace
}  // namespace cagr
