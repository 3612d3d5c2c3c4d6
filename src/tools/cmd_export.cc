// cagr export MODEL --format mlir: the HIR (or a plan) as MLIR generic text.
// cagr export PLAN --format cuda: the CUDA module the CUDA backend generates
// for the plan (its graph-level steps, then every generated kernel), with
// the program's steps listed at the top; --compile also runs NVRTC on it.
// Neither needs a GPU.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cagr/mir.h"
#include "cagr/text.h"
#include "support/files.h"
#include "tools/common.h"

#if CAGR_HAVE_CUDA
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#endif

namespace cagr::tools {
namespace {

struct ExportArgs {
  std::string model, format = "mlir", output, hw = "cuda", arch = "sm_90a";
  bool elide = false, compile = false;
};

// "sm_90a" / "compute_80" -> 90 / 80.
StatusOr<int> archNumber(const std::string& arch) {
  const size_t at = arch.find('_');
  int sm = 0;
  if (at != std::string::npos) std::istringstream(arch.substr(at + 1, 2)) >> sm;
  if (sm < 50) return invalidArgument("--arch '" + arch + "': expected sm_XX[a] or compute_XX (XX >= 50)");
  return sm;
}

StatusOr<std::string> cudaModule(const ExportArgs& a, const Graph& given) {
#if CAGR_HAVE_CUDA
  CAGR_ASSIGN_OR_RETURN(int sm, archNumber(a.arch));
  CAGR_ASSIGN_OR_RETURN(Target t, resolveTarget(a.hw));
  if (t.backend != Backend::kCuda) return invalidArgument("--hw '" + a.hw + "' is not an NVIDIA GPU profile");
  CAGR_RETURN_IF_ERROR(verifyPlan(given, t).withContext("'" + a.model + "' is not a valid cuda plan"));
  CAGR_ASSIGN_OR_RETURN(Graph plan, cuda::prepareGraph(given, t));
  const int sms = t.hw.parallelUnits.value > 0 ? static_cast<int>(t.hw.parallelUnits.value) : 132;
  CAGR_ASSIGN_OR_RETURN(cuda::Program p, cuda::lowerPlan(plan, t, sm, sms));
  std::ostringstream head;
  head << "// CUDA module CAGR generates for " << a.model << " (profile " << t.hw.name << ", sm_" << sm << ", " << sms
       << " SMs): " << p.kernels.size() << " generated kernels, " << p.gemms.size() << " library calls.\n"
       << "// Steps in issue order (stream: step):\n";
  for (const cuda::ProgramStep& s : p.steps) head << "//   " << s.stream << ": " << s.name << "\n";
  std::string src = head.str() + "\n" + p.moduleSource;
  if (a.compile && !p.moduleSource.empty()) {
    cuda::NvrtcOptions o;
    o.arch = a.arch;
    o.useCache = false;
    auto m = cuda::compileModule(p.moduleSource, o);
    if (!m.isOk()) return m.status().withContext("NVRTC (" + a.arch + ")");
    std::cerr << "compiled with NVRTC for " << a.arch << ": " << m->ptx.size() << " bytes of PTX, " << m->cubin.size()
              << " bytes of CUBIN\n";
  }
  return src;
#else
  (void)given;
  return unsupported("--format cuda: this build of cagr has no CUDA backend (configured without CUDA)");
#endif
}

int runExport(const ExportArgs& a) {
  if (a.format != "mlir" && a.format != "cuda") {
    return fail(unsupported("--format " + a.format + ": mlir or cuda"));
  }
  auto m = loadModel(a.model);
  if (!m.isOk()) return fail(m.status());
  std::string text;
  if (a.format == "cuda") {
    auto src = cudaModule(a, m->graph);
    if (!src.isOk()) return fail(src.status());
    text = std::move(*src);
  } else {
    PrintOptions opts;
    opts.elideWeights = a.elide;
    text = printGraph(m->graph, opts);
  }
  if (a.output.empty()) {
    std::cout << text;
    return 0;
  }
  Status w = writeAtomically(a.output, [&](std::ofstream& out) { out << text; });
  return w.isOk() ? 0 : fail(w);
}

}  // namespace

void addExport(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "write the model in another form");
  cmd->add_option("model", args->model, "model or plan (.onnx, .mlir, .cagr)")->required();
  cmd->add_option("--format", args->format,
                  "mlir (the graph as MLIR generic syntax) or cuda (the CUDA module the cuda backend generates for "
                  "the plan, its steps listed at the top; no GPU needed)");
  cmd->add_option("-o,--output", args->output, "output file (default: stdout)");
  cmd->add_flag("--elide-weights", args->elide, "mlir: print weights as shapes only");
  cmd->add_option("--hw", args->hw, "cuda: the NVIDIA profile the plan was made for (default: the H200's)");
  cmd->add_option("--arch", args->arch, "cuda: GPU architecture the kernels are generated for (default sm_90a)");
  cmd->add_flag("--compile", args->compile, "cuda: also compile the module with NVRTC for --arch (errors fail)");
  cmd->callback([args, &exitCode] { exitCode = runExport(*args); });
}

}  // namespace cagr::tools
