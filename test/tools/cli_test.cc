// The cagr binary end to end: inspect/run/export with --json, and every kind
// of bad input failing with one clear message and a non-zero exit.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "cagr/npz.h"
#include "cagr/reference.h"
#include "common/run_cli.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;

using Result = cagr::testing::CliResult;
void expectCleanFailure(const Result& r, const std::vector<std::string>& mustMention);  // below
Result cagr(const std::string& args) { return cagr::testing::runCagr(args); }

std::string src(const std::string& rel) { return std::string(CAGR_SOURCE_DIR) + "/" + rel; }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cagr_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string tmp(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(CliTest, InspectJsonHasTheCommonFieldsAndPerNodeCounts) {
  Result r = cagr("inspect " + src("zoo/onnx/deepfm.dynamo.onnx") + " --json --batch 128");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"model", "target", "policy", "latency_ms", "latency_kind", "baseline_latency_ms",
                          "peak_memory_bytes", "optimize_seconds", "decisions"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  bool sawFm = false;
  for (const auto& n : j["nodes"]) {
    sawFm = sawFm || n["op"] == "FM";
    EXPECT_GE(n["flops"].get<double>(), 0.0);
  }
  EXPECT_TRUE(sawFm);
  EXPECT_GT(j["totals"]["flops"].get<double>(), 1e6);  // the 400-400-400 DNN alone is ~40 MFLOP at 128
}

TEST_F(CliTest, RunWritesOutputsMatchingOnnxRuntime) {
  std::string out = tmp("y.npz");
  Result r = cagr("run " + src("zoo/onnx/dlrm_criteo.ts.onnx") + " --inputs " + src("zoo/ref/dlrm_criteo.b7.inputs.npz") +
                  " --output " + out + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["latency_kind"].get<std::string>().rfind("measured", 0), 0u);
  auto got = readNpz(out);
  auto want = readNpz(src("zoo/ref/dlrm_criteo.ts.b7.outputs.npz"));
  ASSERT_TRUE(got.isOk() && want.isOk());
  auto cmp = compareTensors(*findArray(*got, "prob", out), *findArray(*want, "prob", "ref"), 1e-5, 0);
  EXPECT_TRUE(cmp.close) << cmp.message;
}

// Every policy's plan, written by `cagr optimize` and executed by `cagr run`,
// reproduces ONNX Runtime's outputs of the original model.
TEST_F(CliTest, OptimizeWritesPlansThatRunAndMatchTheModel) {
  for (const char* policy : {"none", "greedy", "beam:2", "random"}) {
    SCOPED_TRACE(policy);
    std::string plan = tmp(std::string("plan_") + (policy[0] == 'b' ? "beam" : policy) + ".cagr");
    Result o = cagr("optimize " + src("zoo/onnx/dlrm_criteo.dynamo.onnx") + " --target h200 --policy " + policy +
                    " --batch 512 --lambda-m 0 --json -o " + plan);
    ASSERT_EQ(o.code, 0) << o.out;
    auto j = nlohmann::json::parse(o.out);
    EXPECT_EQ(j["latency_kind"], "modelled");
    EXPECT_EQ(j["target"], "h200");
    EXPECT_LE(j["latency_ms"].get<double>(), j["baseline_latency_ms"].get<double>() * (policy[0] == 'r' ? 10 : 1));
    for (const auto& d : j["decisions"]) EXPECT_TRUE(d.contains("gain_ms_modelled") && d.contains("kind"));
    if (std::string(policy) == "greedy") {
      EXPECT_GT(j["decisions"].size(), 3u);
    }
    std::string out = tmp("y.npz");
    Result r = cagr("run " + plan + " --inputs " + src("zoo/ref/dlrm_criteo.b7.inputs.npz") + " --output " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    auto got = readNpz(out);
    auto want = readNpz(src("zoo/ref/dlrm_criteo.dynamo.b7.outputs.npz"));
    ASSERT_TRUE(got.isOk() && want.isOk());
    // Default plans are lossless: f32 math and tables, within 1e-5 of ONNX Runtime.
    auto cmp = compareTensors(*findArray(*got, "prob", out), *findArray(*want, "prob", "ref"), 1e-5, 0);
    EXPECT_TRUE(cmp.close) << cmp.message;
    std::ifstream f(plan);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("cagr.storage"), std::string::npos) << policy;
    EXPECT_EQ(text.find("cagr.math"), std::string::npos) << policy;
  }
}

TEST_F(CliTest, OptimizeRejectsUnknownTargetsAndPolicies) {
  Result t = cagr("optimize " + src("zoo/onnx/deepfm.ts.onnx") + " --target pdp-11");
  EXPECT_NE(t.code, 0);
  EXPECT_NE(t.out.find("pdp-11"), std::string::npos) << t.out;
  Result p = cagr("optimize " + src("zoo/onnx/deepfm.ts.onnx") + " --target cpu --policy psychic");
  EXPECT_NE(p.code, 0);
  EXPECT_NE(p.out.find("unknown policy 'psychic'"), std::string::npos) << p.out;
}

// `cagr optimize --precision` makes the plan `cagr bench --target cuda
// --precision` times: fp32 keeps f32 math, tf32 may choose tf32 math only,
// bf16 bf16 math and tables; unknown words, and precisions the profile has
// no kernels for, are refused.
TEST_F(CliTest, OptimizePrecisionLimitsTheMathOfCudaPlans) {
  auto mathOf = [&](const std::string& precision) {
    const std::string plan = tmp("p_" + precision + ".cagr");
    const std::string hw = src("bench/results/hw/h200-probed.json");
    Result r = cagr("optimize " + src("zoo/onnx/dlrm_criteo.ts.onnx") + " --hw " + hw + " --batch 4096 --precision " +
                    precision + " -o " + plan);
    EXPECT_EQ(r.code, 0) << r.out;
    std::ifstream f(plan);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::string kinds;
    for (const char* m : {"tf32", "bf16", "f16"}) {
      if (text.find(std::string("cagr.math = \"") + m + "\"") != std::string::npos) kinds += std::string(m) + " ";
    }
    return kinds;
  };
  EXPECT_EQ(mathOf("fp32"), "");
  EXPECT_EQ(mathOf("tf32"), "tf32 ");
  EXPECT_EQ(mathOf("bf16"), "bf16 ");
  Result bad = cagr("optimize " + src("zoo/onnx/dlrm_criteo.ts.onnx") + " --hw " +
                    src("bench/results/hw/h200-probed.json") + " --precision fp8");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("--precision fp8: unknown precision 'fp8'"), std::string::npos) << bad.out;
  Result cpu = cagr("optimize " + src("zoo/onnx/dlrm_criteo.ts.onnx") + " --target cpu --precision tf32");
  EXPECT_NE(cpu.code, 0);
  EXPECT_NE(cpu.out.find("has no tf32 math"), std::string::npos) << cpu.out;
  Result both = cagr("optimize " + src("zoo/onnx/dlrm_criteo.ts.onnx") + " --target cpu --fp32 --precision bf16");
  EXPECT_NE(both.code, 0);
}

// Reduced precision is opt-in under a measured budget: the plan records the
// budget and the error measured on the calibration batch, which stays within
// it; a budget no wide int8 table meets keeps those tables f32.
TEST_F(CliTest, OptimizeMeasuresThePrecisionBudget) {
  const std::string model = src("zoo/onnx/deepfm.ts.onnx");
  const std::string plan = tmp("int8.cagr");
  Result r = cagr("optimize " + model + " --target cpu --precision int8-tables --max-error 1e-2 --calibration " +
                  src("zoo/ref/deepfm.b7.inputs.npz") + " --json -o " + plan);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["precision"], "int8-tables");
  EXPECT_DOUBLE_EQ(j["max_error"].get<double>(), 1e-2);
  EXPECT_GE(j["measured_error"].get<double>(), 0);
  EXPECT_LE(j["measured_error"].get<double>(), 1e-2);
  // The plan runs within the measured error of the f32 model on that batch.
  std::string out = tmp("int8.npz");
  Result run = cagr("run " + plan + " --inputs " + src("zoo/ref/deepfm.b7.inputs.npz") + " --output " + out);
  ASSERT_EQ(run.code, 0) << run.out;
  Result tight = cagr("optimize " + model + " --target cpu --precision int8-tables --max-error 1e-9 --json");
  ASSERT_EQ(tight.code, 0) << tight.out;
  auto jt = nlohmann::json::parse(tight.out);
  EXPECT_LE(jt["measured_error"].get<double>(), 1e-9);
  EXPECT_FALSE(jt["kept_f32"].empty()) << tight.out;  // the wide tables stay f32
  Result nan = cagr("optimize " + model + " --target cpu --precision bf16 --max-error -1");
  EXPECT_NE(nan.code, 0);
}

TEST_F(CliTest, BenchTimesBothPlansOnTheCpuBackend) {
  Result r = cagr("bench " + src("zoo/onnx/dlrm_criteo.dynamo.onnx") +
                  " --target cpu --batch 32 --seconds 0 --runs 2 --lambda-m 0.3 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["lambda_m"].get<double>(), 0.3);
  EXPECT_EQ(j["latency_kind"].get<std::string>().rfind("measured", 0), 0u);
  EXPECT_GT(j["latency_ms"].get<double>(), 0);
  EXPECT_GT(j["baseline_latency_ms"].get<double>(), 0);
  EXPECT_GT(j["peak_memory_bytes"].get<int64_t>(), 0);
  EXPECT_GE(j["optimized"]["runs"].get<int>(), 2);
  EXPECT_EQ(j["precision"], "fp32");  // plans stay fp32 unless --precision asks for more
  EXPECT_LT(j["max_abs_diff_vs_unoptimized"].get<double>(), 1e-4);
  // Without a GPU (or a CUDA build): one clear error; with one, the CUDA path's JSON.
  Result gpu = cagr("bench " + src("zoo/onnx/deepfm.ts.onnx") + " --target cuda --batch 8 --json");
  if (gpu.code != 0) {
    EXPECT_NE(gpu.out.find("CUDA"), std::string::npos) << gpu.out;
  } else {
    EXPECT_EQ(nlohmann::json::parse(gpu.out)["target"], "cuda") << gpu.out;
  }
}

TEST_F(CliTest, BenchRefusesANegativeMemoryWeight) {
  Result r = cagr("bench " + src("zoo/onnx/dlrm_criteo.dynamo.onnx") + " --target cpu --lambda-m -1");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--lambda-m"), std::string::npos) << r.out;
}

TEST_F(CliTest, ExportPrintsMlirText) {
  Result r = cagr("export " + src("zoo/onnx/xdeepfm.dynamo.onnx") + " --format mlir --elide-weights");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"cagr.cin\""), std::string::npos);
}

#if CAGR_HAVE_CUDA
// The CUDA module of a plan without a GPU: the steps listed, every generated
// kernel's entry in the source, and NVRTC compiles it for the arch asked.
TEST_F(CliTest, ExportCudaWritesTheGeneratedModuleAndItCompiles) {
  const std::string plan = tmp("dlrm.cagr");
  ASSERT_EQ(cagr("optimize " + src("zoo/onnx/dlrm_criteo.dynamo.onnx") + " --target h200 --batch 4096 -o " + plan).code,
            0);
  const std::string cu = tmp("dlrm.cu");
  Result r = cagr("export " + plan + " --format cuda --compile --arch sm_80 -o " + cu);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("compiled with NVRTC for sm_80"), std::string::npos) << r.out;
  std::ifstream in(cu);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("// CUDA module CAGR generates for ", 0), 0u) << text.substr(0, 200);
  EXPECT_NE(text.find("// Steps in issue order"), std::string::npos);
  EXPECT_NE(text.find("nvrtc.interaction"), std::string::npos);
  EXPECT_NE(text.find("extern \"C\" __global__"), std::string::npos);
  expectCleanFailure(cagr("export " + plan + " --format cuda --hw x86-64"), {"x86-64", "NVIDIA"});
  expectCleanFailure(cagr("export " + plan + " --format cuda --arch sm_x"), {"--arch", "sm_x"});
  expectCleanFailure(cagr("export " + plan + " --format ptx"), {"--format ptx"});
}
#endif

// ---- bad input: one line naming the culprit, exit code 1 ----
void expectCleanFailure(const Result& r, const std::vector<std::string>& mustMention) {
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("cagr: error: ", 0), 0u) << r.out;
  for (const auto& m : mustMention) EXPECT_NE(r.out.find(m), std::string::npos) << "missing '" << m << "' in: " << r.out;
}

TEST_F(CliTest, UnreadablePath) {
  expectCleanFailure(cagr("inspect " + tmp("nope.onnx")), {"nope.onnx", "no such file"});
}

TEST_F(CliTest, CorruptOnnx) {
  std::ofstream(tmp("junk.onnx")) << "this is not a protobuf \xff\xfe\x01 at all";
  expectCleanFailure(cagr("inspect " + tmp("junk.onnx")), {"junk.onnx", "not a valid ONNX model"});
}

TEST_F(CliTest, TruncatedOnnx) {
  std::ifstream in(src("zoo/onnx/deepfm.ts.onnx"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(tmp("cut.onnx"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expectCleanFailure(cagr("inspect " + tmp("cut.onnx")), {"cut.onnx", "not a valid ONNX model"});
}

// A one-node model with an op CAGR does not support.
void writeUnsupportedModel(const std::string& path) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto addValue = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("B");
    t->mutable_shape()->add_dim()->set_dim_value(4);
  };
  addValue(g->add_input(), "x");
  addValue(g->add_output(), "y");
  auto* n = g->add_node();
  n->set_op_type("Hardmax");
  n->set_name("the_hardmax");
  n->add_input("x");
  n->add_output("y");
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
}

TEST_F(CliTest, UnsupportedOpNamesOpNodeAndOpset) {
  writeUnsupportedModel(tmp("hardmax.onnx"));
  expectCleanFailure(cagr("inspect " + tmp("hardmax.onnx")), {"Hardmax", "the_hardmax", "opset 17"});
}

TEST_F(CliTest, WrongInputShape) {
  Tensor dense(DType::kF32, {4, 12});
  Tensor sparse(DType::kI64, {4, 26});
  ASSERT_TRUE(writeNpz(tmp("x.npz"), {{"dense", dense}, {"sparse", sparse}}).isOk());
  expectCleanFailure(cagr("run " + src("zoo/onnx/dcnv2.ts.onnx") + " --inputs " + tmp("x.npz")), {"'dense'", "13"});
}

TEST_F(CliTest, WrongInputDtype) {
  Tensor dense(DType::kF32, {4, 13});
  Tensor sparse(DType::kF32, {4, 26});
  ASSERT_TRUE(writeNpz(tmp("x.npz"), {{"dense", dense}, {"sparse", sparse}}).isOk());
  expectCleanFailure(cagr("run " + src("zoo/onnx/dcnv2.ts.onnx") + " --inputs " + tmp("x.npz")), {"'sparse'", "i64"});
}

TEST_F(CliTest, MissingNpzKey) {
  Tensor dense(DType::kF32, {4, 13});
  ASSERT_TRUE(writeNpz(tmp("x.npz"), {{"dense", dense}}).isOk());
  expectCleanFailure(cagr("run " + src("zoo/onnx/dcnv2.ts.onnx") + " --inputs " + tmp("x.npz")), {"sparse"});
}

TEST_F(CliTest, CorruptNpz) {
  std::ofstream(tmp("bad.npz")) << "PK but not really";
  expectCleanFailure(cagr("run " + src("zoo/onnx/dcnv2.ts.onnx") + " --inputs " + tmp("bad.npz")), {"bad.npz"});
}

TEST_F(CliTest, OutOfRangeEmbeddingIdNamesTheNode) {
  auto in = readNpz(src("zoo/ref/deepfm.b4.inputs.npz"));
  ASSERT_TRUE(in.isOk());
  Tensor sparse = findArray(*in, "sparse", "ref")->clone();
  sparse.data<int64_t>()[0] = 1 << 30;
  ASSERT_TRUE(writeNpz(tmp("x.npz"), {{"sparse", sparse}}).isOk());
  expectCleanFailure(cagr("run " + src("zoo/onnx/deepfm.dynamo.onnx") + " --inputs " + tmp("x.npz")),
                     {"Gather", "out of range"});
}

// Odd numeric flags are refused before any work (issue 40: --runs 0
// --seconds 0 indexed an empty vector, --batch -1 / 1e12 and --threads
// 100000 aborted, beam:1000000 and --seconds inf hung).
TEST_F(CliTest, OddNumericFlagsAreRefusedCleanly) {
  const std::string model = src("zoo/onnx/deepfm.ts.onnx");
  for (const std::string& flags : {std::string("bench ") + model + " --runs 0 --seconds 0",
                                   std::string("bench ") + model + " --batch -1",
                                   std::string("bench ") + model + " --batch 1000000000000",
                                   std::string("bench ") + model + " --threads 100000",
                                   std::string("bench ") + model + " --seconds inf",
                                   std::string("optimize ") + model + " --policy beam:1000000",
                                   std::string("optimize ") + model + " --policy beam:2x",
                                   std::string("optimize ") + model + " --batch 0",
                                   std::string("inspect ") + model + " --batch -5"}) {
    Result r = cagr(flags);
    EXPECT_NE(r.code, 0) << flags;
    EXPECT_LE(r.code, 4) << flags << ": " << r.out;  // an exit code, not a signal
    EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << flags << ": " << r.out;
  }
}

// An --output that is a symlink or a special file is not replaced by a
// regular file (issue 40: --output /dev/null, as root, broke the machine).
TEST_F(CliTest, OutputNeverReplacesASymlinkOrDevice) {
  const std::string inputs = src("zoo/ref/deepfm.b7.inputs.npz");
  const std::string target = tmp("kept.txt"), link = tmp("link.npz");
  std::ofstream(target) << "keep me";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(target, link);
  Result r = cagr("run " + src("zoo/onnx/deepfm.ts.onnx") + " --inputs " + inputs + " --output " + link);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  std::ifstream kept(target);
  std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep me");
  Result dev = cagr("run " + src("zoo/onnx/deepfm.ts.onnx") + " --inputs " + inputs + " --output /dev/null");
  EXPECT_NE(dev.code, 0);
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}

// A plan is sealed by a checksum line over its text and its weights file:
// a flipped byte in either, a truncation, a missing line or a missing weights
// file is refused; the intact plan runs (issue 40).
TEST_F(CliTest, TamperedOrTruncatedPlansAreRefused) {
  const std::string plan = tmp("sealed.cagr"), weights = plan + ".weights";
  const std::string inputs = src("zoo/ref/deepfm.b7.inputs.npz");
  ASSERT_EQ(cagr("optimize " + src("zoo/onnx/deepfm.ts.onnx") + " --target cpu --batch 7 -o " + plan).code, 0);
  auto slurp = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  auto put = [](const std::string& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; };
  const std::string text = slurp(plan), bin = slurp(weights);
  ASSERT_TRUE(text.starts_with("// cagr-plan v1 fnv1a64=")) << text.substr(0, 80);
  ASSERT_NE(text.find("weights=sealed.cagr.weights"), std::string::npos) << text.substr(0, 200);
  ASSERT_FALSE(bin.empty());
  EXPECT_EQ(cagr("run " + plan + " --inputs " + inputs).code, 0);
  auto runWith = [&](const std::string& planText, const std::string& weightBytes) {
    put(plan, planText);
    put(weights, weightBytes);
    Result r = cagr("run " + plan + " --inputs " + inputs);
    EXPECT_NE(r.code, 0) << r.out;
    return r.out;
  };
  std::string flipped = text;
  flipped[flipped.size() / 2] ^= 0x01;
  EXPECT_NE(runWith(flipped, bin).find("checksum mismatch"), std::string::npos);
  std::string flippedBin = bin;
  flippedBin[bin.size() / 3] ^= 0x40;  // one bit of a weight
  std::string out = runWith(text, flippedBin);
  EXPECT_NE(out.find("weights file"), std::string::npos) << out;
  EXPECT_NE(out.find("checksum mismatch"), std::string::npos) << out;
  EXPECT_NE(runWith(text, bin.substr(0, bin.size() - 4)).find("sealed (truncated or replaced)"), std::string::npos);
  EXPECT_NE(runWith(text.substr(0, text.size() / 2), bin).find("truncated"), std::string::npos);
  EXPECT_NE(runWith(text.substr(text.find('\n') + 1), bin).find("no integrity line"), std::string::npos);
  put(plan, text);
  std::filesystem::remove(weights);
  Result missing = cagr("run " + plan + " --inputs " + inputs);
  EXPECT_NE(missing.out.find("is missing"), std::string::npos) << missing.out;
}

// Reading a FIFO (or a device) as a model, plan, inputs or profile fails at
// once instead of blocking on it (issue 40).
TEST_F(CliTest, SpecialFilesAreRefusedWithoutBlocking) {
  const std::string fifo = tmp("pipe.onnx"), fifoPlan = tmp("pipe.cagr"), fifoNpz = tmp("pipe.npz");
  for (const auto& p : {fifo, fifoPlan, fifoNpz}) {
    std::filesystem::remove(p);
    ASSERT_EQ(mkfifo(p.c_str(), 0600), 0) << p;
  }
  Result m = cagr("inspect " + fifo);
  EXPECT_NE(m.code, 0);
  EXPECT_NE(m.out.find("pipe.onnx"), std::string::npos) << m.out;
  Result p = cagr("run " + fifoPlan + " --inputs " + src("zoo/ref/deepfm.b7.inputs.npz"));
  EXPECT_NE(p.out.find("not a regular file"), std::string::npos) << p.out;
  Result i = cagr("run " + src("zoo/onnx/deepfm.ts.onnx") + " --inputs " + fifoNpz);
  EXPECT_NE(i.out.find("not a regular file"), std::string::npos) << i.out;
  Result h = cagr("optimize " + src("zoo/onnx/deepfm.ts.onnx") + " --hw /dev/zero");
  EXPECT_NE(h.out.find("not a regular file"), std::string::npos) << h.out;
}

TEST_F(CliTest, UnknownModelFormat) {
  std::ofstream(tmp("model.txt")) << "x";
  expectCleanFailure(cagr("inspect " + tmp("model.txt")), {"model.txt", "unknown model format"});
}

}  // namespace
}  // namespace cagr
