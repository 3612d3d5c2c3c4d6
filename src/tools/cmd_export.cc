// cagr export MODEL --format mlir: the HIR as MLIR generic text.
#include <fstream>
#include <iostream>

#include "cagr/text.h"
#include "tools/common.h"

namespace cagr::tools {
namespace {

struct ExportArgs {
  std::string model, format = "mlir", output;
  bool elide = false;
};

int runExport(const ExportArgs& a) {
  if (a.format != "mlir") return fail(unsupported("--format " + a.format + ": only mlir is available so far"));
  auto m = loadModel(a.model);
  if (!m.isOk()) return fail(m.status());
  PrintOptions opts;
  opts.elideWeights = a.elide;
  std::string text = printGraph(m->graph, opts);
  if (a.output.empty()) {
    std::cout << text;
    return 0;
  }
  std::ofstream out(a.output);
  out << text;
  if (!out) return fail(notFound("cannot write '" + a.output + "'"));
  return 0;
}

}  // namespace

void addExport(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "write the model in another form");
  cmd->add_option("model", args->model, "model (.onnx or .mlir)")->required();
  cmd->add_option("--format", args->format, "mlir (HIR as MLIR generic syntax)");
  cmd->add_option("-o,--output", args->output, "output file (default: stdout)");
  cmd->add_flag("--elide-weights", args->elide, "print weights as shapes only");
  cmd->callback([args, &exitCode] { exitCode = runExport(*args); });
}

}  // namespace cagr::tools
