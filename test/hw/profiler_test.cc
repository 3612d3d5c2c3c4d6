// `cagr profile --target cpu`: the GEMM kernels agree with each other and with
// a naive loop; a quick-mode run yields a valid, fully measured profile; the
// CLI fails cleanly for CUDA. Never asserts timings (machines vary), only
// correctness and structure.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cagr/hw.h"
#include "cost/kernel_class.h"
#include "hw/microbench.h"
#include "hw/own_kernels.h"
#include "hw/profiler.h"
#include "common/run_cli.h"

namespace cagr {
namespace {

using hw::GemmKernel;
using hw::GemmShape;

// ------------------------------------------------------------------ GEMM

std::vector<float> naiveGemm(const GemmShape& s, const float* a, const float* b) {
  std::vector<float> c(s.m * s.n);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < s.k; ++k) acc += static_cast<double>(a[i * s.k + k]) * b[k * s.n + j];
      c[i * s.n + j] = static_cast<float>(acc);
    }
  }
  return c;
}

/// max |x - ref| / max |ref| (norm-wise relative difference).
double relDiff(const std::vector<float>& x, const std::vector<float>& ref) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(x[i] - ref[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
  }
  return diff / scale;
}

std::vector<float> runKernel(GemmKernel k, const GemmShape& s, hw::GemmBuffers& buf) {
  auto runner = hw::makeGemmRunner(k, s.m, s.k, s.n);
  EXPECT_TRUE(runner.isOk()) << runner.status().message();
  if (!runner.isOk()) return {};
  std::fill(buf.c.begin(), buf.c.end(), 12345.0f);  // results must not depend on C's old contents
  Status st = (*runner)->run(buf.a.data(), buf.b.data(), buf.bias.data(), buf.c.data());
  EXPECT_TRUE(st.isOk()) << st.message();
  return std::vector<float>(buf.c.begin(), buf.c.begin() + s.m * s.n);
}

// Fringes of the 6x16 register tile and of the 96/256/256 cache blocks.
const std::vector<GemmShape> kCorrectnessShapes = {
    {1, 1, 1},      {6, 16, 16},     {7, 13, 5},   {16, 16, 16},  {33, 65, 17},  {97, 257, 300},
    {100, 300, 37}, {192, 512, 272}, {4096, 1, 8}, {300, 512, 1}, {1, 512, 512}, {1000, 333, 77},
};

TEST(OwnGemm, MatchesNaiveTripleLoop) {
  hw::GemmBuffers buf = hw::makeGemmBuffers(kCorrectnessShapes);
  for (const GemmShape& s : kCorrectnessShapes) {
    std::vector<float> ref = naiveGemm(s, buf.a.data(), buf.b.data());
    std::vector<float> own = runKernel(GemmKernel::kOwn, s, buf);
    ASSERT_EQ(own.size(), ref.size());
    EXPECT_LE(relDiff(own, ref), 1e-5) << s.label();
  }
}

TEST(OwnGemm, LibrariesAgreeWithOwnGemm) {
  std::vector<GemmShape> shapes = kCorrectnessShapes;
  shapes.push_back({256, 64, 128});
  shapes.push_back({4096, 512, 1});
  hw::GemmBuffers buf = hw::makeGemmBuffers(shapes);
  for (const GemmShape& s : shapes) {
    std::vector<float> own = runKernel(GemmKernel::kOwn, s, buf);
    for (GemmKernel k : {GemmKernel::kOpenBlas, GemmKernel::kOneDnn}) {
      std::vector<float> lib = runKernel(k, s, buf);
      ASSERT_EQ(lib.size(), own.size());
      EXPECT_LE(relDiff(lib, own), 1e-3) << hw::gemmKernelName(k) << " " << s.label();
    }
  }
}

TEST(OwnGemm, OneDnnBiasReluVariantMatchesOwnGemmPlusBiasRelu) {
  hw::GemmBuffers buf = hw::makeGemmBuffers(kCorrectnessShapes);
  for (const GemmShape& s : kCorrectnessShapes) {
    std::vector<float> want = runKernel(GemmKernel::kOwn, s, buf);
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) want[i * s.n + j] = std::max(0.0f, want[i * s.n + j] + buf.bias[j]);
    std::vector<float> got = runKernel(GemmKernel::kOneDnnRelu, s, buf);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_LE(relDiff(got, want), 1e-3) << s.label();
  }
}

TEST(OwnGemm, RejectsEmptyShapes) {
  auto r = hw::makeGemmRunner(GemmKernel::kOneDnn, 0, 4, 4);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("0x4x4"), std::string::npos) << r.status().message();
}

// ------------------------------------------------------------------ pieces

TEST(Microbench, ShapeClasses) {
  EXPECT_EQ(hw::gemmShapeClass({16, 16, 16}), "gemm.tiny");
  EXPECT_EQ(hw::gemmShapeClass({256, 64, 128}), "gemm.small");
  EXPECT_EQ(hw::gemmShapeClass({1024, 512, 256}), "gemm.medium");
  EXPECT_EQ(hw::gemmShapeClass({1000, 333, 77}), gemmShapeClass(1000, 77, 333)) << "same as the cost model";
  EXPECT_EQ(hw::gemmShapeClass({4096, 1024, 1024}), "gemm.large");
  EXPECT_EQ(hw::gemmShapeClass({4096, 1, 512}), "gemm.skinny");
  EXPECT_EQ(hw::gemmShapeClass({4096, 512, 1}), "gemm.skinny");
  EXPECT_EQ(hw::gemmShapeClass({1, 512, 512}), "gemm.skinny");
  for (bool quick : {true, false}) {
    std::set<std::string> classes;
    for (const GemmShape& s : hw::gemmShapes(quick)) classes.insert(hw::gemmShapeClass(s));
    EXPECT_EQ(classes.size(), 5u) << "every class needs shapes (quick=" << quick << ")";
  }
}

TEST(Microbench, IdsStayInRangeAndZipfIsSkewed) {
  const int64_t rows = 100000;
  std::vector<int64_t> u = hw::uniformIds(20000, rows, 1);
  std::vector<int64_t> z = hw::zipfIds(20000, rows, 1.1, 2);
  std::map<int64_t, int> zCount, uCount;
  for (int64_t id : u) {
    ASSERT_GE(id, 0);
    ASSERT_LT(id, rows);
    ++uCount[id];
  }
  for (int64_t id : z) {
    ASSERT_GE(id, 0);
    ASSERT_LT(id, rows);
    ++zCount[id];
  }
  int zMax = 0, uMax = 0;
  for (auto& [id, c] : zCount) zMax = std::max(zMax, c);
  for (auto& [id, c] : uCount) uMax = std::max(uMax, c);
  EXPECT_GT(zMax, 20 * uMax) << "the hottest Zipf row should dominate";
  EXPECT_LT(zCount.size(), uCount.size());
}

TEST(Microbench, QuantilesInterpolate) {
  EXPECT_DOUBLE_EQ(hw::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(hw::quantile({0, 10}, 0.1), 1);
  EXPECT_DOUBLE_EQ(hw::quantile({}, 0.5), 0);
}

TEST(Microbench, OwnStreamingKernelsComputeWhatTheySay) {
  std::vector<float> a = {1, -2, 3, -4, 5}, b = {1, 1, -5, 1, 1}, y(5);
  hw::ownEltwiseAddRelu(a.data(), b.data(), y.data(), 5, 3);
  EXPECT_EQ(y, (std::vector<float>{2, 0, 0, 0, 6}));
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> sums(2);
  hw::ownRowSums(x.data(), 2, 3, sums.data());
  EXPECT_EQ(sums, (std::vector<float>{6, 15}));
  std::vector<float> table = {1, 2, 10, 20, 100, 200};  // 3 rows, dim 2
  std::vector<int64_t> ids = {0, 2, 1, 1};
  std::vector<float> out(4);
  hw::ownGatherSum(table.data(), 2, ids.data(), 2, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{101, 202, 20, 40}));
}

// ------------------------------------------------------------------ quick profile

struct QuickRun {
  StatusOr<HardwareProfile> profile = internalError("not run");
  ProfilerRunInfo info;
  std::vector<std::pair<double, std::string>> progress;
};

const QuickRun& quickRun() {
  static QuickRun* run = [] {
    auto* r = new QuickRun();
    ProfilerOptions opts;
    opts.quick = true;
    r->profile = profileCpu(
        opts, [r](double f, const std::string& what) { r->progress.emplace_back(f, what); }, &r->info);
    return r;
  }();
  return *run;
}

TEST(ProfileCpu, QuickRunValidatesAndRoundTrips) {
  const QuickRun& run = quickRun();
  ASSERT_TRUE(run.profile.isOk()) << run.profile.status().message();
  const HardwareProfile& p = *run.profile;
  auto back = parseProfile(profileToJson(p), "quick-profile.json");
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(*back, p);
  EXPECT_EQ(p.name, "host-cpu");
  EXPECT_EQ(p.kind, "cpu");
  EXPECT_EQ(p.provenance, "measured");
  EXPECT_TRUE(p.isMeasured());
  EXPECT_FALSE(p.measuredOn.empty());
  EXPECT_FALSE(p.date.empty());
  for (const char* lib : {"openblas", "onednn", "compiler"}) EXPECT_TRUE(p.libraries.count(lib)) << lib;
}

TEST(ProfileCpu, EveryEfficiencyIsMeasuredWithSamplesAndPositiveRates) {
  const QuickRun& run = quickRun();
  ASSERT_TRUE(run.profile.isOk()) << run.profile.status().message();
  const HardwareProfile& p = *run.profile;
  std::set<std::pair<std::string, std::string>> seen;
  for (const KernelEfficiency& e : p.efficiencies) {
    SCOPED_TRACE(e.kernel + " " + e.shapeClass);
    seen.insert({e.kernel, e.shapeClass});
    EXPECT_GT(e.samples, 0);
    EXPECT_GE(e.flopsPerS, 0);
    EXPECT_GE(e.bytesPerS, 0);
    EXPECT_GT(e.flopsPerS + e.bytesPerS, 0);
    EXPECT_GT(e.overheadS, 0);
    EXPECT_EQ(e.source.rfind("measured:", 0), 0u) << e.source;
  }
  for (const char* k : {"openblas.sgemm", "onednn.matmul", "onednn.matmul_relu", "own.gemm"}) {
    for (const char* c : {"gemm.tiny", "gemm.small", "gemm.medium", "gemm.large", "gemm.skinny"}) {
      EXPECT_TRUE(seen.count({k, c})) << k << " " << c;
      const KernelEfficiency* e = p.efficiency(k, c);
      if (e != nullptr) {
        EXPECT_GT(e->flopsPerS, 0) << k << " " << c;
        // Rate curve: every non-skinny shape of the kernel on each size class
        // (the same curve on all four), only skinny shapes on gemm.skinny.
        EXPECT_GE(e->curve.size(), 2u) << k << " " << c;
        EXPECT_LE(e->curve.size(), kMaxCurvePoints);
        for (size_t i = 1; i < e->curve.size(); ++i) EXPECT_LT(e->curve[i - 1].flops, e->curve[i].flops);
        const KernelEfficiency* tiny = p.efficiency(k, "gemm.tiny");
        if (std::string(c) != "gemm.skinny" && tiny != nullptr) {
          EXPECT_EQ(e->curve, tiny->curve) << k << " " << c;
        }
      }
    }
  }
  for (auto kc : std::vector<std::pair<std::string, std::string>>{{"own.gather", "gather.uniform"},
                                                                  {"own.gather", "gather.zipf"},
                                                                  {"own.eltwise", "eltwise.stream"},
                                                                  {"own.reduce", "reduce.rows"}}) {
    EXPECT_TRUE(seen.count(kc)) << kc.first << " " << kc.second;
    const KernelEfficiency* e = p.efficiency(kc.first, kc.second);
    if (e != nullptr) {
      EXPECT_GT(e->bytesPerS, 0) << kc.first;
    }
  }
}

TEST(ProfileCpu, BackendProbesGiveCurvesAndAMeasuredFuseAlpha) {
  const QuickRun& run = quickRun();
  ASSERT_TRUE(run.profile.isOk()) << run.profile.status().message();
  const HardwareProfile& p = *run.profile;
  for (auto kc : std::vector<std::pair<std::string, std::string>>{{"own.eltwise", "eltwise.stream"},
                                                                  {"own.softmax", "softmax.rows"},
                                                                  {"own.movement", "movement.strided"},
                                                                  {"own.movement", "movement.inner"},
                                                                  {"own.reduce", "reduce.rows"},
                                                                  {"own.gather", "gather.cached"},
                                                                  {"own.batched_gemm", "gemm.batched"},
                                                                  {"own.spmm", "spmm.csr"},
                                                                  {"own.spmm", "spmm.skewed"}}) {
    const KernelEfficiency* e = p.efficiency(kc.first, kc.second);
    ASSERT_NE(e, nullptr) << kc.first << " " << kc.second;
    ASSERT_EQ(e->shapeClass, kc.second);
    EXPECT_FALSE(e->curve.empty()) << kc.second;
    EXPECT_NE(e->source.find("CPU backend"), std::string::npos) << e->source;
  }
  EXPECT_GE(p.traits.fuseAlpha, 0.0);
  EXPECT_LE(p.traits.fuseAlpha, 2.0);
  EXPECT_NE(p.traits.source.find("measured: CAGR's CPU backend ran one elementwise chain"), std::string::npos)
      << p.traits.source;
}

TEST(ProfileCpu, PeaksMemoryAndTraitsAreMeasuredOrSaySoNot) {
  const QuickRun& run = quickRun();
  ASSERT_TRUE(run.profile.isOk()) << run.profile.status().message();
  const HardwareProfile& p = *run.profile;
  ASSERT_TRUE(p.peakFlops.count("fp32"));
  EXPECT_GT(p.peak("fp32"), 0);
  EXPECT_EQ(p.peakFlops.at("fp32").source.rfind("measured:", 0), 0u);
  ASSERT_FALSE(p.memory.empty());
  EXPECT_EQ(p.memory.back().name, "DRAM");
  for (const MemoryLevel& m : p.memory) {
    EXPECT_GT(m.sizeBytes.value, 0) << m.name;
    EXPECT_GT(m.bandwidth.value, 0) << m.name;
    EXPECT_EQ(m.bandwidth.source.rfind("measured:", 0), 0u) << m.name;
  }
  EXPECT_GT(p.launchLatencyS.value, 0);
  EXPECT_EQ(p.launchLatencyS.source.rfind("measured:", 0), 0u);
  EXPECT_GE(p.parallelUnits.value, 1);
  const int bits = p.traits.vectorWidthBits;
  EXPECT_TRUE(bits == 128 || bits == 256 || bits == 512) << bits;
  EXPECT_EQ(p.traits.warpWidth, bits / 32);
  EXPECT_GE(p.traits.runToRunVariance, 0);
  EXPECT_GE(p.traits.irregularGatherPenalty, 1);
  // The theoretical peak, when known, is labelled computed, never measured.
  if (run.info.theoreticalPeakFlops > 0) {
    EXPECT_NE(run.info.theoreticalPeakSource.find("not measured"), std::string::npos);
  }
  EXPECT_EQ(run.info.bestFlopsPerKernel.size(), 4u);
}

TEST(ProfileCpu, ProgressIsMonotonicAndEndsAtOne) {
  const QuickRun& run = quickRun();
  ASSERT_FALSE(run.progress.empty());
  double last = 0;
  for (const auto& [f, what] : run.progress) {
    EXPECT_GE(f, last) << what;
    EXPECT_LE(f, 1.0);
    last = f;
  }
  EXPECT_DOUBLE_EQ(run.progress.back().first, 1.0);
  bool sawGemm = false;
  for (const auto& [f, what] : run.progress) sawGemm = sawGemm || what.rfind("gemm ", 0) == 0;
  EXPECT_TRUE(sawGemm);
}

TEST(ProfileCpu, RejectsBadOptions) {
  ProfilerOptions opts;
  opts.budgetSeconds = 0;
  auto r = profileCpu(opts, nullptr);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("--budget"), std::string::npos);
  opts.budgetSeconds = 10;
  opts.threads = -1;
  EXPECT_FALSE(profileCpu(opts, nullptr).isOk());
}

// ------------------------------------------------------------------ CLI

using cagr::testing::CliResult;
CliResult cagrCli(const std::string& args) { return cagr::testing::runCagr(args); }

TEST(ProfileCli, CudaFailsCleanlyInThisBuild) {
  CliResult r = cagrCli("profile --target cuda -o /dev/null");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("cagr profile --target cuda: this build has no CUDA support"), std::string::npos) << r.out;
  r = cagrCli("profile --target tpu");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("unknown target"), std::string::npos) << r.out;
}

TEST(ProfileCli, QuickJsonRunWritesALoadableProfile) {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("cagr_profile_" + std::to_string(::getpid()) + ".json");
  CliResult r = cagrCli("profile --target cpu --quick --budget 3 --quiet --json -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  for (const char* key : {"model", "target", "policy", "latency_ms", "decisions", "peak_fp32_flops", "dram_bytes_per_s",
                          "gather_bytes_per_s", "launch_latency_s", "gemm_best_flops"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["peak_fp32_flops"]["kind"], "measured");
  EXPECT_EQ(j["theoretical_peak_fp32_flops"]["kind"], "computed");
  auto p = loadProfile(out.string());
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_TRUE(p->isMeasured());
  fs::remove(out);
}

// ------------------------------------------------------------------ validate

bool isProfileGemmShape(const GemmShape& s) {
  for (bool quick : {false, true}) {
    for (const GemmShape& p : hw::gemmShapes(quick))
      if (p.m == s.m && p.k == s.k && p.n == s.n) return true;
  }
  return false;
}

/// One record: positive timing, a class the profile writes for its kernel,
/// and (GEMMs) the cost_rules.cc count at a shape the profile fit never saw.
void checkValidationRecord(const hw::ValidationRecord& r) {
  static const std::map<std::string, std::string> kFamilyOf = {
      {"openblas.sgemm", "gemm."}, {"onednn.matmul", "gemm."},  {"onednn.matmul_relu", "gemm."}, {"own.gemm", "gemm."},
      {"own.gather", "gather."},   {"own.eltwise", "eltwise."}, {"own.reduce", "reduce."}};
  static const std::set<std::string> kClasses = {"gemm.tiny",      "gemm.small",     "gemm.medium",
                                                 "gemm.large",     "gemm.skinny",    "gather.zipf",
                                                 "gather.uniform", "eltwise.stream", "reduce.rows"};
  SCOPED_TRACE(r.kernel + " " + r.shapeClass + " " + r.config);
  ASSERT_TRUE(kFamilyOf.count(r.kernel));
  EXPECT_TRUE(kClasses.count(r.shapeClass));
  EXPECT_EQ(r.shapeClass.rfind(kFamilyOf.at(r.kernel), 0), 0u);
  EXPECT_GT(r.measuredS, 0);
  EXPECT_GT(r.samples, 0);
  EXPECT_GE(r.spread, 0);
  EXPECT_GT(r.bytes, 0);
  EXPECT_FALSE(r.config.empty());
  if (kFamilyOf.at(r.kernel) != "gemm.") {
    EXPECT_EQ(r.m + r.n + r.k, 0);
    return;
  }
  const double m = static_cast<double>(r.m), n = static_cast<double>(r.n), k = static_cast<double>(r.k);
  const bool bias = r.kernel == "onednn.matmul_relu";
  EXPECT_EQ(r.shapeClass, gemmShapeClass(m, n, k));
  EXPECT_DOUBLE_EQ(r.flops, 2 * m * n * k + (bias ? m * n : 0));
  EXPECT_DOUBLE_EQ(r.bytes, 4 * (m * k + k * n + m * n + (bias ? n : 0)));
  EXPECT_FALSE(isProfileGemmShape({r.m, r.k, r.n})) << "held-out shape is in the profile's fit";
}

TEST(ValidateCpu, QuickRunYieldsHeldOutRecordsThatParseAsValidationJson) {
  ProfilerOptions opts;
  opts.quick = true;
  std::vector<double> progress;
  auto run = validateCpu(opts, [&progress](double f, const std::string&) { progress.push_back(f); });
  ASSERT_TRUE(run.isOk()) << run.status().message();
  ASSERT_FALSE(run->records.empty());
  std::set<std::string> kernels, classes;
  for (const hw::ValidationRecord& r : run->records) {
    checkValidationRecord(r);
    kernels.insert(r.kernel);
    classes.insert(r.shapeClass);
  }
  for (const char* k : {"openblas.sgemm", "onednn.matmul", "onednn.matmul_relu", "own.gemm", "own.gather",
                        "own.eltwise", "own.reduce"}) {
    EXPECT_TRUE(kernels.count(k)) << k;
  }
  for (const char* c : {"gather.uniform", "gather.zipf", "eltwise.stream", "reduce.rows"})
    EXPECT_TRUE(classes.count(c));
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_DOUBLE_EQ(progress.back(), 1.0);

  auto j = nlohmann::json::parse(hw::validationToJson(*run), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema"], "cagr-validation-1");
  EXPECT_EQ(j["provenance"], "measured");
  EXPECT_EQ(j["tool"].get<std::string>().rfind("cagr profile --target cpu --validate", 0), 0u);
  EXPECT_FALSE(j["measured_on"].get<std::string>().empty());
  EXPECT_FALSE(j["date"].get<std::string>().empty());
  for (const char* lib : {"openblas", "onednn", "compiler"}) EXPECT_TRUE(j["libraries"].contains(lib)) << lib;
  ASSERT_EQ(j["records"].size(), run->records.size());
  for (const auto& r : j["records"]) {
    for (const char* key : {"kernel", "shape_class", "config", "flops", "bytes", "measured_s", "spread", "samples"})
      EXPECT_TRUE(r.contains(key)) << key;
  }
}

TEST(ValidateCpu, RejectsBadOptions) {
  ProfilerOptions opts;
  opts.budgetSeconds = -1;
  auto r = validateCpu(opts, nullptr);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("--budget"), std::string::npos);
}

TEST(ProfileCli, QuickValidateWritesValidationRecords) {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("cagr_validate_" + std::to_string(::getpid()) + ".json");
  CliResult r = cagrCli("profile --target cpu --validate --quick --budget 1 --quiet -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("held-out records"), std::string::npos) << r.out;
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema"], "cagr-validation-1");
  EXPECT_FALSE(j["records"].empty());
  fs::remove(out);
}

}  // namespace
}  // namespace cagr
