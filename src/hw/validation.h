// Held-out measurements for the cost-model accuracy benchmark: kernels timed
// at shapes and sizes that no profile fit used (`cagr-profile-cuda
// --validate -o v.json`; the CPU profiler can adopt the same records). Each
// record carries the work it did (flops, bytes counted as the cost model's
// cost_rules.cc counts them), so a predictor can be scored against
// measured_s without re-deriving shapes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cagr::hw {

/// One held-out measurement.
struct ValidationRecord {
  std::string kernel;           // "cublas.sgemm", "own.gather", ...
  std::string shapeClass;       // "gemm.medium" (cost/kernel_class.cc gemmShapeClass), "gather.zipf", ...
  int64_t m = 0, n = 0, k = 0;  // GEMMs: C[m,n] = A[m,k] B[k,n]; 0 otherwise
  std::string config;           // what ran: "zipf dim32 p5, 800000 bags", "row sums of [2048, 64]"
  double flops = 0;             // per call
  double bytes = 0;             // per call
  double measuredS = 0;         // median seconds per call
  double spread = 0;            // (p90 - p10) / median over samples
  int samples = 0;
};

/// A validation run: where and when, and its records.
struct ValidationRun {
  std::string tool;        // "cagr-profile-cuda --validate"
  std::string measuredOn;  // "NVIDIA H200 (driver 580.159.04)"
  std::string date;        // ISO 8601, UTC
  std::map<std::string, std::string> libraries;
  std::vector<ValidationRecord> records;
};

inline nlohmann::json toJson(const ValidationRecord& r) {
  nlohmann::json j = {{"kernel", r.kernel}, {"shape_class", r.shapeClass}};
  if (r.m > 0 || r.n > 0 || r.k > 0) {
    j["m"] = r.m;
    j["n"] = r.n;
    j["k"] = r.k;
  }
  j["config"] = r.config;
  j["flops"] = r.flops;
  j["bytes"] = r.bytes;
  j["measured_s"] = r.measuredS;
  j["spread"] = r.spread;
  j["samples"] = r.samples;
  return j;
}

/// {"schema": "cagr-validation-1", "provenance": "measured", tool,
///  measured_on, date, libraries, records: [...]}
inline std::string validationToJson(const ValidationRun& run) {
  nlohmann::json j = {{"schema", "cagr-validation-1"}, {"provenance", "measured"}, {"tool", run.tool},
                      {"measured_on", run.measuredOn}, {"date", run.date},         {"libraries", run.libraries}};
  nlohmann::json recs = nlohmann::json::array();
  for (const ValidationRecord& r : run.records) recs.push_back(toJson(r));
  j["records"] = recs;
  return j.dump(2) + "\n";
}

}  // namespace cagr::hw
