#include "tools/common.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "cagr/text.h"
#include "support/files.h"

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
  if (path.ends_with(".cagr")) {
    CAGR_ASSIGN_OR_RETURN(m.graph, loadPlanFile(path));
    return m;
  }
  if (path.ends_with(".mlir")) {
    CAGR_ASSIGN_OR_RETURN(std::string text, readRegularFile(path, "graph"));
    CAGR_ASSIGN_OR_RETURN(m.graph, parseGraph(text, path));
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

void addPrecisionFlags(CLI::App* cmd, PrecisionFlags& f) {
  cmd->add_option("--precision", f.spec,
                  "fp32 (default: the plan keeps f32 math and storage), or a comma list of the reduced precisions "
                  "the policy may choose: tf32 (math), bf16 (math and tables), fp16 (math and tables), "
                  "int8-tables (int8 row-wise tables)");
  cmd->add_option("--max-error", f.maxError,
                  "budget on max|y' - y| / max|y| of the outputs, measured on a calibration batch against the f32 "
                  "model (default: the largest stated bound of the precisions asked for)")
      ->check(CLI::NonNegativeNumber);
}

StatusOr<PrecisionOptions> precisionOptions(const PrecisionFlags& f, const Target& t) {
  return parsePrecisionOptions(f.spec, f.maxError, t);
}

nlohmann::json precisionJson(const PrecisionOptions& o, const PrecisionReport& r) {
  nlohmann::json j = {{"precision", o.spec}};
  if (o.lossless()) return j;
  j["max_error"] = o.maxError;
  j["measured_error"] = r.measuredError;
  j["measured_error_kind"] = "measured (reference executor, precision emulated, " + r.calibration + ")";
  j["kept_f32"] = r.keptF32;
  j["fell_back_to_f32"] = r.fellBackToF32;
  return j;
}

}  // namespace cagr::tools
