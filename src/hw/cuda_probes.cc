// runCudaProbes / mergeCudaProbes (see cuda_probes.h): IR-text plans of one
// kernel each, compiled on the CUDA backend through the public API and timed
// with Executable::profile (CUDA events per step); work per call counted by
// the op table at the batch (computeStats), as the cost model counts it; the
// floor from a chain of tiny kernels replayed as one CUDA graph
// (DeviceTimed::timeReplays). All figures measured on the GPU it runs on.
#include "hw/cuda_probes.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>

#include "backends/cuda/cuda_timing.h"
#include "cagr/analysis.h"
#include "cagr/backend.h"
#include "cagr/mir.h"
#include "cagr/text.h"
#include "cost/kernel_class.h"
#include "hw/microbench.h"
#include "support/scoped_env.h"
#include "ir/text_format.h"

namespace cagr::hw {
namespace {

using probe::constantLine;
using probe::fixedType;
using probe::Input;
using probe::opLine;
using probe::tensorType;

std::vector<int64_t> pick(bool quick, std::vector<int64_t> full, std::vector<int64_t> few) {
  return quick ? few : full;
}

CudaProbeSpec unary(const std::string& kernel, const std::string& cls, const std::string& op, const std::string& attrs,
                    const std::vector<int64_t>& inTail, const std::vector<int64_t>& outTail,
                    std::vector<int64_t> rows) {
  CudaProbeSpec s;
  s.kernel = kernel;
  s.shapeClass = cls;
  s.inputs = {Input{inTail}};
  s.outType = tensorType(outTail);
  s.body = opLine("%out", op, "%arg0", attrs, tensorType(inTail), s.outType);
  s.label = op + " " + tensorType(inTail) + (attrs.empty() ? "" : " " + attrs);
  s.rows = std::move(rows);
  return s;
}

/// EmbeddingBag (sum) of `pool` ids per row from a constant [tableRows, dim] table.
CudaProbeSpec embeddingBag(const std::string& cls, int64_t tableRows, int64_t dim, int64_t pool,
                           std::vector<int64_t> rows) {
  CudaProbeSpec s;
  s.kernel = "nvrtc.embedding";
  s.shapeClass = cls;
  const Input ids{{pool}, false, tableRows};
  s.inputs = {ids};
  s.outType = tensorType({dim});
  s.body = constantLine("%table", {tableRows, dim}, 0.01) +
           opLine("%out", "embedding_bag", "%table, %arg0", "", fixedType({tableRows, dim}) + ", " +
                  ids.type(), s.outType);
  const std::string hot = pool == 1 ? "one-hot" : fmt("%lld-hot", static_cast<long long>(pool));
  s.label = fmt("embedding_bag %s of a [%lld,%lld] table", hot.c_str(), static_cast<long long>(tableRows),
                static_cast<long long>(dim));
  s.rows = std::move(rows);
  return s;
}

/// One CIN layer: xk [N,h,d] (x) x0 [N,f,d] -> [N,o,d] with constant weights.
/// `kernel`: the catalog kernel the plan asks for ("nvrtc.cin" is what an
/// unassigned CIN runs; others are set as the node's cagr.kernel decision);
/// `math` "f32", or "tf32" / "bf16" as the node's cagr.math decision (the
/// entry is then named kernel_tf32 / kernel_bf16, as the cost model looks
/// up a math mode's kernel).
CudaProbeSpec cinLayer(const std::string& kernel, const std::string& math, int64_t h, int64_t f, int64_t d, int64_t o,
                       bool sameInput, std::vector<int64_t> rows) {
  CudaProbeSpec s;
  s.kernel = math == "f32" ? kernel : kernel + "_" + math;
  std::string attrs = kernel == "nvrtc.cin" && math == "f32" ? "" : "cagr.kernel = \"" + kernel + "\"";
  if (math != "f32") attrs += ", cagr.math = \"" + math + "\"";
  s.shapeClass = "gemm.cin";
  s.inputs = {Input{{f, d}}};
  if (!sameInput) s.inputs.push_back(Input{{h, d}});
  std::string x0 = tensorType({f, d}), xk = sameInput ? x0 : tensorType({h, d});
  s.outType = tensorType({o, d});
  s.body = constantLine("%w", {o, h * f}, 0.01) + constantLine("%b", {o}, 0.01) +
           opLine("%out", "cin", std::string(sameInput ? "%arg0" : "%arg1") + ", %arg0, %w, %b",
                  attrs,
                  xk + ", " + x0 + ", " + fixedType({o, h * f}) + ", " + fixedType({o}), s.outType);
  s.label = fmt("%s [N,%lld,%lld] x [N,%lld,%lld] -> %lld", s.kernel.c_str(), static_cast<long long>(h),
                static_cast<long long>(d),
                static_cast<long long>(f), static_cast<long long>(d), static_cast<long long>(o));
  s.rows = std::move(rows);
  return s;
}

/// A Gemm layer: [N,k] activations by a constant [k,n] weight plus a [n]
/// bias, on `kernel` (the node's cagr.kernel decision), filed as `cls`;
/// `linear`: the weight [n,k] read transposed (transB), as a PyTorch Linear
/// exports it; `math` "tf32" / "bf16": the node's cagr.math decision, the
/// entry named kernel_tf32 / kernel_bf16 (f32 operands: what a plan's
/// reduced-math GEMM over f32 activations runs, cuBLASLt's FAST_TF32 /
/// FAST_16BF compute).
CudaProbeSpec gemmLayer(const std::string& kernel, const std::string& cls, int64_t k, int64_t n,
                        std::vector<int64_t> rows, bool linear = false, const std::string& math = "f32") {
  CudaProbeSpec s;
  s.kernel = math == "f32" ? kernel : kernel + "_" + math;
  s.shapeClass = cls;
  s.inputs = {Input{{k}}};
  s.outType = tensorType({n});
  const std::vector<int64_t> w = linear ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  s.body = constantLine("%w", w, 0.01) + constantLine("%b", {n}, 0.01) +
           opLine("%out", "gemm", "%arg0, %w, %b",
                  std::string(linear ? "transB = 1 : i64, " : "") + "cagr.kernel = \"" + kernel + "\"" +
                      (math == "f32" ? "" : ", cagr.math = \"" + math + "\""),
                  tensorType({k}) + ", " + fixedType(w) + ", " + fixedType({n}), s.outType);
  s.label = fmt("%s gemm [N,%lld] x [%lld,%lld]%s + bias", s.kernel.c_str(), static_cast<long long>(k),
                static_cast<long long>(w[0]), static_cast<long long>(w[1]), linear ? "^T" : "");
  s.rows = std::move(rows);
  return s;
}

/// A MatMul of two activations [N,h,m,k] x [N,h,k,n] (AutoInt's attention
/// scores and their product with the values): N*h small products, which the
/// backend runs as one strided-batched cuBLAS call (cuda_gemm.cc), far below
/// the rate of one GEMM of the same FLOPs; priced as gemm.batched
/// (kernel_class.cc isBatchedProduct), by its own FLOP curve, on `kernel`
/// (cublas.sgemm: strided-batched cuBLAS; cublaslt.matmul: a batched layout).
CudaProbeSpec batchedMatmul(const std::string& kernel, int64_t h, int64_t m, int64_t k, int64_t n,
                            std::vector<int64_t> rows) {
  CudaProbeSpec s;
  s.kernel = kernel;
  s.shapeClass = "gemm.batched";
  s.inputs = {Input{{h, m, k}}, Input{{h, k, n}}};
  s.outType = tensorType({h, m, n});
  s.body = opLine("%out", "matmul", "%arg0, %arg1", "cagr.kernel = \"" + kernel + "\"",
                  tensorType({h, m, k}) + ", " + tensorType({h, k, n}), s.outType);
  s.label = kernel + " matmul " + tensorType({h, m, k}) + " x " + tensorType({h, k, n});
  s.rows = std::move(rows);
  return s;
}

/// Table-batched lookups (EmbeddingBags, one id per table and row): `lookups`
/// constant [1000, dim] tables read with `fields` id columns (lookups >
/// fields: the ids are shared through `slots`, as Wide&Deep's wide and deep
/// tables share theirs), priced by tables x rows (bytes).
/// `narrow` > 0: the tables past the first `fields` are [1000, narrow]
/// (Wide&Deep's 1-wide wide part), class gather.tables_mixed.
CudaProbeSpec multiTableBags(int64_t fields, int64_t lookups, int64_t dim, std::vector<int64_t> rows,
                             int64_t narrow = 0) {
  CudaProbeSpec s;
  s.kernel = "nvrtc.embedding";
  s.shapeClass = narrow > 0 ? "gather.tables_mixed" : "gather.tables";
  const Input ids{{fields}, false, 1000};
  s.inputs = {ids};
  std::string args, types, slots;
  const int64_t tables = lookups;
  int64_t width = 0;
  for (int64_t t = 0; t < tables; ++t) {
    std::string name = "%t" + std::to_string(t);
    const int64_t d = narrow > 0 && t >= fields ? narrow : dim;
    width += d;
    s.body += constantLine(name, {1000, d}, 0.01 + 0.001 * static_cast<double>(t));
    args += name + ", ";
    types += fixedType({1000, d}) + ", ";
  }
  s.outType = tensorType({width});
  for (int64_t l = 0; l < lookups; ++l) slots += (l == 0 ? "" : ", ") + std::to_string(l % fields);
  std::string attrs = fmt("num_tables = %lld : i64, mode = \"sum\"", static_cast<long long>(lookups));
  if (lookups != fields) attrs += ", slots = [" + slots + "]";
  s.body += opLine("%out", "embedding_bags", args + "%arg0", attrs, types + ids.type(), s.outType);
  s.label = fmt("embedding_bags of %lld one-hot [1000,%lld] tables over %lld id columns",
                static_cast<long long>(lookups), static_cast<long long>(dim), static_cast<long long>(fields));
  if (narrow > 0)
    s.label +=
        fmt(" (the last %lld [1000,%lld])", static_cast<long long>(lookups - fields), static_cast<long long>(narrow));
  s.rows = std::move(rows);
  return s;
}

/// NGCF's CSR SpMM (probe::spmmCsrPlan) on the generated kernel.
CudaProbeSpec spmmCsr(int64_t rows, int64_t perRow, int64_t k, bool skewed) {
  probe::CsrPlan plan = probe::spmmCsrPlan(rows, perRow, k, skewed);
  CudaProbeSpec s;
  s.kernel = "nvrtc.spmm";
  s.shapeClass = skewed ? "spmm.skewed" : "spmm.csr";
  s.body = std::move(plan.body);
  s.outType = std::move(plan.outType);
  s.label = std::move(plan.label);
  s.rows = {1};
  return s;
}

}  // namespace

std::vector<CudaProbeSpec> cudaProbeSpecs(bool quick) {
  // Rows: from a handful (the launch floor) to ~100 MB per call (HBM, past
  // the 50 MB L2).
  const std::vector<int64_t> stream = pick(quick, {4, 256, 4096, 32768, 262144, 1048576}, {4, 4096});
  const std::vector<int64_t> batches = pick(quick, {4, 256, 1024, 4096, 16384, 65536}, {4, 4096});
  std::vector<CudaProbeSpec> out;
  CudaProbeSpec add;
  add.kernel = "nvrtc.eltwise";
  add.shapeClass = "eltwise.stream";
  add.inputs = {Input{{32}}, Input{{32}}};
  add.outType = tensorType({32});
  add.body = opLine("%out", "add", "%arg0, %arg1", "", add.outType + ", " + add.outType, add.outType);
  add.label = "add [N,32]";
  add.rows = stream;
  out.push_back(add);
  out.push_back(unary("nvrtc.reduce", "reduce.rows", "reduce_sum", "axes = [-1], keepdims = 0 : i64", {22, 16}, {22},
                      batches));
  // Softmax rows of 22 (AutoInt's attention, [N,2,22,22] over the last axis):
  // more passes over a row than a sum, so its own class.
  out.push_back(unary("nvrtc.reduce", "softmax.rows", "softmax", "axis = -1 : i64", {2, 22, 22}, {2, 22, 22},
                      batches));
  // AutoInt's two batched products per attention layer (2 heads, 22 fields, 16 dims).
  for (const char* k : {"cublas.sgemm", "cublaslt.matmul"}) {
    out.push_back(batchedMatmul(k, 2, 22, 16, 22, batches));
    out.push_back(batchedMatmul(k, 2, 22, 22, 16, batches));
  }
  out.push_back(unary("nvrtc.movement", "movement.strided", "transpose", "perm = [0, 2, 1, 3]", {22, 2, 16},
                      {2, 22, 16}, batches));
  out.push_back(unary("nvrtc.movement", "movement.inner", "transpose", "perm = [0, 2, 3, 1]", {22, 2, 16},
                      {2, 16, 22}, batches));
  // Lookups: small tables stay in L2 (xDeepFM, DeepFM), a 128 MB one does not
  // (DLRM); one id per bag and 8 ids per bag.
  out.push_back(embeddingBag("gather.cached", 1000, 16, 1, batches));
  out.push_back(embeddingBag("gather.cached", 1000, 16, 8, batches));
  out.push_back(embeddingBag("gather.uniform", 1000000, 32, 1, batches));
  out.push_back(embeddingBag("gather.uniform", 1000000, 32, 8, batches));
  // DLRM's dot interaction of 27 vectors of 16, DeepFM's FM over 39 fields of 10.
  out.push_back(unary("nvrtc.interaction", "gemm.interaction", "interaction", "", {27, 16}, {351}, batches));
  out.push_back(unary("nvrtc.fm", "reduce.fm", "fm", "", {39, 10}, {1}, batches));
  // The generated GEMM at DLRM's layer shapes, filed by the form the
  // backend generates for each (generatedGemmFormClass, kernel_class.h; the
  // forms run ~10x apart at equal FLOPs): K = 13 on the row kernel
  // (gemm.rows), N = 16 and 64 on the narrow kernel (gemm.narrow), 512 x 256
  // on the FFMA tiles (gemm.tiles), N = 1 on row dots (gemm.skinny).
  out.push_back(gemmLayer("nvrtc.gemm_small", "gemm.rows", 13, 512, batches));
  out.push_back(gemmLayer("nvrtc.gemm_small", "gemm.narrow", 64, 16, batches));
  out.push_back(gemmLayer("nvrtc.gemm_small", "gemm.narrow", 256, 64, batches));
  out.push_back(gemmLayer("nvrtc.gemm_small", "gemm.tiles", 512, 256, batches));
  out.push_back(gemmLayer("nvrtc.gemm_small", "gemm.skinny", 256, 1, batches));
  // f32 cuBLASLt layers over a Linear's weight as the backend runs them
  // (kTunedGemmClass: tuned on the first run; on sm_90 maybe on its wgmma
  // tile): DLRM's, DCN-v2's and a 1024-wide layer, each call >= 2.7e8 FLOPs;
  // a 4-row call of a small layer is the entry's overhead (dispatch).
  const std::vector<int64_t> tunedRows = pick(quick, {1024, 4096, 16384}, {4096});
  // The same layers in tf32 and bf16 math over f32 activations (the
  // profiler's cublas.gemm_bf16 runs bf16 operands, a rate such a plan
  // never reaches: DLRM's and DCN-v2's bf16 plans measured 35-50 % slower
  // than priced so on an H100, no faster than their tf32 plans).
  // (From 256 rows: no other entry prices them, and DLRM's at batch 256 were
  // the worst priced.)
  // Reduced-math layers at the widths the CUDA backend runs them: DLRM's
  // 367 and DCN-v2's 429 features come from a Concat, which pad_gemm_dims
  // widens to 368 / 432 for tensor cores (at 429, unpadded, these probes
  // measured 4096-row layers 2-3x slower than the padded plans ran them).
  const std::vector<int64_t> mathRows = pick(quick, {256, 1024, 4096, 16384}, {256, 4096});
  for (const std::string math : {"f32", "tf32", "bf16"}) {
    out.push_back(gemmLayer("cublaslt.matmul", kTunedGemmClass, 256, 64, {4}, true, math));
    const bool f32 = math == "f32";
    const int64_t dlrm = f32 ? 367 : 368, dcn = f32 ? 429 : 432;
    for (auto [k, n] : {std::pair<int64_t, int64_t>{512, 256}, {dlrm, 512}, {dcn, dcn}, {400, 400}, {1024, 1024}}) {
      out.push_back(gemmLayer("cublaslt.matmul", kTunedGemmClass, k, n, f32 ? tunedRows : mathRows, true, math));
    }
    // (and DLRM's 256 -> 64, 8.4e6 FLOPs at batch 256)
    if (math != "f32") out.push_back(gemmLayer("cublaslt.matmul", kTunedGemmClass, 256, 64, mathRows, true, math));
  }
  // Table-batched one-hot lookups (DCN-v2 / DLRM's 26 tables, Wide&Deep's
  // 52 lookups into 26): their own curve, not the one-table probe's.
  // (N = 4: the smallest call, whose time is the entry's overhead.)
  const std::vector<int64_t> tbeRows = pick(quick, {4, 256, 1024, 4096, 16384, 65536}, {4, 4096});
  out.push_back(multiTableBags(26, 26, 16, tbeRows));
  out.push_back(multiTableBags(26, 52, 16, tbeRows));
  out.push_back(multiTableBags(26, 52, 16, tbeRows, 1));
  // NGCF's CSR SpMM (64 columns): uniform rows and skewed ones, from L2-sized
  // to larger graphs; 100 rows (1,600 entries) is the smallest call, whose
  // time is the entries' overhead.
  for (int64_t rows : quick ? std::vector<int64_t>{100, 2000} : std::vector<int64_t>{100, 2000, 8000, 32000}) {
    out.push_back(spmmCsr(rows, 16, 64, false));
    out.push_back(spmmCsr(rows, 16, 64, true));
  }
  // xDeepFM's CIN layers: 22 fields of 16, 200 maps.
  const std::vector<int64_t> cinRows = pick(quick, {4, 64, 256, 1024, 4096, 8192}, {4, 256});
  std::vector<std::string> cinKernels = {"nvrtc.cin"};
  if (kernelByName("cublaslt.cin").isOk()) cinKernels.push_back("cublaslt.cin");  // the cuBLASLt CIN, where built
  for (const std::string& k : cinKernels) {
    for (const char* math : {"f32", "tf32", "bf16"}) {
      out.push_back(cinLayer(k, math, 22, 22, 16, 200, true, cinRows));
      out.push_back(cinLayer(k, math, 200, 22, 16, 200, false, cinRows));
    }
  }
  return out;
}

CudaProbeSpec launchChainSpec(int kernels) {
  CudaProbeSpec s;
  s.kernel = kGraphStepKernel;
  s.shapeClass = kGraphStepClass;
  s.inputs = {Input{{4}}};
  s.outType = tensorType({4});
  std::string prev = "%arg0";
  for (int i = 0; i < kernels; ++i) {
    std::string res = i + 1 == kernels ? "%out" : "%r" + std::to_string(i);
    s.body += opLine(res, "relu", prev, "", s.outType, s.outType);
    prev = res;
  }
  s.label = fmt("%d relu kernels in a chain over [N,4]", kernels);
  s.rows = {4};
  return s;
}

namespace {

struct Compiled {
  Graph plan;
  std::unique_ptr<Executable> exe;
};

// `batch` > 0: the plan is marked as priced at that batch (Graph::meta), as
// an optimized plan is, so the backend picks the kernel variant such a plan gets.
StatusOr<Compiled> compileSpec(ExecutionBackend& backend, const CudaProbeSpec& s, int64_t batch = 0) {
  Compiled c;
  CAGR_ASSIGN_OR_RETURN(c.plan, parseGraph(s.text(), "cuda probe " + s.label));
  if (batch > 0) c.plan.mutableMeta().set("batch", batch);
  CAGR_ASSIGN_OR_RETURN(c.exe, backend.compile(c.plan));
  return c;
}

// Per-step timings at batch n, repeated for about `seconds` (10..500 runs).
StatusOr<std::vector<KernelTiming>> timeSteps(Executable& exe, const CudaProbeSpec& s, int64_t n, double seconds,
                                              int& repeats) {
  auto in = probe::randomInputs(s.inputs, n);
  CAGR_ASSIGN_OR_RETURN(auto first, exe.profile(in, 3));  // warm: module loaded, arena, graph captured
  double once = 0;
  for (const KernelTiming& k : first) once += k.medianMs * 1e-3 + 10e-6;  // + the host's share per step
  repeats = static_cast<int>(std::clamp(seconds / std::max(once, 1e-6), 10.0, 500.0));
  return exe.profile(in, repeats);
}

Status runSpec(ExecutionBackend& backend, const CudaProbeSpec& s, double seconds, CudaProbes& out) {
  // A CIN layer's generated kernel depends on the batch its plan was priced
  // at (codegen_cin.cc: cagr_cin_wg_step or cagr_cin_x3_step): compiled per row count.
  const bool perBatch = s.shapeClass == "gemm.cin";
  CAGR_ASSIGN_OR_RETURN(Compiled c, compileSpec(backend, s, perBatch ? s.rows.front() : 0));
  for (int64_t n : s.rows) {
    if (perBatch && n != s.rows.front()) {
      CAGR_ASSIGN_OR_RETURN(c, compileSpec(backend, s, n));
    }
    int repeats = 0;
    CAGR_ASSIGN_OR_RETURN(auto steps, timeSteps(*c.exe, s, n, seconds, repeats));
    if (steps.empty()) return internalError("cuda probe " + s.label + ": the backend timed no step");
    // The probe's kernel is its longest step (a plan of one op has one).
    const KernelTiming& k = *std::max_element(steps.begin(), steps.end(), [](const auto& a, const auto& b) {
      return a.medianMs < b.medianMs;
    });
    CAGR_ASSIGN_OR_RETURN(GraphStats stats, computeStats(c.plan, defaultBindings(c.plan, n)));
    double bytes = 0, flops = 0;
    for (NodeId id : k.nodes) {
      const OpCounts& oc = stats.nodes[static_cast<size_t>(id)].counts;
      bytes += oc.bytesRead + oc.bytesWritten;
      flops += oc.flops;
      // Table-batched lookups: the bytes the cost model prices them by.
      if (s.shapeClass.rfind("gather.tables", 0) == 0) {
        bytes += tableBatchPadding(c.plan, c.plan.node(id), stats.nodes[static_cast<size_t>(id)].outShapes[0]);
      }
    }
    out.probes.points.push_back(ProbePoint{s.kernel, s.shapeClass,
                                           fmt("%s, N=%lld (%s)", s.label.c_str(), static_cast<long long>(n),
                                               k.kernel.c_str()),
                                           bytes, flops, k.medianMs * 1e-3, k.minMs * 1e-3});
    out.repeats = out.repeats == 0 ? repeats : std::min(out.repeats, repeats);
  }
  return Status::ok();
}

double medianMs(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The compute capability in the device string the executable reports
// ("NVIDIA H200 (sm_90)" -> 90), or 0.
int smOf(const std::string& device) {
  size_t at = device.rfind("(sm_");
  return at == std::string::npos ? 0 : std::atoi(device.c_str() + at + 4);
}

// One-kernel and `chain`-kernel graphs replayed (the chain with plain
// launches, then with programmatic ones as the backend launches its
// generated kernels by default); the chain's steps timed alone.
Status runLaunchFloor(ExecutionBackend& backend, int chain, CudaProbes& out) {
  const char* pdl = std::getenv("CAGR_CUDA_PDL");
  const bool programmatic = pdl == nullptr || std::string(pdl) != "0";
  double replay[3] = {0, 0, 0};  // one kernel, the chain, the chain with programmatic launches
  for (int i = 0; i < (programmatic ? 3 : 2); ++i) {
    ScopedEnv env("CAGR_CUDA_PDL", i < 2 ? "0" : pdl);
    CudaProbeSpec s = launchChainSpec(i == 0 ? 1 : chain);
    CAGR_ASSIGN_OR_RETURN(Compiled c, compileSpec(backend, s));
    auto* timed = dynamic_cast<cuda::DeviceTimed*>(c.exe.get());
    if (timed == nullptr) return internalError("the cuda backend's executable has no device timing");
    auto in = probe::randomInputs(s.inputs, 4);
    CAGR_ASSIGN_OR_RETURN(cuda::ReplayTiming t, timed->timeReplays(in, 300, 1));
    replay[i] = medianMs(t.replayMs) * 1e-3;
    out.device = t.device;
    if (i == 1) {
      CAGR_ASSIGN_OR_RETURN(auto steps, c.exe->profile(in, 50));
      std::vector<double> ms;
      for (const KernelTiming& k : steps) ms.push_back(k.medianMs);
      out.floor.singleStepS = medianMs(ms) * 1e-3;
    }
  }
  out.floor.chainKernels = chain;
  out.floor.graphOneKernelS = replay[0];
  out.floor.graphPerKernelS = std::max(0.0, (replay[1] - replay[0]) / (chain - 1));
  out.floor.graphPerKernelPdlS =
      programmatic && smOf(out.device) >= 90 ? std::max(0.0, (replay[2] - replay[0]) / (chain - 1)) : 0;
  return Status::ok();
}

}  // namespace

StatusOr<CudaProbes> runCudaProbes(bool quick, double secondsEach, const ProbeProgress& progress) {
  auto made = makeBackend("cuda");
  if (!made.isOk()) return made.status().withContext("cagr profile --target cuda");
  std::unique_ptr<ExecutionBackend> backend = std::move(*made);
  BackendCapabilities caps = backend->capabilities();
  if (!caps.available) return unsupported("cagr profile --target cuda: no usable GPU: " + caps.note);
  CudaProbes out;
  std::vector<CudaProbeSpec> specs = cudaProbeSpecs(quick);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (progress) progress(static_cast<double>(i) / static_cast<double>(specs.size() + 1), specs[i].label);
    CAGR_RETURN_IF_ERROR(runSpec(*backend, specs[i], secondsEach, out).withContext("cuda probe " + specs[i].label));
  }
  if (progress) progress(static_cast<double>(specs.size()) / static_cast<double>(specs.size() + 1), "launch floor");
  CAGR_RETURN_IF_ERROR(runLaunchFloor(*backend, quick ? 16 : 64, out).withContext("cuda launch-floor probe"));
  if (progress) progress(1.0, "done");
  return out;
}

StatusOr<HardwareProfile> mergeCudaProbes(HardwareProfile p, const CudaProbes& probes) {
  if (p.kind != "gpu" || p.vendor != "nvidia") {
    return invalidArgument("cagr profile --target cuda --merge: profile '" + p.name +
                           "' is not an NVIDIA GPU profile (kind " + p.kind + ", vendor " + p.vendor + ")");
  }
  std::map<std::pair<std::string, std::string>, std::vector<const ProbePoint*>> byEntry;
  for (const ProbePoint& pt : probes.probes.points) {
    if (pt.seconds > 0) byEntry[{pt.kernel, pt.shapeClass}].push_back(&pt);
  }
  const std::string how =
      fmt("measured on %s: CAGR's CUDA backend running generated one-kernel plans (Executable::profile: CUDA events "
          "around each step, steps issued one by one, median of >= %d runs per call)",
          probes.device.c_str(), probes.repeats);
  auto place = [&p](KernelEfficiency e) {
    auto same = std::find_if(p.efficiencies.begin(), p.efficiencies.end(), [&](const KernelEfficiency& x) {
      return x.kernel == e.kernel && x.shapeClass == e.shapeClass;
    });
    if (same == p.efficiencies.end()) {
      p.efficiencies.push_back(std::move(e));
    } else {
      *same = std::move(e);
    }
  };
  for (const auto& [key, pts] : byEntry) place(probeEntry(pts, how));
  const LaunchFloor& f = probes.floor;
  // The floor entries are read for overhead_s only; bytes_per_s is there
  // because the schema wants a rate.
  auto floorEntry = [&](const char* cls, double seconds, int samples, const std::string& what) {
    if (!(seconds > 0)) return;
    KernelEfficiency e;
    e.kernel = kGraphStepKernel;
    e.shapeClass = cls;
    e.overheadS = seconds;
    e.bytesPerS = p.dramBandwidth();
    e.samples = samples;
    e.source = "measured on " + probes.device + ": " + what +
               "; bytes_per_s: the base profile's device-memory bandwidth (not used)";
    place(std::move(e));
  };
  floorEntry(kGraphStepClass, f.graphPerKernelS, 2,
             fmt("per-kernel floor inside a CUDA graph replay of CAGR's own generated kernels, launched plainly: "
                 "(median replay of %d tiny relu kernels %.2f us - one-kernel graph %.2f us) / %d; the cost model "
                 "charges it per kernel of a plan instead of launch_latency_s (the CUDA backend replays plans as "
                 "graphs)",
                 f.chainKernels, (f.graphOneKernelS + f.graphPerKernelS * (f.chainKernels - 1)) * 1e6,
                 f.graphOneKernelS * 1e6, f.chainKernels - 1));
  if (f.graphPerKernelPdlS > 0 && f.graphPerKernelPdlS < f.graphPerKernelS) {
    floorEntry(kGraphStepPdlClass, f.graphPerKernelPdlS, 2,
               fmt("per-kernel floor of the same chain with each kernel a programmatic dependent of the one before "
                   "it (as the CUDA backend launches its generated kernels on sm_90+): (median replay %.2f us - "
                   "one-kernel graph %.2f us) / %d; the cost model charges it per generated kernel, %s per library "
                   "call",
                   (f.graphOneKernelS + f.graphPerKernelPdlS * (f.chainKernels - 1)) * 1e6,
                   f.graphOneKernelS * 1e6, f.chainKernels - 1, kGraphStepClass));
  }
  floorEntry(kGraphReplayClass, f.graphOneKernelS, 1,
             "median replay of a one-kernel CUDA graph of one tiny generated kernel (graph launch included); the "
             "cost model charges it less one per-kernel floor once per plan");
  floorEntry(kSingleStepClass, f.singleStepS, 1,
             fmt("median CUDA-event time of one tiny generated kernel issued alone (no graph), over the %d steps of "
                 "the chain; what `cagr bench --breakdown` times per kernel",
                 f.chainKernels));
  p.provenance = "measured";
  p.notes += fmt("%sbackend probes (cagr profile --target cuda, measured on %s): %zu entries of CAGR's own CUDA "
                 "kernels (nvrtc.*, and cuBLASLt layers as the backend tunes them) and the CUDA-graph per-kernel "
                 "floor %.2f us (%.2f us with programmatic launches; single step %.2f us)",
                 p.notes.empty() ? "" : "; ", probes.device.c_str(), byEntry.size(), f.graphPerKernelS * 1e6,
                 (f.graphPerKernelPdlS > 0 ? f.graphPerKernelPdlS : f.graphPerKernelS) * 1e6, f.singleStepS * 1e6);
  return p;
}

}  // namespace cagr::hw
