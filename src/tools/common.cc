#include "tools/common.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "cagr/text.h"

namespace cagr::tools {

StatusOr<LoadedModel> loadModel(const std::string& path, bool recognizePatterns) {
  LoadedModel m;
  m.path = path;
  if (path.ends_with(".onnx")) {
    ImportOptions opts;
    opts.recognizePatterns = recognizePatterns;
    CAGR_ASSIGN_OR_RETURN(m.graph, importOnnx(path, opts, &m.report));
    return m;
  }
  if (path.ends_with(".mlir") || path.ends_with(".cagr")) {
    std::ifstream in(path);
    if (!in) return notFound("cannot open '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    CAGR_ASSIGN_OR_RETURN(m.graph, parseGraph(ss.str(), path));
    return m;
  }
  return invalidArgument("'" + path + "': unknown model format (expected .onnx, .mlir or a .cagr plan)");
}

int fail(const Status& s) {
  std::cerr << "cagr: error: " << s.message() << "\n";
  return s.code() == ErrorCode::kInternal ? 3 : 1;
}

nlohmann::json baseJson(const std::string& model, const std::string& target) {
  return {{"model", model},
          {"target", target},
          {"policy", "none"},
          {"latency_ms", nullptr},
          {"latency_kind", nullptr},
          {"baseline_latency_ms", nullptr},
          {"peak_memory_bytes", nullptr},
          {"optimize_seconds", 0.0},
          {"decisions", nlohmann::json::array()}};
}

StatusOr<Target> withCudaPrecision(Target t, const std::string& precision) {
  if (t.backend != Backend::kCuda) return invalidArgument("profile '" + t.hw.name + "' is not an NVIDIA GPU profile");
  if (precision == "fp32") return t;
  if (precision != "tf32" && precision != "bf16") {
    return invalidArgument("--precision " + precision + ": expected fp32, tf32 or bf16");
  }
  Precision math = precision == "tf32" ? Precision::kTF32 : Precision::kBF16;
  if (!t.supportsMath(math)) return invalidArgument(t.hw.name + " has no " + precision + " math");
  t.math = {Precision::kF32, math};
  t.storage = {Precision::kF32};
  if (math == Precision::kBF16) t.storage.push_back(Precision::kBF16);
  return t;
}

}  // namespace cagr::tools
