// runBackendProbes: IR-text plans of one kernel each (and one elementwise
// chain, unfused and fused by the rewrite engine), compiled on the CPU
// backend and timed with Executable::profile. The plans use only the public
// API (text, rewrite, backend), like any user of the compiler would.
#include "hw/backend_probes.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "cagr/backend.h"
#include "cagr/rewrite.h"
#include "cagr/text.h"
#include "hw/microbench.h"

namespace cagr::hw {
namespace {

std::string tensorType(const std::vector<int64_t>& tail, const char* dtype = "f32") {
  std::string t = "tensor<?";
  for (int64_t d : tail) t += "x" + std::to_string(d);
  return t + "x" + dtype + ">";
}

/// A probe input: [N, tail...] f32 activations, or a fixed-shape f32 table
/// (`table`), or [N] i64 ids below `idBound`.
struct Input {
  std::vector<int64_t> dims;
  bool table = false;
  int64_t idBound = 0;  // > 0: i64 ids in [0, idBound)
  std::string type() const {
    if (idBound > 0) return "tensor<?xi64>";
    if (!table) return tensorType(dims);
    std::string t = "tensor<";
    for (int64_t d : dims) t += std::to_string(d) + "x";
    return t + "f32>";
  }
  std::string dimsText() const {
    std::string d = table ? "" : "N";
    for (int64_t x : dims) d += (d.empty() ? "" : ",") + std::to_string(x);
    return d;
  }
};

/// A graph over inputs x (and y) of shape [N, tail...] with `body` lines
/// producing %out of type `outType`.
std::string graphText(const std::vector<Input>& inputs, const std::string& body, const std::string& outType) {
  std::string args, names, dims;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string sep = i == 0 ? "" : ", ";
    args += sep + "%arg" + std::to_string(i) + ": " + inputs[i].type();
    names += sep + "\"in" + std::to_string(i) + "\"";
    dims += sep + "\"" + inputs[i].dimsText() + "\"";
  }
  return "\"builtin.module\"() ({\n  \"cagr.graph\"() ({\n  ^bb0(" + args + "):\n" + body +
         "    \"cagr.return\"(%out) : (" + outType + ") -> ()\n  }) {sym_name = \"main\", input_names = [" + names +
         "], input_dims = [" + dims + "], output_names = [\"out\"], symbols = [\"N\"]} : () -> ()\n}) : () -> ()\n";
}

/// One op line: %res = "cagr.op"(args) {attrs} : (in types) -> out type.
std::string opLine(const std::string& res, const std::string& op, const std::string& args, const std::string& attrs,
                   const std::string& inTypes, const std::string& outType) {
  return "    " + res + " = \"cagr." + op + "\"(" + args + ") {name = \"" + res.substr(1) + "\"" +
         (attrs.empty() ? "" : ", " + attrs) + "} : (" + inTypes + ") -> " + outType + "\n";
}

std::vector<std::pair<std::string, Tensor>> randomInputs(const std::vector<Input>& inputs, int64_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.1f, 1.0f);
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    std::vector<int64_t> shape;
    if (!in.table) shape.push_back(n);
    shape.insert(shape.end(), in.dims.begin(), in.dims.end());
    Tensor t(in.idBound > 0 ? DType::kI64 : DType::kF32, shape);
    for (int64_t j = 0; j < t.numel(); ++j) {
      if (in.idBound > 0)
        t.data<int64_t>()[j] = std::uniform_int_distribution<int64_t>(0, in.idBound - 1)(rng);
      else
        t.data<float>()[j] = u(rng);
    }
    out.emplace_back("in" + std::to_string(i), std::move(t));
  }
  return out;
}

/// Per-kernel timings of `plan` at batch `n`: enough repeats for about
/// `seconds` (at least 5), after one untimed run.
StatusOr<std::vector<KernelTiming>> timePlan(const Graph& plan, const std::vector<Input>& inputs, int64_t n,
                                             int threads, double seconds) {
  CAGR_ASSIGN_OR_RETURN(auto backend, makeBackend("cpu"));
  CompileOptions opts;
  opts.threads = threads;
  CAGR_ASSIGN_OR_RETURN(auto exe, backend->compile(plan, opts));
  auto in = randomInputs(inputs, n);
  const double t0 = nowSeconds();
  CAGR_RETURN_IF_ERROR(exe->run(in).status());
  const double once = std::max(nowSeconds() - t0, 1e-7);
  const int repeats = static_cast<int>(std::clamp(seconds / once, 5.0, 2000.0));
  return exe->profile(in, repeats);
}

struct ProbeSpec {
  std::string kernel, shapeClass, label;
  std::vector<Input> inputs;
  std::string body, outType;
  double bytesPerRow = 0, flopsPerRow = 0;  // per unit of N, as cost_rules.cc counts
};

ProbeSpec addSpec() {
  std::string t = tensorType({32});
  return {"own.eltwise",
          "eltwise.stream",
          "add [N,32]",
          {{{32}}, {{32}}},
          opLine("%out", "add", "%arg0, %arg1", "", t + ", " + t, t),
          t,
          3 * 32 * 4.0,
          32};
}

/// A probe of one op on one [N, inTail...] input producing [N, outTail...];
/// bytes per row as cost_rules.cc counts them (read + written).
ProbeSpec unarySpec(const std::string& kernel, const std::string& cls, const std::string& op, const std::string& attrs,
                    const std::vector<int64_t>& inTail, const std::vector<int64_t>& outTail, double flopsPerRow) {
  ProbeSpec s;
  s.kernel = kernel;
  s.shapeClass = cls;
  s.inputs = {Input{inTail}};
  s.outType = tensorType(outTail);
  s.body = opLine("%out", op, "%arg0", attrs, tensorType(inTail), s.outType);
  double inElems = 1, outElems = 1;
  s.label = op + " [N";
  for (int64_t d : inTail) inElems *= static_cast<double>(d), s.label += "," + std::to_string(d);
  for (int64_t d : outTail) outElems *= static_cast<double>(d);
  s.label += "]" + (attrs.empty() ? "" : " " + attrs);
  s.bytesPerRow = 4 * (inElems + outElems);
  s.flopsPerRow = flopsPerRow;
  return s;
}

/// The single-input probes: softmax rows of 22 (AutoInt's attention), a
/// transpose that keeps the innermost axis and one that moves it, a row sum.
std::vector<ProbeSpec> unarySpecs() {
  return {
      unarySpec("own.softmax", "softmax.rows", "softmax", "axis = -1 : i64", {22}, {22}, 5 * 22),
      unarySpec("own.movement", "movement.strided", "transpose", "perm = [0, 2, 1, 3]", {22, 2, 16}, {2, 22, 16}, 0),
      unarySpec("own.movement", "movement.inner", "transpose", "perm = [0, 2, 3, 1]", {22, 2, 16}, {2, 16, 22}, 0),
      unarySpec("own.reduce", "reduce.rows", "reduce_sum", "axes = [-1], keepdims = 0 : i64", {22, 16}, {22}, 352)};
}

ProbeSpec batchedGemmSpec() {
  std::string a = tensorType({22, 16}), b = tensorType({16, 22}), c = tensorType({22, 22});
  return {"own.batched_gemm",
          "gemm.batched",
          "matmul [N,22,16] x [N,16,22]",
          {{{22, 16}}, {{16, 22}}},
          opLine("%out", "matmul", "%arg0, %arg1", "", a + ", " + b, c),
          c,
          (352 + 352 + 484) * 4.0,
          2.0 * 22 * 22 * 16};
}

/// Rows of a table that fits in cache (16000 x 16 f32 = 1 MB), one id per row.
ProbeSpec cachedGatherSpec() {
  const Input table{{16000, 16}, true, 0}, ids{{}, false, 16000};
  std::string out = tensorType({16});
  return {"own.gather",
          "gather.cached",
          "gather rows of a [16000,16] table",
          {table, ids},
          opLine("%out", "gather", "%arg0, %arg1", "axis = 0 : i64", table.type() + ", " + ids.type(), out),
          out,
          (16 * 4.0 + 8) + 16 * 4.0,
          0};
}

/// A kernel's time per call: the calling thread's CPU time when the
/// profile times by CPU time (one thread), else the median wall time like
/// every other benchmark of the run.
double kernelSeconds(const KernelTiming& k) {
  return (usingThreadCpuTime() ? k.cpuMs : k.medianMs) * 1e-3;
}

Status runSpec(const ProbeSpec& s, const std::vector<int64_t>& rows, int threads, double seconds, BackendProbes& out) {
  CAGR_ASSIGN_OR_RETURN(Graph g, parseGraph(graphText(s.inputs, s.body, s.outType), "probe " + s.label));
  for (int64_t n : rows) {
    CAGR_ASSIGN_OR_RETURN(auto timings, timePlan(g, s.inputs, n, threads, seconds));
    if (timings.empty()) return internalError("probe " + s.label + ": the backend timed no kernel");
    ProbePoint p{s.kernel,
                 s.shapeClass,
                 fmt("%s, N=%lld", s.label.c_str(), static_cast<long long>(n)),
                 s.bytesPerRow * static_cast<double>(n),
                 s.flopsPerRow * static_cast<double>(n),
                 kernelSeconds(timings.front()),
                 timings.front().minMs * 1e-3};
    out.points.push_back(p);
  }
  return Status::ok();
}

/// x, y: [N,32]; out = relu((x + y) * y) - x: four kernels unfused, one fused.
Status runFusion(const std::vector<int64_t>& rows, int threads, double seconds, BackendProbes& out) {
  std::string t = tensorType({32}), tt = t + ", " + t;
  std::string body = opLine("%a", "add", "%arg0, %arg1", "", tt, t) + opLine("%m", "mul", "%a, %arg1", "", tt, t) +
                     opLine("%r", "relu", "%m", "", t, t) + opLine("%out", "sub", "%r, %arg0", "", tt, t);
  const std::vector<Input> inputs = {{{32}}, {{32}}};
  CAGR_ASSIGN_OR_RETURN(Graph plain, parseGraph(graphText(inputs, body, t), "fusion probe"));
  Graph fused = plain;
  CAGR_ASSIGN_OR_RETURN(Target target, resolveTarget("cpu"));
  for (bool applied = true; applied;) {  // fuse until no legal fuse is left: one group
    applied = false;
    for (const Candidate& c : enumerateActions(fused, target)) {
      if (c.action.kind != ActionKind::kFuse) continue;
      CAGR_RETURN_IF_ERROR(applyAction(fused, target, c.action));
      applied = true;
      break;
    }
  }
  for (int64_t n : rows) {
    CAGR_ASSIGN_OR_RETURN(auto a, timePlan(plain, inputs, n, threads, seconds));
    CAGR_ASSIGN_OR_RETURN(auto b, timePlan(fused, inputs, n, threads, seconds));
    if (b.size() != 1) return internalError(fmt("fusion probe: the fused chain ran as %zu kernels, not 1", b.size()));
    const double s = 32 * 4.0 * static_cast<double>(n);  // one [N,32] tensor
    FusionProbe f{fmt("relu((x + y) * y) - x over [%lld,32]", static_cast<long long>(n)),
                  4,
                  5 * s,
                  6 * s,
                  0,
                  kernelSeconds(b.front())};
    for (const KernelTiming& k : a) f.unfusedS += kernelSeconds(k);
    out.fusion.push_back(f);
  }
  return Status::ok();
}

}  // namespace

StatusOr<BackendProbes> runBackendProbes(int threads, bool quick, double secondsEach) {
  BackendProbes out;
  // Rows for the streaming probes: ~1.5 KB (dispatch-bound) to ~50 MB
  // (past the last-level cache of a small host) per [N,32] add.
  const std::vector<int64_t> rows =
      quick ? std::vector<int64_t>{4, 4096} : std::vector<int64_t>{4, 64, 512, 4096, 32768, 131072};
  std::vector<ProbeSpec> specs = unarySpecs();
  specs.push_back(addSpec());
  specs.push_back(cachedGatherSpec());
  for (const ProbeSpec& s : specs) {
    CAGR_RETURN_IF_ERROR(runSpec(s, rows, threads, secondsEach, out));
  }
  const std::vector<int64_t> batches =
      quick ? std::vector<int64_t>{64, 2048} : std::vector<int64_t>{8, 64, 512, 2048, 8192, 32768};
  CAGR_RETURN_IF_ERROR(runSpec(batchedGemmSpec(), batches, threads, secondsEach, out));
  const std::vector<int64_t> fusionRows = quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{512, 4096, 32768};
  CAGR_RETURN_IF_ERROR(runFusion(fusionRows, threads, secondsEach, out));
  return out;
}

}  // namespace cagr::hw
