// Hardware profile JSON codec: parseProfile (validating reader) and
// profileToJson (writer). The schema is documented next to parseProfile in
// cagr/hw.h. Every error names the source file and the JSON key path:
//   "v100.json: memory[1].bandwidth.value: must be a positive number".
#include <cmath>
#include <initializer_list>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cagr/hw.h"

namespace cagr {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string> kDtypes = {"fp64", "fp64_matrix", "fp32", "fp32_matrix", "tf32",
                                       "bf16", "fp16",        "fp8",  "int8"};

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string indexed(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string listOf(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

/// Reads one profile document; carries the file name for error messages and
/// whether numbers must carry a source (datasheet profiles).
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void setRequireSources(bool v) { requireSources_ = v; }

  Status error(const std::string& path, const std::string& message) const {
    return corrupt(file_ + ": " + (path.empty() ? "" : path + ": ") + message);
  }

  Status expectObject(const Json& j, const std::string& path) const {
    if (!j.is_object()) return error(path, std::string("must be an object, got ") + j.type_name());
    return Status::ok();
  }

  /// Rejects keys outside `allowed` (unknown keys are almost always typos).
  Status checkKeys(const Json& obj, const std::string& path,
                   std::initializer_list<const char*> allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool known = false;
      for (const char* a : allowed) known = known || it.key() == a;
      if (!known) {
        return error(join(path, it.key()), "unknown key (allowed here: " + listOf(allowed) + ")");
      }
    }
    return Status::ok();
  }

  /// obj[key] or nullptr; an error when `required` and absent.
  Status member(const Json& obj, const std::string& path, const char* key, bool required,
                const Json** out) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      *out = nullptr;
      if (required) return error(join(path, key), "missing required key");
      return Status::ok();
    }
    *out = &*it;
    return Status::ok();
  }

  Status readString(const Json& obj, const std::string& path, const char* key, bool required,
                    bool nonEmpty, std::string* out) const {
    const Json* j = nullptr;
    CAGR_RETURN_IF_ERROR(member(obj, path, key, required, &j));
    if (!j) return Status::ok();
    if (!j->is_string()) {
      return error(join(path, key), std::string("must be a string, got ") + j->type_name());
    }
    *out = j->get<std::string>();
    if (nonEmpty && out->empty()) return error(join(path, key), "must not be empty");
    return Status::ok();
  }

  enum class Bound { kPositive, kNonNegative };

  Status checkNumber(const Json& j, const std::string& path, Bound bound, double* out) const {
    const char* want = bound == Bound::kPositive ? "must be a positive number"
                                                 : "must be a non-negative number";
    if (!j.is_number()) return error(path, std::string(want) + ", got " + j.type_name());
    double v = j.get<double>();
    if (!std::isfinite(v)) return error(path, std::string(want) + ", got a non-finite value");
    if (bound == Bound::kPositive && !(v > 0)) return error(path, want);
    if (bound == Bound::kNonNegative && v < 0) return error(path, want);
    *out = v;
    return Status::ok();
  }

  Status readNumber(const Json& obj, const std::string& path, const char* key, bool required,
                    Bound bound, double* out) const {
    const Json* j = nullptr;
    CAGR_RETURN_IF_ERROR(member(obj, path, key, required, &j));
    if (!j) return Status::ok();
    return checkNumber(*j, join(path, key), bound, out);
  }

  Status readInt(const Json& obj, const std::string& path, const char* key, bool required,
                 int minValue, int* out) const {
    const Json* j = nullptr;
    CAGR_RETURN_IF_ERROR(member(obj, path, key, required, &j));
    if (!j) return Status::ok();
    std::string want = "must be an integer >= " + std::to_string(minValue);
    if (!j->is_number_integer()) return error(join(path, key), want + ", got " + j->type_name());
    long long v = j->get<long long>();
    if (v < minValue || v > 1000000000LL) return error(join(path, key), want);
    *out = static_cast<int>(v);
    return Status::ok();
  }

  /// The "source" of a Sourced number or of a section: required (non-empty)
  /// for datasheet profiles.
  Status readSource(const Json& obj, const std::string& path, std::string* out) const {
    CAGR_RETURN_IF_ERROR(readString(obj, path, "source", requireSources_, requireSources_, out));
    return Status::ok();
  }

  /// {"value": positive number, "source": "..."}. `present` (if given) is set
  /// to whether the key exists.
  Status readSourced(const Json& obj, const std::string& path, const char* key, bool required,
                     Sourced* out) const {
    const Json* j = nullptr;
    CAGR_RETURN_IF_ERROR(member(obj, path, key, required, &j));
    if (!j) return Status::ok();
    return sourced(*j, join(path, key), out);
  }

  Status sourced(const Json& j, const std::string& path, Sourced* out) const {
    if (!j.is_object()) {
      return error(path, std::string("must be an object {\"value\": ..., \"source\": ...}, got ") +
                             j.type_name());
    }
    CAGR_RETURN_IF_ERROR(checkKeys(j, path, {"value", "source"}));
    CAGR_RETURN_IF_ERROR(readNumber(j, path, "value", true, Bound::kPositive, &out->value));
    return readSource(j, path, &out->source);
  }

 private:
  std::string file_;
  bool requireSources_ = true;
};

Status readPeaks(const Reader& r, const Json& root, HardwareProfile* p) {
  const Json* j = nullptr;
  CAGR_RETURN_IF_ERROR(r.member(root, "", "peak_flops", true, &j));
  CAGR_RETURN_IF_ERROR(r.expectObject(*j, "peak_flops"));
  for (auto it = j->begin(); it != j->end(); ++it) {
    std::string path = join("peak_flops", it.key());
    if (!kDtypes.count(it.key())) {
      std::string allowed;
      for (const auto& d : kDtypes) allowed += (allowed.empty() ? "" : ", ") + d;
      return r.error(path, "unknown dtype (allowed: " + allowed + ")");
    }
    Sourced s;
    CAGR_RETURN_IF_ERROR(r.sourced(it.value(), path, &s));
    p->peakFlops[it.key()] = s;
  }
  if (!p->peakFlops.count("fp32")) return r.error("peak_flops.fp32", "missing required key");
  return Status::ok();
}

Status readMemory(const Reader& r, const Json& root, HardwareProfile* p) {
  const Json* j = nullptr;
  CAGR_RETURN_IF_ERROR(r.member(root, "", "memory", true, &j));
  if (!j->is_array()) return r.error("memory", std::string("must be an array, got ") + j->type_name());
  if (j->empty()) return r.error("memory", "must list at least one memory level");
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < j->size(); ++i) {
    const Json& e = (*j)[i];
    std::string path = indexed("memory", i);
    CAGR_RETURN_IF_ERROR(r.expectObject(e, path));
    CAGR_RETURN_IF_ERROR(r.checkKeys(e, path, {"name", "size_bytes", "bandwidth"}));
    MemoryLevel m;
    CAGR_RETURN_IF_ERROR(r.readString(e, path, "name", true, true, &m.name));
    auto [it, fresh] = seen.emplace(m.name, i);
    if (!fresh) {
      return r.error(join(path, "name"), "duplicate memory level '" + m.name + "' (also memory[" +
                                             std::to_string(it->second) + "])");
    }
    CAGR_RETURN_IF_ERROR(r.readSourced(e, path, "size_bytes", true, &m.sizeBytes));
    CAGR_RETURN_IF_ERROR(r.readSourced(e, path, "bandwidth", true, &m.bandwidth));
    p->memory.push_back(std::move(m));
  }
  return Status::ok();
}

Status readMatrixUnit(const Reader& r, const Json& root, HardwareProfile* p) {
  const Json* j = nullptr;
  CAGR_RETURN_IF_ERROR(r.member(root, "", "matrix_unit", false, &j));
  if (!j) return Status::ok();
  const std::string path = "matrix_unit";
  CAGR_RETURN_IF_ERROR(r.expectObject(*j, path));
  CAGR_RETURN_IF_ERROR(r.checkKeys(*j, path, {"name", "m", "n", "k", "align_elements", "source"}));
  MatrixUnit& mu = p->matrixUnit;
  CAGR_RETURN_IF_ERROR(r.readString(*j, path, "name", true, true, &mu.name));
  CAGR_RETURN_IF_ERROR(r.readInt(*j, path, "m", true, 1, &mu.m));
  CAGR_RETURN_IF_ERROR(r.readInt(*j, path, "n", true, 1, &mu.n));
  CAGR_RETURN_IF_ERROR(r.readInt(*j, path, "k", true, 1, &mu.k));
  CAGR_RETURN_IF_ERROR(r.readInt(*j, path, "align_elements", false, 1, &mu.alignElements));
  return r.readSource(*j, path, &mu.source);
}

Status readTraits(const Reader& r, const Json& root, HardwareProfile* p) {
  const Json* j = nullptr;
  CAGR_RETURN_IF_ERROR(r.member(root, "", "traits", false, &j));
  if (!j) return Status::ok();
  const std::string path = "traits";
  using B = Reader::Bound;
  CAGR_RETURN_IF_ERROR(r.expectObject(*j, path));
  CAGR_RETURN_IF_ERROR(r.checkKeys(
      *j, path,
      {"warp_width", "register_file_bytes_per_unit", "shared_mem_bytes_per_unit", "spill_risk",
       "irregular_gather_penalty", "vector_width_bits", "fuse_alpha", "fuse_beta", "fuse_gamma",
       "run_to_run_variance", "source"}));
  PlatformTraits& t = p->traits;
  CAGR_RETURN_IF_ERROR(r.readInt(*j, path, "warp_width", false, 1, &t.warpWidth));
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "register_file_bytes_per_unit", false,
                                    B::kNonNegative, &t.registerFileBytesPerUnit));
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "shared_mem_bytes_per_unit", false, B::kNonNegative,
                                    &t.sharedMemBytesPerUnit));
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "spill_risk", false, B::kNonNegative, &t.spillRisk));
  if (t.spillRisk > 1) return r.error(join(path, "spill_risk"), "must be in [0, 1]");
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "irregular_gather_penalty", false, B::kPositive,
                                    &t.irregularGatherPenalty));
  if (t.irregularGatherPenalty < 1) {
    return r.error(join(path, "irregular_gather_penalty"), "must be >= 1");
  }
  CAGR_RETURN_IF_ERROR(r.readInt(*j, path, "vector_width_bits", false, 0, &t.vectorWidthBits));
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "fuse_alpha", false, B::kNonNegative, &t.fuseAlpha));
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "fuse_beta", false, B::kNonNegative, &t.fuseBeta));
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "fuse_gamma", false, B::kNonNegative, &t.fuseGamma));
  CAGR_RETURN_IF_ERROR(r.readNumber(*j, path, "run_to_run_variance", false, B::kNonNegative,
                                    &t.runToRunVariance));
  return r.readSource(*j, path, &t.source);
}

/// efficiencies[i].curve: [[work_per_call, net_rate], ...] (FLOPs for GEMM
/// classes, bytes for streaming ones), 1..64 points, both positive, work
/// strictly increasing.
Status readCurve(const Reader& r, const Json& e, const std::string& path, std::vector<RatePoint>* out) {
  const Json* j = nullptr;
  CAGR_RETURN_IF_ERROR(r.member(e, path, "curve", false, &j));
  if (!j) return Status::ok();
  const std::string cpath = join(path, "curve");
  if (!j->is_array()) return r.error(cpath, std::string("must be an array, got ") + j->type_name());
  if (j->empty() || j->size() > kMaxCurvePoints) {
    return r.error(cpath, "must hold 1.." + std::to_string(kMaxCurvePoints) + " points, got " +
                              std::to_string(j->size()));
  }
  for (size_t i = 0; i < j->size(); ++i) {
    const Json& pt = (*j)[i];
    const std::string ppath = indexed(cpath, i);
    if (!pt.is_array() || pt.size() != 2) {
      return r.error(ppath, "must be a [flops_per_call, net_flops_per_s] pair");
    }
    RatePoint rp;
    CAGR_RETURN_IF_ERROR(r.checkNumber(pt[0], indexed(ppath, 0), Reader::Bound::kPositive, &rp.flops));
    CAGR_RETURN_IF_ERROR(r.checkNumber(pt[1], indexed(ppath, 1), Reader::Bound::kPositive, &rp.flopsPerS));
    if (!out->empty() && !(rp.flops > out->back().flops)) {
      return r.error(ppath, "points must be sorted by strictly increasing flops_per_call");
    }
    out->push_back(rp);
  }
  return Status::ok();
}

Status readEfficiencies(const Reader& r, const Json& root, HardwareProfile* p) {
  const Json* j = nullptr;
  CAGR_RETURN_IF_ERROR(r.member(root, "", "efficiencies", false, &j));
  if (!j) return Status::ok();
  if (!j->is_array()) {
    return r.error("efficiencies", std::string("must be an array, got ") + j->type_name());
  }
  using B = Reader::Bound;
  std::map<std::pair<std::string, std::string>, size_t> seen;
  for (size_t i = 0; i < j->size(); ++i) {
    const Json& e = (*j)[i];
    std::string path = indexed("efficiencies", i);
    CAGR_RETURN_IF_ERROR(r.expectObject(e, path));
    CAGR_RETURN_IF_ERROR(r.checkKeys(e, path,
                                     {"kernel", "shape_class", "flops_per_s", "bytes_per_s",
                                      "overhead_s", "samples", "source", "curve"}));
    KernelEfficiency k;
    CAGR_RETURN_IF_ERROR(r.readString(e, path, "kernel", true, true, &k.kernel));
    CAGR_RETURN_IF_ERROR(r.readString(e, path, "shape_class", true, true, &k.shapeClass));
    CAGR_RETURN_IF_ERROR(r.readNumber(e, path, "flops_per_s", false, B::kNonNegative, &k.flopsPerS));
    CAGR_RETURN_IF_ERROR(r.readNumber(e, path, "bytes_per_s", false, B::kNonNegative, &k.bytesPerS));
    if (k.flopsPerS == 0 && k.bytesPerS == 0) {
      return r.error(path, "flops_per_s and bytes_per_s cannot both be 0 or missing");
    }
    CAGR_RETURN_IF_ERROR(r.readNumber(e, path, "overhead_s", false, B::kNonNegative, &k.overheadS));
    CAGR_RETURN_IF_ERROR(r.readInt(e, path, "samples", false, 0, &k.samples));
    CAGR_RETURN_IF_ERROR(r.readSource(e, path, &k.source));
    CAGR_RETURN_IF_ERROR(readCurve(r, e, path, &k.curve));
    auto [it, fresh] = seen.emplace(std::make_pair(k.kernel, k.shapeClass), i);
    if (!fresh) {
      return r.error(path, "duplicate entry for kernel '" + k.kernel + "', shape class '" +
                               k.shapeClass + "' (also efficiencies[" +
                               std::to_string(it->second) + "])");
    }
    p->efficiencies.push_back(std::move(k));
  }
  return Status::ok();
}

Status readLibraries(const Reader& r, const Json& root, HardwareProfile* p) {
  const Json* j = nullptr;
  CAGR_RETURN_IF_ERROR(r.member(root, "", "libraries", false, &j));
  if (!j) return Status::ok();
  CAGR_RETURN_IF_ERROR(r.expectObject(*j, "libraries"));
  for (auto it = j->begin(); it != j->end(); ++it) {
    if (!it.value().is_string()) {
      return r.error(join("libraries", it.key()),
                     std::string("must be a version string, got ") + it.value().type_name());
    }
    p->libraries[it.key()] = it.value().get<std::string>();
  }
  return Status::ok();
}

Status readProfile(Reader& r, const Json& root, HardwareProfile* p) {
  CAGR_RETURN_IF_ERROR(r.expectObject(root, ""));
  CAGR_RETURN_IF_ERROR(r.readInt(root, "", "schema_version", true, 0, &p->schemaVersion));
  if (p->schemaVersion != kProfileSchemaVersion) {
    return Status(ErrorCode::kUnsupported,
                  r.error("schema_version", "unsupported version " +
                                                std::to_string(p->schemaVersion) +
                                                " (this build reads version " +
                                                std::to_string(kProfileSchemaVersion) + ")")
                      .message());
  }
  CAGR_RETURN_IF_ERROR(r.checkKeys(
      root, "",
      {"schema_version", "name", "kind", "vendor", "provenance", "date", "measured_on", "notes",
       "libraries", "peak_flops", "memory", "launch_latency_s", "parallel_units", "matrix_unit",
       "traits", "efficiencies"}));

  CAGR_RETURN_IF_ERROR(r.readString(root, "", "name", true, true, &p->name));
  CAGR_RETURN_IF_ERROR(r.readString(root, "", "kind", true, false, &p->kind));
  if (p->kind != "cpu" && p->kind != "gpu" && p->kind != "tpu") {
    return r.error("kind", "must be one of cpu, gpu, tpu (got \"" + p->kind + "\")");
  }
  CAGR_RETURN_IF_ERROR(r.readString(root, "", "provenance", true, false, &p->provenance));
  if (p->provenance != "datasheet" && p->provenance != "measured") {
    return r.error("provenance",
                   "must be one of datasheet, measured (got \"" + p->provenance + "\")");
  }
  r.setRequireSources(p->provenance == "datasheet");
  CAGR_RETURN_IF_ERROR(r.readString(root, "", "vendor", false, false, &p->vendor));
  CAGR_RETURN_IF_ERROR(r.readString(root, "", "date", false, false, &p->date));
  CAGR_RETURN_IF_ERROR(r.readString(root, "", "measured_on", false, false, &p->measuredOn));
  CAGR_RETURN_IF_ERROR(r.readString(root, "", "notes", false, false, &p->notes));
  CAGR_RETURN_IF_ERROR(readLibraries(r, root, p));
  CAGR_RETURN_IF_ERROR(readPeaks(r, root, p));
  CAGR_RETURN_IF_ERROR(readMemory(r, root, p));
  CAGR_RETURN_IF_ERROR(r.readSourced(root, "", "launch_latency_s", true, &p->launchLatencyS));
  CAGR_RETURN_IF_ERROR(r.readSourced(root, "", "parallel_units", false, &p->parallelUnits));
  CAGR_RETURN_IF_ERROR(readMatrixUnit(r, root, p));
  CAGR_RETURN_IF_ERROR(readTraits(r, root, p));
  CAGR_RETURN_IF_ERROR(readEfficiencies(r, root, p));
  return Status::ok();
}

Json sourcedJson(const Sourced& s) {
  Json j = Json::object();
  j["value"] = s.value;
  if (!s.source.empty()) j["source"] = s.source;
  return j;
}

}  // namespace

StatusOr<HardwareProfile> parseProfile(const std::string& jsonText, const std::string& sourceName) {
  Json root;
  try {
    root = Json::parse(jsonText);
  } catch (const Json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    std::string what = e.what();
    auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    return corrupt(sourceName + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + what);
  } catch (const Json::exception& e) {  // a number out of double's range (1e999), ...
    std::string what = e.what();
    auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    return corrupt(sourceName + ": malformed JSON: " + what);
  }
  Reader r(sourceName);
  HardwareProfile p;
  CAGR_RETURN_IF_ERROR(readProfile(r, root, &p));
  return p;
}

std::string profileToJson(const HardwareProfile& p) {
  Json j = Json::object();
  j["schema_version"] = p.schemaVersion;
  j["name"] = p.name;
  j["kind"] = p.kind;
  if (!p.vendor.empty()) j["vendor"] = p.vendor;
  j["provenance"] = p.provenance;
  if (!p.date.empty()) j["date"] = p.date;
  if (!p.measuredOn.empty()) j["measured_on"] = p.measuredOn;
  if (!p.notes.empty()) j["notes"] = p.notes;
  if (!p.libraries.empty()) {
    Json libs = Json::object();
    for (const auto& [name, version] : p.libraries) libs[name] = version;
    j["libraries"] = libs;
  }
  Json peaks = Json::object();
  for (const auto& [dtype, s] : p.peakFlops) peaks[dtype] = sourcedJson(s);
  j["peak_flops"] = peaks;
  Json mem = Json::array();
  for (const MemoryLevel& m : p.memory) {
    Json e = Json::object();
    e["name"] = m.name;
    e["size_bytes"] = sourcedJson(m.sizeBytes);
    e["bandwidth"] = sourcedJson(m.bandwidth);
    mem.push_back(e);
  }
  j["memory"] = mem;
  j["launch_latency_s"] = sourcedJson(p.launchLatencyS);
  if (!(p.parallelUnits == Sourced{})) j["parallel_units"] = sourcedJson(p.parallelUnits);
  if (!(p.matrixUnit == MatrixUnit{})) {
    const MatrixUnit& mu = p.matrixUnit;
    Json e = Json::object();
    e["name"] = mu.name;
    e["m"] = mu.m;
    e["n"] = mu.n;
    e["k"] = mu.k;
    e["align_elements"] = mu.alignElements;
    if (!mu.source.empty()) e["source"] = mu.source;
    j["matrix_unit"] = e;
  }
  if (!(p.traits == PlatformTraits{})) {
    const PlatformTraits& t = p.traits;
    Json e = Json::object();
    e["warp_width"] = t.warpWidth;
    e["register_file_bytes_per_unit"] = t.registerFileBytesPerUnit;
    e["shared_mem_bytes_per_unit"] = t.sharedMemBytesPerUnit;
    e["spill_risk"] = t.spillRisk;
    e["irregular_gather_penalty"] = t.irregularGatherPenalty;
    e["vector_width_bits"] = t.vectorWidthBits;
    e["fuse_alpha"] = t.fuseAlpha;
    e["fuse_beta"] = t.fuseBeta;
    e["fuse_gamma"] = t.fuseGamma;
    e["run_to_run_variance"] = t.runToRunVariance;
    if (!t.source.empty()) e["source"] = t.source;
    j["traits"] = e;
  }
  if (!p.efficiencies.empty()) {
    Json effs = Json::array();
    for (const KernelEfficiency& k : p.efficiencies) {
      Json e = Json::object();
      e["kernel"] = k.kernel;
      e["shape_class"] = k.shapeClass;
      e["flops_per_s"] = k.flopsPerS;
      e["bytes_per_s"] = k.bytesPerS;
      e["overhead_s"] = k.overheadS;
      e["samples"] = k.samples;
      if (!k.source.empty()) e["source"] = k.source;
      if (!k.curve.empty()) {
        Json c = Json::array();
        for (const RatePoint& rp : k.curve) c.push_back(Json::array({rp.flops, rp.flopsPerS}));
        e["curve"] = c;
      }
      effs.push_back(e);
    }
    j["efficiencies"] = effs;
  }
  return j.dump(2) + "\n";
}

}  // namespace cagr
