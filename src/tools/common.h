// Shared plumbing of the cagr subcommands: loading a model by extension,
// error reporting, and the JSON fields every command prints (DESIGN §5).
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cagr/graph.h"
#include "cagr/importer.h"
#include "cagr/mir.h"
#include "cagr/policy.h"

namespace cagr::tools {

/// A loaded model: .onnx is imported; .mlir (IR text) and .cagr (a plan:
/// MIR text with weights) are parsed.
struct LoadedModel {
  Graph graph;
  ImportReport report;
  std::string path;
};
StatusOr<LoadedModel> loadModel(const std::string& path, bool recognizePatterns = true);

/// The precision flags every planning command takes (optimize, bench):
/// --precision (fp32, or a comma list of tf32, bf16, fp16, int8-tables) and
/// --max-error (the measured budget; default: the stated bound).
struct PrecisionFlags {
  std::string spec = "fp32";
  double maxError = -1;
};
void addPrecisionFlags(CLI::App* cmd, PrecisionFlags& f);
/// The options `f` asks for on `t` (errors name the flag).
StatusOr<PrecisionOptions> precisionOptions(const PrecisionFlags& f, const Target& t);
/// What a --json report says of precision: the options and what optimize() measured.
nlohmann::json precisionJson(const PrecisionOptions& o, const PrecisionReport& r);

/// Bounds of the numeric flags every command validates (issue 40): a batch
/// past 2^24 rows, or thousands of threads, is a typo, not a workload.
constexpr int64_t kMaxBatch = int64_t{1} << 24;
constexpr int kMaxThreads = 1024;

/// Prints "cagr: error: ..." to stderr and returns the exit code for `s`.
int fail(const Status& s);

/// The fields every --json output carries (values for commands that do not optimise).
nlohmann::json baseJson(const std::string& model, const std::string& target);

void addInspect(CLI::App& app, int& exitCode);
void addRun(CLI::App& app, int& exitCode);
void addExport(CLI::App& app, int& exitCode);
void addProfile(CLI::App& app, int& exitCode);
void addOptimize(CLI::App& app, int& exitCode);
void addBench(CLI::App& app, int& exitCode);
void addTrain(CLI::App& app, int& exitCode);

}  // namespace cagr::tools
