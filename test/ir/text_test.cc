// HIR text form: golden printing, print -> parse -> print identity (weights
// bit-exact), the round trip through mlir-opt-15, and parse errors.
#include "cagr/text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "cagr/graph.h"

namespace cagr {
namespace {

const char* kGoldenPath = CAGR_SOURCE_DIR "/test/ir/golden/text_rec_model.mlir";

Tensor randomTensor(DType dtype, std::vector<int64_t> shape, uint32_t seed) {
  Tensor t(dtype, std::move(shape));
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) t.setF64(i, dist(rng));
  return t;
}

Tensor zeros(std::vector<int64_t> shape) { return Tensor(DType::kF32, std::move(shape)); }

Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> items) {
  Attrs a;
  for (const auto& [k, v] : items) a.set(k, v);
  return a;
}

ValueId must(StatusOr<ValueId> v) {
  EXPECT_TRUE(v.isOk()) << v.status().message();
  return v.isOk() ? *v : kNoValue;
}

// A small DLRM-like model: bottom MLP, a multi-hot EmbeddingBag with offsets,
// a fixed-pooling bag with per-sample weights and no offsets (an absent
// optional operand), interaction, concat, top MLP and a three-way split.
Graph buildModel(bool randomWeights) {
  Graph g;
  int l = g.addSymbol("L");
  ValueId dense = g.addInput("dense", {DType::kF32, {kBatch, 13}});
  ValueId ids = g.addInput("ids", {DType::kI64, {symDim(l)}});
  ValueId offsets = g.addInput("offsets", {DType::kI64, {kBatch}});
  ValueId ids2 = g.addInput("ids2", {DType::kI64, {kBatch, 3}});
  ValueId psw = g.addInput("psw", {DType::kF32, {kBatch, 3}});
  auto w = [&](std::vector<int64_t> shape, uint32_t seed) {
    return randomWeights ? randomTensor(DType::kF32, std::move(shape), seed) : zeros(std::move(shape));
  };
  ValueId w1 = g.addConstant("fc1.weight", w({8, 13}, 1));
  ValueId b1 = g.addConstant("fc1.bias", w({8}, 2));
  ValueId h = must(g.add(OpKind::kGemm, {dense, w1, b1}, attrs({{"transB", int64_t{1}}}), "fc1"));
  h = must(
      g.add(OpKind::kClip, {h}, attrs({{"min", 0.0}, {"max", std::numeric_limits<double>::infinity()}}), "relu_clip"));
  ValueId t1 = g.addConstant("emb0", w({100, 8}, 3));
  ValueId e1 = must(g.add(OpKind::kEmbeddingBag, {t1, ids, offsets}, attrs({{"mode", std::string("sum")}}), "bag0"));
  ValueId t2 = g.addConstant("emb1", w({50, 8}, 4));
  ValueId e2 = must(g.add(OpKind::kEmbeddingBag, {t2, ids2, kNoValue, psw}, {}, "bag1"));
  auto unsq = [&](ValueId v, const std::string& name) {
    return must(g.add(OpKind::kUnsqueeze, {v}, attrs({{"axes", std::vector<int64_t>{1}}}), name));
  };
  ValueId stacked = must(
      g.add(OpKind::kConcat, {unsq(h, "u0"), unsq(e1, "u1"), unsq(e2, "u2")}, attrs({{"axis", int64_t{1}}}), "stack"));
  ValueId inter = must(g.add(OpKind::kInteraction, {stacked}, {}, "interact"));
  ValueId z = must(g.add(OpKind::kConcat, {h, inter}, attrs({{"axis", int64_t{-1}}}), "cat"));
  ValueId w2 = g.addConstant("top.weight", w({6, 11}, 5));
  ValueId top = must(g.add(OpKind::kGemm, {z, w2}, attrs({{"transB", int64_t{1}}, {"alpha", 0.5}}), "top"));
  auto parts = g.addNode(OpKind::kSplit, {top}, attrs({{"axis", int64_t{1}}, {"split", std::vector<int64_t>{1, 2, 3}}}),
                         "heads", 3);
  EXPECT_TRUE(parts.isOk()) << parts.status().message();
  ValueId y = must(g.add(OpKind::kSigmoid, {(*parts)[0]}, {}, "prob"));
  ValueId aux = must(g.add(OpKind::kGelu, {(*parts)[2]}, attrs({{"approximate", std::string("tanh")}}), "aux"));
  g.addOutput(y, "y");
  g.addOutput(aux, "");
  g.addOutput((*parts)[1], "mid");
  EXPECT_TRUE(g.verify().isOk());
  return g;
}

// Constants whose data stresses the dense printer: every dtype, special
// floats, splats, rank 0, empty, and data long enough for hex.
void addTrickyConstants(Graph& g) {
  Tensor f(DType::kF32, {6});
  float specials[] = {-0.0f,
                      std::numeric_limits<float>::denorm_min(),
                      std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity(),
                      0.1f,
                      3.4028235e38f};
  std::memcpy(f.rawData(), specials, sizeof specials);
  g.addConstant("specials", f);
  Tensor nan(DType::kF32, {2});
  uint32_t nanBits[] = {0x7FC00001u, 0xFFA00000u};  // payload, signalling
  std::memcpy(nan.rawData(), nanBits, sizeof nanBits);
  g.addConstant("nans", nan);
  Tensor d(DType::kF64, {3});
  double dv[] = {0.1, 1e-310, std::numeric_limits<double>::quiet_NaN()};
  std::memcpy(d.rawData(), dv, sizeof dv);
  g.addConstant("f64", d);
  g.addConstant("f64_big", randomTensor(DType::kF64, {5, 7}, 9));
  g.addConstant("f16", randomTensor(DType::kF16, {4}, 10));
  g.addConstant("f16_big", randomTensor(DType::kF16, {40}, 11));
  g.addConstant("bf16", randomTensor(DType::kBF16, {2, 3}, 12));
  Tensor i32(DType::kI32, {3});
  int32_t iv[] = {-2147483647 - 1, 0, 2147483647};
  std::memcpy(i32.rawData(), iv, sizeof iv);
  g.addConstant("i32", i32);
  Tensor i64(DType::kI64, {2});
  int64_t lv[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  std::memcpy(i64.rawData(), lv, sizeof lv);
  g.addConstant("i64", i64);
  g.addConstant("i8", randomTensor(DType::kI8, {2, 2}, 13));
  Tensor u8(DType::kU8, {3});
  u8.data<uint8_t>()[0] = 255;
  u8.data<uint8_t>()[2] = 7;
  g.addConstant("u8", u8);
  Tensor b(DType::kBool, {5});
  b.data<uint8_t>()[1] = b.data<uint8_t>()[4] = 1;
  g.addConstant("bools", b);
  Tensor bl(DType::kBool, {3, 7});
  for (int64_t i = 0; i < bl.numel(); ++i) bl.data<uint8_t>()[i] = (i * 7 % 3) == 0;
  g.addConstant("bools_big", bl);
  Tensor scalar(DType::kF32, {});
  scalar.data<float>()[0] = 2.5f;
  g.addConstant("scalar", scalar);
  g.addConstant("empty", Tensor(DType::kF32, {0, 4}));
  Tensor ones(DType::kF32, {64});
  for (int64_t i = 0; i < 64; ++i) ones.data<float>()[i] = 1.0f;
  g.addConstant("ones", ones);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expectConstantsBitExact(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.constants().size(), b.constants().size());
  for (size_t i = 0; i < a.constants().size(); ++i) {
    const Tensor& x = *a.constants()[i];
    const Tensor& y = *b.constants()[i];
    ASSERT_EQ(x.dtype(), y.dtype()) << i;
    ASSERT_EQ(x.shape(), y.shape()) << i;
    ASSERT_EQ(std::memcmp(x.rawData(), y.rawData(), x.byteSize()), 0) << "constant " << i << " differs";
  }
}

TEST(Text, GoldenElided) {
  Graph g = buildModel(false);
  std::string printed = printGraph(g, {.elideWeights = true});
  if (std::getenv("CAGR_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(kGoldenPath, std::ios::binary) << printed;
  }
  EXPECT_EQ(printed, readFile(kGoldenPath)) << "set CAGR_UPDATE_GOLDEN=1 to rewrite " << kGoldenPath;
}

TEST(Text, PrintParsePrintIsIdentityElided) {
  Graph g = buildModel(false);
  std::string a = printGraph(g, {.elideWeights = true});
  auto back = parseGraph(a);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(*back, {.elideWeights = true}), a);
  EXPECT_TRUE(back->verify().isOk());
  // Elided constants read back as zeros of the right type.
  const Tensor* w = back->constant(back->nodes()[0].inputs[1]);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape(), (std::vector<int64_t>{8, 13}));
  EXPECT_EQ(w->getF64(5), 0.0);
}

TEST(Text, PrintParsePrintIsIdentityWithWeights) {
  Graph g = buildModel(true);
  addTrickyConstants(g);
  std::string a = printGraph(g);
  auto back = parseGraph(a);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(*back), a);
  expectConstantsBitExact(g, *back);
  // The structure survives exactly: names, attributes, absent operands, symbols.
  ASSERT_EQ(back->nodes().size(), g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    EXPECT_EQ(back->nodes()[i].name, g.nodes()[i].name);
    EXPECT_EQ(back->nodes()[i].inputs.size(), g.nodes()[i].inputs.size());
  }
  EXPECT_EQ(back->nodes()[3].inputs[2], kNoValue);
  EXPECT_EQ(back->symbols(), g.symbols());
  EXPECT_EQ(back->type(back->inputs()[1]).dims, g.type(g.inputs()[1]).dims);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    EXPECT_EQ(back->value(back->outputs()[i]).name, g.value(g.outputs()[i]).name);
  }
}

// Large constants printed to a weights stream come back bit-exact as views of
// it (no copy); without the stream, or with one too short, parsing names the
// constant (issue 39: a multi-GB plan is not hex text).
TEST(Text, WeightsStreamRoundTripsLargeConstantsAsViews) {
  Graph g = buildModel(true);
  addTrickyConstants(g);
  std::ostringstream bin;
  WeightsSink sink{&bin, 256};
  std::string text = printGraph(g, PrintOptions{false, "main", &sink});
  ASSERT_GT(sink.size, 0u);
  EXPECT_NE(text.find("weights_offset = "), std::string::npos);
  auto bytes = std::make_shared<std::string>(bin.str());
  ASSERT_EQ(bytes->size(), sink.size);
  WeightsBlob blob{bytes, reinterpret_cast<std::byte*>(bytes->data()), bytes->size(), "w.bin"};
  auto back = parseGraph(text, "t.mlir", &blob);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  expectConstantsBitExact(g, *back);
  bool viewed = false;
  for (size_t v = 0; v < back->numValues(); ++v) {
    if (!back->isConstant(static_cast<ValueId>(v))) continue;
    const std::byte* p = back->constant(static_cast<ValueId>(v))->rawData();
    viewed = viewed || (p >= blob.data && p < blob.data + blob.size);
  }
  EXPECT_TRUE(viewed) << "large constants should point into the weights blob";
  EXPECT_EQ(printGraph(*back), printGraph(g));

  auto none = parseGraph(text, "t.mlir");
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("weights file"), std::string::npos) << none.status().message();
  WeightsBlob shortBlob = blob;
  shortBlob.size = blob.size / 2;
  auto cut = parseGraph(text, "t.mlir", &shortBlob);
  ASSERT_FALSE(cut.isOk());
  EXPECT_NE(cut.status().message().find("lies outside weights file 'w.bin'"), std::string::npos)
      << cut.status().message();
}

// Found by fuzz/ir_text_fuzz.cc: a plan declaring a 25 GB elided constant
// made the parser zero-fill it. A constant the file holds no data for is now
// zero pages nobody touches; a non-zero splat may fill at most 1 GiB.
TEST(Text, ConstantsWithoutDataCostNoMemory) {
  const std::string head = "\"builtin.module\"() ({\n  \"cagr.graph\"() ({\n  ^bb0(%arg0: tensor<?x4xf32>):\n";
  const std::string tail =
      "    \"cagr.return\"(%0) : (tensor<8x777775513xf32>) -> ()\n  }) {sym_name = \"main\", input_names = "
      "[\"x\"], input_dims = [\"N,4\"], output_names = [\"y\"], symbols = [\"N\"]} : () -> ()\n}) : () -> ()\n";
  auto elided = parseGraph(head + "    %0 = \"cagr.constant\"() {elided, name = \"w\"} : () -> tensor<8x777775513xf32>\n" +
                           tail);
  ASSERT_TRUE(elided.isOk()) << elided.status().message();
  auto zero = parseGraph(head + "    %0 = \"cagr.constant\"() {name = \"w\", value = dense<0.0> : "
                                "tensor<8x777775513xf32>} : () -> tensor<8x777775513xf32>\n" + tail);
  ASSERT_TRUE(zero.isOk()) << zero.status().message();
  auto ones = parseGraph(head + "    %0 = \"cagr.constant\"() {name = \"w\", value = dense<1.0> : "
                                "tensor<8x777775513xf32>} : () -> tensor<8x777775513xf32>\n" + tail);
  ASSERT_FALSE(ones.isOk());
  EXPECT_NE(ones.status().message().find("at most 1 GiB"), std::string::npos) << ones.status().message();
}

// The integrity line: any altered byte of the text, a truncation, a missing
// line or a malformed weights field is refused.
TEST(Text, PlanSealDetectsDamage) {
  const std::string text = printGraph(buildModel(true));
  const std::string sealed = sealPlan(text, PlanWeights{"p.cagr.weights", 128, 0x1234});
  auto ok = unsealPlan(sealed, "p.cagr");
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  EXPECT_EQ(ok->text, text);
  EXPECT_EQ(ok->weights.file, "p.cagr.weights");
  EXPECT_EQ(ok->weights.bytes, 128u);
  EXPECT_EQ(ok->weights.hash, 0x1234u);
  std::mt19937 rng(7);
  size_t body = sealed.find('\n') + 1;
  for (int i = 0; i < 20; ++i) {
    std::string bad = sealed;
    size_t at = body + rng() % (bad.size() - body);
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    EXPECT_FALSE(unsealPlan(bad, "p.cagr").isOk()) << "byte " << at;
  }
  EXPECT_FALSE(unsealPlan(sealed.substr(0, sealed.size() - 1), "p.cagr").isOk());
  EXPECT_FALSE(unsealPlan(text, "p.cagr").isOk());
  std::string escape = sealPlan(text, PlanWeights{"../../etc/passwd", 1, 1});
  EXPECT_FALSE(unsealPlan(escape, "p.cagr").isOk());
}

TEST(Text, RenamedValuesAndUnusualNamesRoundTrip) {
  Graph g;
  ValueId x = g.addInput("in \"quoted\"\n\\", {DType::kF32, {symDim(kBatchSymbol, 26), 4}});
  ValueId r = must(g.add(OpKind::kRelu, {x}, {}, "r"));
  g.mutableValue(r).name = "renamed";
  ValueId s = must(g.add(OpKind::kSigmoid, {r}, {}, ""));
  g.addOutput(s, "out");
  g.addOutput(x, "");
  std::string a = printGraph(g);
  EXPECT_NE(a.find("result_names = [\"renamed\"]"), std::string::npos) << a;
  EXPECT_NE(a.find("\"26N,4\""), std::string::npos) << a;
  auto back = parseGraph(a);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(*back), a);
  EXPECT_EQ(back->value(back->inputs()[0]).name, g.value(x).name);
  EXPECT_EQ(back->type(back->inputs()[0]).dims, g.type(x).dims);
  EXPECT_EQ(back->value(back->nodes()[0].outputs[0]).name, "renamed");
}

// --- mlir-opt round trip ---
bool haveMlirOpt() { return std::system("command -v mlir-opt-15 >/dev/null 2>&1") == 0; }

// Runs mlir-opt-15 on `text`; returns its stdout, or "" with a failure recorded.
std::string runMlirOpt(const std::string& text, const std::string& flags) {
  auto dir = std::filesystem::temp_directory_path();
  std::string in = (dir / ("cagr_text_" + std::to_string(::getpid()) + ".mlir")).string();
  std::ofstream(in, std::ios::binary) << text;
  std::string cmd = "mlir-opt-15 --allow-unregistered-dialect " + flags + " " + in + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int rc = pclose(p);
  std::filesystem::remove(in);
  EXPECT_EQ(rc, 0) << out.substr(0, 2000);
  return rc == 0 ? out : "";
}

void expectMlirOptRoundTrip(const Graph& g, const PrintOptions& opts, const std::string& flags) {
  std::string printed = printGraph(g, opts);
  std::string reprinted = runMlirOpt(printed, flags);
  ASSERT_FALSE(reprinted.empty());
  auto back = parseGraph(reprinted, "mlir-opt");
  ASSERT_TRUE(back.isOk()) << back.status().message() << "\n" << reprinted.substr(0, 3000);
  EXPECT_EQ(printGraph(*back, opts), printed);
  if (!opts.elideWeights) expectConstantsBitExact(g, *back);
}

TEST(Text, MlirOptRoundTripElided) {
  if (!haveMlirOpt()) GTEST_SKIP() << "mlir-opt-15 not on PATH";
  expectMlirOptRoundTrip(buildModel(false), {.elideWeights = true}, "--mlir-print-op-generic");
}

TEST(Text, MlirOptRoundTripWithWeights) {
  if (!haveMlirOpt()) GTEST_SKIP() << "mlir-opt-15 not on PATH";
  Graph g = buildModel(true);
  addTrickyConstants(g);
  expectMlirOptRoundTrip(g, {}, "--mlir-print-op-generic");
}

TEST(Text, MlirOptCustomFormWithLocationsParses) {
  if (!haveMlirOpt()) GTEST_SKIP() << "mlir-opt-15 not on PATH";
  Graph g = buildModel(true);
  addTrickyConstants(g);
  expectMlirOptRoundTrip(g, {}, "--mlir-print-debuginfo");
}

TEST(Text, MlirOptElidedLargeConstantsReadAsZeros) {
  if (!haveMlirOpt()) GTEST_SKIP() << "mlir-opt-15 not on PATH";
  Graph g = buildModel(true);
  std::string reprinted =
      runMlirOpt(printGraph(g), "--mlir-print-op-generic --mlir-elide-elementsattrs-if-larger=16");
  ASSERT_NE(reprinted.find("opaque<\"elided_large_const\""), std::string::npos);
  auto back = parseGraph(reprinted);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(*back, {.elideWeights = true}), printGraph(g, {.elideWeights = true}));
  EXPECT_EQ(back->constants()[0]->getF64(0), 0.0);  // fc1.weight, 104 elements: elided
  EXPECT_EQ(back->constants()[1]->getF64(0), g.constants()[1]->getF64(0));  // fc1.bias, 8: kept
}

// --- parse errors ---
// Replaces the first `from` in `text` by `to`; returns the 1-based line of the edit.
int edit(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' in the text";
  if (at == std::string::npos) return 0;
  text.replace(at, from.size(), to);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(at), '\n'));
}

std::string parseError(const std::string& text) {
  auto r = parseGraph(text, "model.mlir");
  EXPECT_FALSE(r.isOk());
  return r.isOk() ? "" : r.status().message();
}

std::string lineTag(int line) { return "model.mlir:" + std::to_string(line) + ":"; }

class TextErrors : public ::testing::Test {
 protected:
  std::string text = printGraph(buildModel(false), {.elideWeights = true});
};

TEST_F(TextErrors, UnknownOp) {
  int line = edit(text, "\"cagr.sigmoid\"", "\"cagr.frobnicate\"");
  std::string m = parseError(text);
  EXPECT_NE(m.find(lineTag(line)), std::string::npos) << m;
  EXPECT_NE(m.find("unknown CAGR op 'cagr.frobnicate'"), std::string::npos) << m;
}

TEST_F(TextErrors, TruncatedText) {
  const std::string op = "\"cagr.interaction\"(%11)";
  std::string cut = text.substr(0, text.find(op) + op.size());
  int lines = 1 + static_cast<int>(std::count(cut.begin(), cut.end(), '\n'));
  std::string m = parseError(cut);
  EXPECT_NE(m.find(lineTag(lines)), std::string::npos) << m;
  EXPECT_NE(m.find("expected ':', found end of input"), std::string::npos) << m;
  // Cut anywhere: always an error, never a crash.
  for (size_t n = 0; n < text.size(); n += 7) EXPECT_FALSE(parseGraph(text.substr(0, n)).isOk()) << n;
}

TEST_F(TextErrors, ResultTypeMismatch) {
  int line = edit(text, "-> tensor<?x8xf32>\n", "-> tensor<?x9xf32>\n");
  std::string m = parseError(text);
  EXPECT_NE(m.find(lineTag(line)), std::string::npos) << m;
  EXPECT_NE(m.find("result #0 of 'cagr.gemm' has type tensor<?x8xf32> (f32[N,8]) but the text says tensor<?x9xf32>"),
            std::string::npos)
      << m;
}

TEST_F(TextErrors, OperandTypeMismatch) {
  int line = edit(text, ": (tensor<?x3x8xf32>) -> tensor<?x3xf32>", ": (tensor<?x3x7xf32>) -> tensor<?x3xf32>");
  std::string m = parseError(text);
  EXPECT_NE(m.find(lineTag(line)), std::string::npos) << m;
  EXPECT_NE(m.find("operand #0 (%11) of 'cagr.interaction' has type tensor<?x3x8xf32>"), std::string::npos) << m;
}

TEST_F(TextErrors, UndefinedValue) {
  int line = edit(text, "\"cagr.interaction\"(%11)", "\"cagr.interaction\"(%99)");
  std::string m = parseError(text);
  EXPECT_NE(m.find(lineTag(line)), std::string::npos) << m;
  EXPECT_NE(m.find("use of undefined value '%99'"), std::string::npos) << m;
}

TEST_F(TextErrors, ShapeInferenceFailureNamesTheNode) {
  int line = edit(text, "split = [1, 2, 3]", "split = [1, 2, 4]");
  std::string m = parseError(text);
  EXPECT_NE(m.find(lineTag(line)), std::string::npos) << m;
  EXPECT_NE(m.find("node 'heads' (Split)"), std::string::npos) << m;
}

TEST_F(TextErrors, BadAttributesAndMasks) {
  std::string t1 = text;
  edit(t1, "transB = 1 : i64", "transB = \"yes\"");
  EXPECT_NE(parseError(t1).find("attribute 'transB' must be an integer"), std::string::npos);
  std::string t2 = text;
  edit(t2, "operand_mask = [1, 1, 0, 1]", "operand_mask = [0, 1, 1, 1]");
  EXPECT_NE(parseError(t2).find("operand 0 of 'cagr.embedding_bag' is not optional"), std::string::npos);
  std::string t3 = text;
  edit(t3, "symbols = [\"N\", \"L\"]", "symbols = [\"N\"]");
  EXPECT_NE(parseError(t3).find("dimension 'L' in input_dims names no symbol"), std::string::npos);
  std::string t4 = text;
  edit(t4, "{elided, name = \"fc1.bias\"}", "{name = \"fc1.bias\", value = dense<\"0x0000\"> : tensor<8xf32>}");
  EXPECT_NE(parseError(t4).find("hex data has 2 bytes but tensor<8xf32> needs 32"), std::string::npos);
}

TEST_F(TextErrors, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(7);
  const std::string alphabet = "%#\"()[]{}<>:=,-x?0123456789abcfi.^ \n";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string t = text;
    for (int k = 0; k < 1 + iter % 3; ++k) {
      size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0:
          t[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          t.erase(at, 1 + rng() % 8);
          break;
        default:
          t.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
      }
    }
    auto r = parseGraph(t);
    if (!r.isOk()) {
      EXPECT_EQ(r.status().message().rfind("<text>:", 0), 0u) << r.status().message();
    }
  }
}

TEST(TextParse, AcceptsMlirSpellings) {
  // Alphabetical attributes, renumbered values, `%a, %b =` results, comments,
  // aliases, locations, f32 in MLIR's %e style, bools, splat and nested dense.
  const char* src = R"mlir(
// a comment
#loc0 = loc(unknown)
module {
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x2xf32> loc(#loc0)):
    %w = "cagr.constant"() {name = "w", value = dense<[[1.000000e+00, 0x7FC00000], [-2.5, 3]]> : tensor<2x2xf32>}
         : () -> tensor<2x2xf32> loc("f.py":3:1)
    %c = "cagr.constant"() {value = dense<true> : tensor<2xi1>} : () -> tensor<2xi1>
    %y = "cagr.matmul"(%x, %w) {name = "mm"} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
    %a, %b = "cagr.split"(%y) {split = [1, 1], axis = 1} : (tensor<?x2xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>)
    %z = "cagr.leaky_relu"(%b) {alpha = 2.000000e-01 : f64} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%z, %a, %c) : (tensor<?x1xf32>, tensor<?x1xf32>, tensor<2xi1>) -> ()
  }) {symbols = ["N"], output_names = ["z", "a", "c"], input_names = ["x"], input_dims = ["N,2"]} : () -> ()
} loc(#loc0)
)mlir";
  auto g = parseGraph(src);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  const Tensor* w = g->constant(g->nodes()[0].inputs[1]);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->data<float>()[0], 1.0f);
  EXPECT_TRUE(std::isnan(w->data<float>()[1]));
  EXPECT_EQ(w->data<float>()[2], -2.5f);
  EXPECT_EQ(w->data<float>()[3], 3.0f);
  EXPECT_EQ(g->nodes()[1].attrs.getInts("split"), (std::vector<int64_t>{1, 2 - 1}));
  EXPECT_EQ(g->nodes()[1].attrs.items()[0].first, "axis");  // schema order
  EXPECT_DOUBLE_EQ(g->nodes()[2].attrs.getFloat("alpha"), 0.2);
  EXPECT_EQ(g->value(g->outputs()[0]).name, "z");
  EXPECT_EQ(g->constant(g->outputs()[2])->data<uint8_t>()[1], 1);
}

}  // namespace
}  // namespace cagr
