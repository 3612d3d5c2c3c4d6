// Hardware profiles: lookups on HardwareProfile, file I/O, the built-in
// profiles (src/hw/profiles/*.json, embedded by CMake into
// generated/builtin_profiles.cc) and the policy context vector c_H.
// The JSON codec lives in profile_json.cc.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "cagr/hw.h"
#include "support/files.h"

// Defined in the CMake-generated builtin_profiles.cc: one entry per
// src/hw/profiles/<name>.json, sorted by name.
namespace cagr::hw_builtin {
struct Text {
  const char* name;
  const char* json;
};
extern const Text kProfiles[];
extern const std::size_t kProfileCount;
}  // namespace cagr::hw_builtin

namespace cagr {
namespace {

double lg(double x) { return x > 0 && std::isfinite(x) ? std::log10(x) : 0.0; }

constexpr size_t kContextSize = 16;

}  // namespace

double HardwareProfile::dramBandwidth() const {
  return memory.empty() ? 0.0 : memory.back().bandwidth.value;
}

double HardwareProfile::peak(const std::string& dtype) const {
  auto it = peakFlops.find(dtype);
  if (it != peakFlops.end()) return it->second.value;
  it = peakFlops.find("fp32");
  return it != peakFlops.end() ? it->second.value : 0.0;
}

const KernelEfficiency* HardwareProfile::efficiency(const std::string& kernel,
                                                    const std::string& shapeClass) const {
  const KernelEfficiency* sameKernel = nullptr;
  for (const KernelEfficiency& e : efficiencies) {
    if (e.kernel != kernel) continue;
    if (e.shapeClass == shapeClass) return &e;
    if (!sameKernel) sameKernel = &e;
  }
  return sameKernel;
}

double KernelEfficiency::rateAt(double flopsPerCall) const {
  if (curve.empty() || !(flopsPerCall > 0)) return flopsPerS;
  if (flopsPerCall <= curve.front().flops) return curve.front().flopsPerS;
  if (flopsPerCall >= curve.back().flops) return curve.back().flopsPerS;
  auto hi = std::upper_bound(curve.begin(), curve.end(), flopsPerCall,
                             [](double f, const RatePoint& p) { return f < p.flops; });
  auto lo = hi - 1;  // lo->flops <= flopsPerCall < hi->flops
  double t = (std::log(flopsPerCall) - std::log(lo->flops)) / (std::log(hi->flops) - std::log(lo->flops));
  return std::exp(std::log(lo->flopsPerS) + t * (std::log(hi->flopsPerS) - std::log(lo->flopsPerS)));
}

std::vector<RatePoint> makeRateCurve(std::vector<RatePoint> points) {
  std::erase_if(points, [](const RatePoint& p) {
    return !(p.flops > 0 && p.flopsPerS > 0 && std::isfinite(p.flops) && std::isfinite(p.flopsPerS));
  });
  std::sort(points.begin(), points.end(),
            [](const RatePoint& a, const RatePoint& b) { return a.flops < b.flops; });
  std::vector<RatePoint> merged;
  for (size_t i = 0; i < points.size();) {
    size_t j = i;
    double logSum = 0;
    for (; j < points.size() && points[j].flops == points[i].flops; ++j) logSum += std::log(points[j].flopsPerS);
    merged.push_back({points[i].flops, j - i == 1 ? points[i].flopsPerS : std::exp(logSum / static_cast<double>(j - i))});
    i = j;
  }
  if (merged.size() <= kMaxCurvePoints) return merged;
  std::vector<RatePoint> thinned;
  const double step = static_cast<double>(merged.size() - 1) / static_cast<double>(kMaxCurvePoints - 1);
  for (size_t i = 0; i < kMaxCurvePoints; ++i) {
    thinned.push_back(merged[static_cast<size_t>(std::lround(static_cast<double>(i) * step))]);
  }
  return thinned;
}

StatusOr<HardwareProfile> loadProfile(const std::string& path) {
  CAGR_ASSIGN_OR_RETURN(std::string text, readRegularFile(path, "hardware profile", uint64_t{64} << 20));
  return parseProfile(text, path);
}

Status saveProfile(const HardwareProfile& p, const std::string& path) {
  std::string text = profileToJson(p);
  // Never write a file that loadProfile would reject.
  StatusOr<HardwareProfile> back = parseProfile(text, path);
  if (!back.isOk()) return back.status().withContext("refusing to save an invalid profile");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return notFound("cannot write hardware profile '" + path + "': " + std::strerror(errno));
  }
  out << text;
  out.close();
  if (!out) return notFound("cannot write hardware profile '" + path + "': write error");
  return Status::ok();
}

std::vector<std::string> builtinProfileNames() {
  std::vector<std::string> names;
  for (size_t i = 0; i < hw_builtin::kProfileCount; ++i) {
    names.emplace_back(hw_builtin::kProfiles[i].name);
  }
  return names;
}

StatusOr<HardwareProfile> builtinProfile(const std::string& name) {
  for (size_t i = 0; i < hw_builtin::kProfileCount; ++i) {
    const hw_builtin::Text& t = hw_builtin::kProfiles[i];
    if (name != t.name) continue;
    StatusOr<HardwareProfile> p = parseProfile(t.json, "builtin profile " + name + ".json");
    if (!p.isOk()) {
      return Status(ErrorCode::kInternal, p.status().message());  // a broken built-in is our bug
    }
    return p;
  }
  std::string known;
  for (const std::string& n : builtinProfileNames()) known += (known.empty() ? "" : ", ") + n;
  return notFound("no built-in hardware profile '" + name + "' (built-ins: " + known + ")");
}

StatusOr<HardwareProfile> resolveProfile(const std::string& nameOrPath) {
  std::vector<std::string> names = builtinProfileNames();
  if (std::find(names.begin(), names.end(), nameOrPath) != names.end()) {
    return builtinProfile(nameOrPath);
  }
  std::error_code ec;
  if (std::filesystem::exists(nameOrPath, ec)) return loadProfile(nameOrPath);
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  return notFound("hardware profile '" + nameOrPath +
                  "' is neither a built-in (" + known + ") nor an existing file");
}

size_t contextVectorSize() { return kContextSize; }

std::vector<double> contextVector(const HardwareProfile& p) {
  std::vector<double> v;
  v.reserve(kContextSize);
  double dram = p.dramBandwidth();
  const MemoryLevel* llc = p.memory.size() >= 2 ? &p.memory[p.memory.size() - 2] : nullptr;
  v.push_back(lg(p.peak("fp32")));
  v.push_back(lg(p.peak("bf16")));
  v.push_back(lg(p.peak("int8")));
  v.push_back(lg(dram));
  v.push_back(llc ? lg(llc->sizeBytes.value) : 0.0);
  v.push_back(llc ? lg(llc->bandwidth.value) : 0.0);
  v.push_back(lg(p.launchLatencyS.value));
  v.push_back(lg(p.parallelUnits.value));
  v.push_back(lg(p.traits.warpWidth));
  v.push_back(lg(static_cast<double>(p.matrixUnit.m) * p.matrixUnit.n * p.matrixUnit.k));
  v.push_back(dram > 0 ? lg(p.peak("fp32") / dram) : 0.0);
  v.push_back(p.traits.spillRisk);
  v.push_back(lg(p.traits.irregularGatherPenalty));
  v.push_back(p.kind == "cpu" ? 1.0 : 0.0);
  v.push_back(p.kind == "gpu" ? 1.0 : 0.0);
  v.push_back(p.kind == "tpu" ? 1.0 : 0.0);
  return v;
}

}  // namespace cagr
