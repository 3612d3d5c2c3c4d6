// Tests for hardware profiles: every built-in parses, validates and
// round-trips; datasheet facts the cost model leans on; the context vector;
// and the error messages for broken profile files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cagr/hw.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const std::vector<std::string> kExpectedBuiltins = {"a100",   "h100",   "h200",   "mi100", "mi250x",
                                                    "tpu-v3", "tpu-v4", "v100",   "x86-64"};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string profileFile(const std::string& name) {
  return std::string(CAGR_SOURCE_DIR) + "/src/hw/profiles/" + name + ".json";
}

HardwareProfile mustBuiltin(const std::string& name) {
  StatusOr<HardwareProfile> p = builtinProfile(name);
  EXPECT_TRUE(p.isOk()) << p.status().message();
  return p.isOk() ? *p : HardwareProfile{};
}

/// A small valid profile as JSON, to break one piece at a time.
Json minimal() {
  return Json::parse(R"({
    "schema_version": 1, "name": "tiny", "kind": "gpu", "provenance": "datasheet",
    "peak_flops": {"fp32": {"value": 1e12, "source": "doc"}},
    "memory": [{"name": "DRAM", "size_bytes": {"value": 1e9, "source": "doc"},
                "bandwidth": {"value": 1e11, "source": "doc"}}],
    "launch_latency_s": {"value": 5e-6, "source": "estimate"}
  })");
}

/// parseProfile(j) must fail with a message containing every `parts` entry.
void expectError(const Json& j, std::initializer_list<std::string> parts,
                 const std::string& file = "bad.json") {
  StatusOr<HardwareProfile> p = parseProfile(j.dump(), file);
  ASSERT_FALSE(p.isOk()) << "accepted: " << j.dump();
  for (const std::string& part : parts) {
    EXPECT_NE(p.status().message().find(part), std::string::npos)
        << "message '" << p.status().message() << "' lacks '" << part << "'";
  }
}

class HwProfileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cagr_hw_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// ---------------------------------------------------------------- built-ins

TEST(HwBuiltinProfiles, AllNamesPresent) {
  std::vector<std::string> names = builtinProfileNames();
  std::set<std::string> have(names.begin(), names.end());
  for (const std::string& n : kExpectedBuiltins) EXPECT_TRUE(have.count(n)) << n;
  EXPECT_EQ(names.size(), kExpectedBuiltins.size());
}

TEST(HwBuiltinProfiles, EveryBuiltinLoadsAndValidates) {
  for (const std::string& name : builtinProfileNames()) {
    SCOPED_TRACE(name);
    StatusOr<HardwareProfile> p = builtinProfile(name);
    ASSERT_TRUE(p.isOk()) << p.status().message();
    EXPECT_EQ(p->name, name);  // file stem == "name"
    EXPECT_EQ(p->schemaVersion, 1);
    EXPECT_EQ(p->provenance, "datasheet");
    EXPECT_FALSE(p->isMeasured());
    EXPECT_FALSE(p->date.empty());
    EXPECT_GT(p->peak("fp32"), 0);
    EXPECT_GE(p->memory.size(), 2u);
    EXPECT_GT(p->dramBandwidth(), 0);
    EXPECT_GT(p->launchLatencyS.value, 0);
    EXPECT_GT(p->parallelUnits.value, 0);
    EXPECT_FALSE(p->matrixUnit.name.empty());
    EXPECT_FALSE(p->traits.source.empty());
    EXPECT_FALSE(p->efficiencies.empty());
    for (const auto& [dtype, s] : p->peakFlops) EXPECT_FALSE(s.source.empty()) << dtype;
    for (const MemoryLevel& m : p->memory) {
      EXPECT_FALSE(m.sizeBytes.source.empty()) << m.name;
      EXPECT_FALSE(m.bandwidth.source.empty()) << m.name;
    }
    for (const KernelEfficiency& e : p->efficiencies) {
      EXPECT_EQ(e.samples, 0) << e.kernel;
      EXPECT_EQ(e.source.rfind("default:", 0), 0u) << e.source;
      // A default never claims more than the datasheet peak or bandwidth.
      double maxPeak = 0;
      for (const auto& [dtype, s] : p->peakFlops) maxPeak = std::max(maxPeak, s.value);
      EXPECT_LE(e.flopsPerS, maxPeak) << e.kernel << " " << e.shapeClass;
      EXPECT_LE(e.bytesPerS, p->dramBandwidth()) << e.kernel << " " << e.shapeClass;
    }
  }
}

TEST(HwBuiltinProfiles, EmbeddedTextMatchesSourceFile) {
  for (const std::string& name : builtinProfileNames()) {
    SCOPED_TRACE(name);
    StatusOr<HardwareProfile> fromFile = loadProfile(profileFile(name));
    ASSERT_TRUE(fromFile.isOk()) << fromFile.status().message();
    EXPECT_TRUE(*fromFile == mustBuiltin(name)) << "rebuild: embedded copy is stale";
  }
}

TEST(HwBuiltinProfiles, RoundTripThroughJson) {
  for (const std::string& name : builtinProfileNames()) {
    SCOPED_TRACE(name);
    HardwareProfile p = mustBuiltin(name);
    std::string text = profileToJson(p);
    StatusOr<HardwareProfile> back = parseProfile(text, name + ".roundtrip.json");
    ASSERT_TRUE(back.isOk()) << back.status().message();
    EXPECT_TRUE(*back == p);
    EXPECT_EQ(profileToJson(*back), text);
  }
}

TEST(HwBuiltinProfiles, DatasheetFacts) {
  HardwareProfile h100 = mustBuiltin("h100"), h200 = mustBuiltin("h200");
  EXPECT_DOUBLE_EQ(h200.dramBandwidth(), 4.8e12);
  EXPECT_DOUBLE_EQ(h100.dramBandwidth(), 3.35e12);
  EXPECT_DOUBLE_EQ(h200.peak("fp32"), h100.peak("fp32"));
  EXPECT_DOUBLE_EQ(h200.peak("bf16"), h100.peak("bf16"));
  EXPECT_EQ(h200.parallelUnits.value, 132);
  EXPECT_EQ(h200.memory.back().name, "HBM3e");

  HardwareProfile v100 = mustBuiltin("v100");
  EXPECT_DOUBLE_EQ(v100.peak("fp32"), 15.7e12);
  EXPECT_DOUBLE_EQ(v100.dramBandwidth(), 900e9);
  EXPECT_DOUBLE_EQ(v100.peak("bf16"), v100.peak("fp32"));  // no bf16 on Volta: falls back
  EXPECT_EQ(v100.traits.warpWidth, 32);

  HardwareProfile a100 = mustBuiltin("a100");
  EXPECT_DOUBLE_EQ(a100.peak("bf16"), 312e12);
  EXPECT_DOUBLE_EQ(a100.dramBandwidth(), 2039e9);

  for (const char* amd : {"mi100", "mi250x"}) {
    HardwareProfile p = mustBuiltin(amd);
    EXPECT_EQ(p.vendor, "amd");
    EXPECT_EQ(p.traits.warpWidth, 64) << amd;
    EXPECT_GE(p.traits.spillRisk, 0.5) << amd;
    EXPECT_DOUBLE_EQ(p.traits.registerFileBytesPerUnit, 512.0 * 1024) << amd;
  }
  for (const char* tpu : {"tpu-v3", "tpu-v4"}) {
    HardwareProfile p = mustBuiltin(tpu);
    EXPECT_EQ(p.kind, "tpu");
    EXPECT_EQ(p.matrixUnit.m, 128) << tpu;
    EXPECT_EQ(p.matrixUnit.n, 128) << tpu;
    EXPECT_EQ(p.matrixUnit.alignElements, 128) << tpu;
    EXPECT_GE(p.traits.irregularGatherPenalty, 4) << tpu;
    const KernelEfficiency* g = p.efficiency("xla.gather", "gather.uniform");
    ASSERT_NE(g, nullptr);
    EXPECT_NEAR(g->bytesPerS, p.dramBandwidth() / p.traits.irregularGatherPenalty, 1e6);
  }
  EXPECT_DOUBLE_EQ(mustBuiltin("tpu-v3").peak("bf16"), 123e12);
  EXPECT_DOUBLE_EQ(mustBuiltin("tpu-v4").peak("bf16"), 275e12);

  HardwareProfile cpu = mustBuiltin("x86-64");
  EXPECT_EQ(cpu.kind, "cpu");
  EXPECT_DOUBLE_EQ(cpu.peak("fp32"), 160e9);
  EXPECT_EQ(cpu.traits.vectorWidthBits, 256);
  EXPECT_NE(cpu.notes.find("stand-in"), std::string::npos);
}

// ------------------------------------------------------------ lookups

TEST(HwProfileLookups, EfficiencyExactThenSameKernelThenNull) {
  HardwareProfile p = mustBuiltin("a100");
  const KernelEfficiency* exact = p.efficiency("cublas.sgemm", "gemm.large");
  ASSERT_NE(exact, nullptr);
  EXPECT_EQ(exact->shapeClass, "gemm.large");
  const KernelEfficiency* anyClass = p.efficiency("cublas.sgemm", "gemm.no-such-class");
  ASSERT_NE(anyClass, nullptr);
  EXPECT_EQ(anyClass->kernel, "cublas.sgemm");
  EXPECT_EQ(p.efficiency("no.such.kernel", "gemm.large"), nullptr);
}

TEST(HwProfileLookups, PeakFallsBackToFp32) {
  HardwareProfile p = mustBuiltin("x86-64");
  EXPECT_DOUBLE_EQ(p.peak("bf16"), p.peak("fp32"));
  EXPECT_DOUBLE_EQ(p.peak(), 160e9);
  HardwareProfile empty;
  EXPECT_EQ(empty.peak("fp32"), 0);
  EXPECT_EQ(empty.dramBandwidth(), 0);
}

TEST(HwProfileLookups, ResolveByNameOrPath) {
  StatusOr<HardwareProfile> byName = resolveProfile("h200");
  ASSERT_TRUE(byName.isOk()) << byName.status().message();
  EXPECT_EQ(byName->name, "h200");
  StatusOr<HardwareProfile> byPath = resolveProfile(profileFile("mi100"));
  ASSERT_TRUE(byPath.isOk()) << byPath.status().message();
  EXPECT_EQ(byPath->name, "mi100");
  StatusOr<HardwareProfile> missing = resolveProfile("b200");
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'b200'"), std::string::npos);
  EXPECT_NE(missing.status().message().find("h200"), std::string::npos);  // lists the built-ins
  StatusOr<HardwareProfile> noBuiltin = builtinProfile("b200");
  ASSERT_FALSE(noBuiltin.isOk());
  EXPECT_NE(noBuiltin.status().message().find("no built-in hardware profile 'b200'"),
            std::string::npos);
}

// ------------------------------------------------------------ context vector

TEST(HwContextVector, DocumentedSizeAndValues) {
  EXPECT_EQ(contextVectorSize(), 16u);
  for (const std::string& name : builtinProfileNames()) {
    SCOPED_TRACE(name);
    HardwareProfile p = mustBuiltin(name);
    std::vector<double> v = contextVector(p);
    ASSERT_EQ(v.size(), contextVectorSize());
    for (double x : v) EXPECT_TRUE(std::isfinite(x));
    EXPECT_DOUBLE_EQ(v[0], std::log10(p.peak("fp32")));
    EXPECT_DOUBLE_EQ(v[3], std::log10(p.dramBandwidth()));
    EXPECT_DOUBLE_EQ(v[6], std::log10(p.launchLatencyS.value));
    EXPECT_DOUBLE_EQ(v[10], std::log10(p.peak("fp32") / p.dramBandwidth()));
    EXPECT_DOUBLE_EQ(v[11], p.traits.spillRisk);
    EXPECT_DOUBLE_EQ(v[13] + v[14] + v[15], 1.0);  // kind one-hot
  }
  std::vector<double> h200 = contextVector(mustBuiltin("h200"));
  EXPECT_DOUBLE_EQ(h200[14], 1.0);
  EXPECT_DOUBLE_EQ(h200[8], std::log10(32.0));
  EXPECT_DOUBLE_EQ(contextVector(mustBuiltin("tpu-v4"))[15], 1.0);
  EXPECT_DOUBLE_EQ(contextVector(mustBuiltin("x86-64"))[13], 1.0);
}

TEST(HwContextVector, DiffersBetweenPlatforms) {
  std::vector<std::string> names = builtinProfileNames();
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = i + 1; j < names.size(); ++j) {
      EXPECT_NE(contextVector(mustBuiltin(names[i])), contextVector(mustBuiltin(names[j])))
          << names[i] << " vs " << names[j];
    }
  }
  // H100 and H200 differ only in memory: the DRAM feature tells them apart.
  EXPECT_NE(contextVector(mustBuiltin("h100"))[3], contextVector(mustBuiltin("h200"))[3]);
}

// ------------------------------------------------------------ errors

TEST(HwProfileErrors, MinimalProfileIsValid) {
  StatusOr<HardwareProfile> p = parseProfile(minimal().dump(), "tiny.json");
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->memory.size(), 1u);
  EXPECT_TRUE(p->efficiencies.empty());
  std::vector<double> v = contextVector(*p);
  EXPECT_EQ(v.size(), contextVectorSize());
  EXPECT_EQ(v[4], 0.0);  // no cache level
  StatusOr<HardwareProfile> back = parseProfile(profileToJson(*p), "tiny.json");
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_TRUE(*back == *p);
}

// Found by fuzz/profile_fuzz.cc: a number beyond double's range made the
// JSON library throw out_of_range past the parse_error handler (abort).
TEST(HwProfileErrors, NumberOutOfRangeIsACleanError) {
  std::string text = minimal().dump();
  text.replace(text.find("\"schema_version\":1"), std::string("\"schema_version\":1").size(),
               "\"schema_version\":1.22e8812");
  StatusOr<HardwareProfile> p = parseProfile(text, "huge.json");
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("huge.json: malformed JSON: number overflow"), std::string::npos)
      << p.status().message();
}

TEST(HwProfileErrors, MissingRequiredKeysAreNamed) {
  for (const char* key : {"name", "kind", "provenance", "peak_flops", "memory", "launch_latency_s",
                          "schema_version"}) {
    Json j = minimal();
    j.erase(key);
    expectError(j, {"bad.json: ", std::string(key) + ": missing required key"});
  }
  Json j = minimal();
  j["peak_flops"] = Json::object({{"bf16", {{"value", 1e12}, {"source", "doc"}}}});
  expectError(j, {"bad.json: peak_flops.fp32: missing required key"});
  j = minimal();
  j["memory"] = Json::array();
  expectError(j, {"bad.json: memory: must list at least one memory level"});
  j = minimal();
  j["memory"][0].erase("bandwidth");
  expectError(j, {"memory[0].bandwidth: missing required key"});
}

TEST(HwProfileErrors, NonPositiveNumbersNameTheKeyPath) {
  Json j = minimal();
  j["peak_flops"]["fp32"]["value"] = -15.7e12;
  expectError(j, {"v100.json: peak_flops.fp32.value: must be a positive number"}, "v100.json");
  j = minimal();
  j["memory"][0]["bandwidth"]["value"] = 0;
  expectError(j, {"bad.json: memory[0].bandwidth.value: must be a positive number"});
  j = minimal();
  j["launch_latency_s"]["value"] = -1;
  expectError(j, {"launch_latency_s.value: must be a positive number"});
  j = minimal();
  j["traits"] = {{"spill_risk", 1.5}, {"source", "x"}};
  expectError(j, {"traits.spill_risk: must be in [0, 1]"});
  j = minimal();
  j["traits"] = {{"irregular_gather_penalty", 0.5}, {"source", "x"}};
  expectError(j, {"traits.irregular_gather_penalty: must be >= 1"});
}

TEST(HwProfileErrors, WrongTypes) {
  Json j = minimal();
  j["peak_flops"]["fp32"]["value"] = "15.7e12";
  expectError(j, {"peak_flops.fp32.value: must be a positive number, got string"});
  j = minimal();
  j["peak_flops"]["fp32"] = 15.7e12;
  expectError(j, {"peak_flops.fp32: must be an object {\"value\""});
  j = minimal();
  j["name"] = 7;
  expectError(j, {"bad.json: name: must be a string, got number"});
  j = minimal();
  j["memory"] = Json::object();
  expectError(j, {"memory: must be an array, got object"});
  j = minimal();
  j["matrix_unit"] = {{"name", "tc"}, {"m", 4.5}, {"n", 4}, {"k", 4}, {"source", "x"}};
  expectError(j, {"matrix_unit.m: must be an integer >= 1, got number"});
  expectError(Json::array({1, 2}), {"bad.json: must be an object, got array"});
}

TEST(HwProfileErrors, KindProvenanceDtypeAndUnknownKeys) {
  Json j = minimal();
  j["kind"] = "fpga";
  expectError(j, {"bad.json: kind: must be one of cpu, gpu, tpu (got \"fpga\")"});
  j = minimal();
  j["provenance"] = "guess";
  expectError(j, {"provenance: must be one of datasheet, measured (got \"guess\")"});
  j = minimal();
  j["peak_flops"]["fp33"] = {{"value", 1.0}, {"source", "x"}};
  expectError(j, {"peak_flops.fp33: unknown dtype"});
  j = minimal();
  j["peak_flop"] = 1;
  expectError(j, {"bad.json: peak_flop: unknown key"});
  j = minimal();
  j["memory"][0]["bandwith"] = j["memory"][0]["bandwidth"];
  expectError(j, {"memory[0].bandwith: unknown key"});
}

TEST(HwProfileErrors, DatasheetNumbersNeedASource) {
  Json j = minimal();
  j["memory"][0]["size_bytes"].erase("source");
  expectError(j, {"memory[0].size_bytes.source: missing required key"});
  j = minimal();
  j["launch_latency_s"]["source"] = "";
  expectError(j, {"launch_latency_s.source: must not be empty"});
  // Measured profiles may leave sources out.
  j = minimal();
  j["provenance"] = "measured";
  j["memory"][0]["size_bytes"].erase("source");
  j["efficiencies"] = Json::array({{{"kernel", "openblas.sgemm"},
                                    {"shape_class", "gemm.large"},
                                    {"flops_per_s", 1e11},
                                    {"samples", 12}}});
  StatusOr<HardwareProfile> p = parseProfile(j.dump(), "host.json");
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_TRUE(p->isMeasured());
  EXPECT_EQ(p->efficiencies.at(0).samples, 12);
}

TEST(HwProfileErrors, EfficiencyEntries) {
  Json j = minimal();
  j["efficiencies"] = Json::array({{{"kernel", "k"}, {"shape_class", "c"}, {"source", "x"}}});
  expectError(j, {"efficiencies[0]: flops_per_s and bytes_per_s cannot both be 0"});
  Json e = {{"kernel", "k"}, {"shape_class", "c"}, {"bytes_per_s", 1e9}, {"source", "x"}};
  j["efficiencies"] = Json::array({e, e});
  expectError(j, {"efficiencies[1]: duplicate entry for kernel 'k', shape class 'c'"});
  j["efficiencies"] = Json::array({e});
  j["efficiencies"][0]["samples"] = -3;
  expectError(j, {"efficiencies[0].samples: must be an integer >= 0"});
}

TEST(HwProfileCurve, RoundTripsAndOldProfilesWithoutCurvesStillLoad) {
  Json j = minimal();
  j["provenance"] = "measured";
  j["efficiencies"] = Json::array({{{"kernel", "openblas.sgemm"},
                                    {"shape_class", "gemm.small"},
                                    {"flops_per_s", 1e11},
                                    {"overhead_s", 1e-6},
                                    {"samples", 4},
                                    {"curve", Json::array({Json::array({1e5, 2.5e9}), Json::array({3.3e7, 1.25e11})})}},
                                   {{"kernel", "openblas.sgemm"}, {"shape_class", "gemm.large"}, {"flops_per_s", 2e11}}});
  StatusOr<HardwareProfile> p = parseProfile(j.dump(), "curve.json");
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->efficiencies.size(), 2u);
  const std::vector<RatePoint> want = {{1e5, 2.5e9}, {3.3e7, 1.25e11}};
  EXPECT_EQ(p->efficiencies[0].curve, want);
  EXPECT_TRUE(p->efficiencies[1].curve.empty());  // no curve: as before
  EXPECT_EQ(p->efficiencies[1].rateAt(1e9), 2e11);
  std::string text = profileToJson(*p);
  StatusOr<HardwareProfile> back = parseProfile(text, "curve.json");
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_TRUE(*back == *p);
  EXPECT_EQ(profileToJson(*back), text);
  EXPECT_EQ(Json::parse(text)["efficiencies"][1].count("curve"), 0u);  // empty curves are not written
}

TEST(HwProfileCurve, MakeRateCurveSortsMergesAndThins) {
  std::vector<RatePoint> c = makeRateCurve({{1e8, 4e10}, {1e6, 1e9}, {1e8, 1e10}, {0, 5}, {1e7, -1}});
  const std::vector<RatePoint> want = {{1e6, 1e9}, {1e8, 2e10}};  // geometric mean of 4e10 and 1e10
  ASSERT_EQ(c.size(), want.size());
  EXPECT_EQ(c[0], want[0]);
  EXPECT_DOUBLE_EQ(c[1].flops, 1e8);
  EXPECT_NEAR(c[1].flopsPerS, 2e10, 1e-3);
  std::vector<RatePoint> many;
  for (int i = 1; i <= 200; ++i) many.push_back({1e3 * i, 1e9});
  std::vector<RatePoint> thin = makeRateCurve(many);
  ASSERT_EQ(thin.size(), kMaxCurvePoints);
  EXPECT_EQ(thin.front().flops, 1e3);
  EXPECT_EQ(thin.back().flops, 2e5);
}

TEST(HwProfileErrors, CurveEntries) {
  Json j = minimal();
  Json e = {{"kernel", "k"}, {"shape_class", "gemm.small"}, {"flops_per_s", 1e9}, {"source", "x"}};
  auto withCurve = [&](Json curve) {
    Json x = j;
    Json ee = e;
    ee["curve"] = std::move(curve);
    x["efficiencies"] = Json::array({ee});
    return x;
  };
  expectError(withCurve(Json::object()), {"efficiencies[0].curve: must be an array"});
  expectError(withCurve(Json::array()), {"efficiencies[0].curve: must hold 1..64 points, got 0"});
  expectError(withCurve(Json::array({Json::array({1e6})})),
              {"efficiencies[0].curve[0]: must be a [flops_per_call, net_flops_per_s] pair"});
  expectError(withCurve(Json::array({Json::array({1e6, 0})})),
              {"efficiencies[0].curve[0][1]: must be a positive number"});
  expectError(withCurve(Json::array({Json::array({-1, 1e9})})),
              {"efficiencies[0].curve[0][0]: must be a positive number"});
  expectError(withCurve(Json::array({Json::array({1e6, 1e9}), Json::array({1e6, 2e9})})),
              {"efficiencies[0].curve[1]: points must be sorted by strictly increasing flops_per_call"});
  expectError(withCurve(Json::array({Json::array({1e7, 1e9}), Json::array({1e6, 2e9})})),
              {"efficiencies[0].curve[1]: points must be sorted"});
  Json big = Json::array();
  for (int i = 1; i <= 65; ++i) big.push_back(Json::array({1e3 * i, 1e9}));
  expectError(withCurve(big), {"efficiencies[0].curve: must hold 1..64 points, got 65"});
}

TEST(HwProfileErrors, BadSchemaVersion) {
  Json j = minimal();
  j["schema_version"] = 2;
  StatusOr<HardwareProfile> p = parseProfile(j.dump(), "future.json");
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(p.status().message().find("future.json: schema_version: unsupported version 2"),
            std::string::npos)
      << p.status().message();
  j["schema_version"] = "1";
  expectError(j, {"schema_version: must be an integer"});
}

TEST(HwProfileErrors, MalformedJsonGivesBytePosition) {
  std::string text = R"({"schema_version": 1, "name": "x",, })";
  StatusOr<HardwareProfile> p = parseProfile(text, "broken.json");
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), ErrorCode::kCorrupt);
  const std::string& m = p.status().message();
  EXPECT_NE(m.find("broken.json: malformed JSON at byte 35"), std::string::npos) << m;
  EXPECT_EQ(m.find("[json.exception"), std::string::npos) << m;

  p = parseProfile("", "empty.json");
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("empty.json: malformed JSON at byte"), std::string::npos);
}

TEST_F(HwProfileFiles, UnreadableFile) {
  StatusOr<HardwareProfile> p = loadProfile(path("nope.json"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(p.status().message().find("cannot read hardware profile '" + path("nope.json") + "'"),
            std::string::npos)
      << p.status().message();
  StatusOr<HardwareProfile> d = loadProfile(dir_.string());
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.status().message().find("is a directory"), std::string::npos);
}

TEST_F(HwProfileFiles, LoadErrorsNameThePath) {
  std::string file = path("v100.json");
  Json j = minimal();
  j["peak_flops"]["fp32"]["value"] = -1;
  std::ofstream(file) << j.dump();
  StatusOr<HardwareProfile> p = loadProfile(file);
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find(file + ": peak_flops.fp32.value: must be a positive number"),
            std::string::npos)
      << p.status().message();
}

TEST_F(HwProfileFiles, SaveAndLoad) {
  HardwareProfile p = mustBuiltin("mi250x");
  p.provenance = "measured";
  p.measuredOn = "test-host";
  p.libraries["rocblas"] = "4.0.0";
  p.efficiencies.push_back({"own.gather", "gather.zipf", 0, 1.5e12, 4e-6, 7, "measured: test", {}});
  ASSERT_TRUE(saveProfile(p, path("m.json")).isOk());
  StatusOr<HardwareProfile> back = loadProfile(path("m.json"));
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_TRUE(*back == p);
  EXPECT_EQ(slurp(path("m.json")), profileToJson(p));

  HardwareProfile bad = p;
  bad.kind = "fpga";
  Status s = saveProfile(bad, path("bad.json"));
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("kind: must be one of cpu, gpu, tpu"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(path("bad.json")));
  Status w = saveProfile(p, path("no/such/dir/x.json"));
  ASSERT_FALSE(w.isOk());
  EXPECT_NE(w.message().find("cannot write hardware profile"), std::string::npos);
}

}  // namespace
}  // namespace cagr
