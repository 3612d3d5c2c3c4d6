// Shared plumbing of the cagr subcommands: loading a model by extension,
// error reporting, and the JSON fields every command prints (DESIGN §5).
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cagr/graph.h"
#include "cagr/importer.h"
#include "cagr/mir.h"

namespace cagr::tools {

/// A loaded model: .onnx is imported; .mlir (IR text) and .cagr (a plan:
/// MIR text with weights) are parsed.
struct LoadedModel {
  Graph graph;
  ImportReport report;
  std::string path;
};
StatusOr<LoadedModel> loadModel(const std::string& path, bool recognizePatterns = true);

/// An NVIDIA GPU target with the math / storage precisions `precision`
/// allows the policy: fp32 (as profiled: the caller disables set_precision),
/// tf32 (f32 or tf32 math, f32 storage) or bf16 (f32 or bf16 math, f32 or
/// bf16 storage). `--hw`-style name for errors.
StatusOr<Target> withCudaPrecision(Target t, const std::string& precision);

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
