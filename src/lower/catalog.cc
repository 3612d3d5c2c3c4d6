// The kernel catalog: every kernel implementation a backend family offers,
// with the pattern it runs as one kernel, what its epilogue accepts and the
// profile kernel that prices it. Backends (issues 5, 6) implement these
// names; rewrites offer only what is listed here for the plan's backend.
#include <algorithm>

#include "cagr/mir.h"
#include "lower/op_sets.h"

namespace cagr {
namespace {

constexpr uint8_t mode(Precision p) { return static_cast<uint8_t>(1u << static_cast<int>(p)); }
constexpr uint8_t kF32 = mode(Precision::kF32);
constexpr uint8_t kTensorCore = kF32 | mode(Precision::kTF32) | mode(Precision::kBF16) | mode(Precision::kF16);
constexpr uint8_t kHalf = kF32 | mode(Precision::kBF16) | mode(Precision::kF16);

using B = Backend;
using P = Pattern;

std::vector<KernelInfo> buildCatalog() {
  const uint64_t any = ops::kEltwise | ops::kViews;
  const uint64_t onednnPost = ops::kOneDnnPostOps | ops::kViews;
  const uint64_t biasAct = ops::bit(OpKind::kAdd) | ops::bit(OpKind::kRelu) | ops::bit(OpKind::kGelu) | ops::kViews;
  // What cublaslt.cin's transpose kernel applies: one-operand activations (and views).
  // Both CUDA CIN kernels also pool: a ReduceSum over the embedding dim may end the group
  // (groups.cc checkCinPooling), its row sums written by the same kernel. CPU's own.cin takes no tail.
  const uint64_t cinPool = ops::bit(OpKind::kReduceSum);
  const uint64_t cinAct = ops::bit(OpKind::kRelu) | ops::bit(OpKind::kLeakyRelu) | ops::bit(OpKind::kSigmoid) |
                          ops::bit(OpKind::kTanh) | ops::bit(OpKind::kGelu) | ops::kViews | cinPool;
  return {
      {"auto", B::kCpu, P::kSingle, "", 0, 0xff, "the backend's default kernel for one node"},
      // ---- CPU (issue 5) ----
      {"onednn.matmul", B::kCpu, P::kGemm, "onednn.matmul", onednnPost, kF32,
       "oneDNN matmul / inner product with eltwise and binary post-ops"},
      {"openblas.sgemm", B::kCpu, P::kGemm, "openblas.sgemm", ops::kViews, kF32, "OpenBLAS sgemm, no epilogue"},
      {"own.gemm", B::kCpu, P::kGemm, "own.gemm", any, kF32, "CAGR's register-blocked small GEMM, any eltwise epilogue"},
      {"own.eltwise", B::kCpu, P::kEltwise, "own.eltwise", 0, kF32, "vectorised elementwise chain, one pass"},
      {"own.reduce", B::kCpu, P::kReduce, "own.reduce", 0, kF32, "elementwise prologue + row reduction"},
      {"own.embedding", B::kCpu, P::kGather, "own.gather", any | ops::bit(OpKind::kConcat), kF32,
       "table-batched embedding bag / gather with an elementwise tail"},
      {"own.interaction", B::kCpu, P::kInteraction, "own.gather", 0, kF32, "lookups + dot interaction + concat"},
      {"own.fm", B::kCpu, P::kFM, "own.gather", 0, kF32, "lookups + FM second-order term"},
      {"own.cin", B::kCpu, P::kCin, "own.gemm", 0, kF32, "CIN layer, outer product never written"},
      {"own.concat_inplace", B::kCpu, P::kConcatInPlace, "", 0, kF32, "producers write into the concat buffer"},
      // ---- CUDA (issue 6) ----
      {"cublas.sgemm", B::kCuda, P::kGemm, "cublas.sgemm", ops::kViews, kTensorCore, "cuBLAS GEMM, no epilogue"},
      {"cublaslt.matmul", B::kCuda, P::kGemm, "cublaslt.matmul", biasAct, kTensorCore,
       "cuBLASLt matmul with bias / ReLU / GELU epilogue"},
      // Its "epilogue" may hold a second Gemm: a narrow two-layer chain (groups.cc checkGemmChain).
      {"nvrtc.gemm_small", B::kCuda, P::kGemm, "", any | ops::bit(OpKind::kGemm), kF32,
       "generated small-GEMM kernel, any eltwise epilogue, or two narrow layers as one kernel"},
      {"nvrtc.eltwise", B::kCuda, P::kEltwise, "own.eltwise", 0, kHalf, "generated elementwise chain"},
      {"nvrtc.reduce", B::kCuda, P::kReduce, "own.reduce", 0, kHalf, "generated prologue + reduction"},
      {"nvrtc.embedding", B::kCuda, P::kGather, "own.gather", any | ops::bit(OpKind::kConcat), kHalf,
       "generated table-batched embedding bag, vectorised row loads"},
      {"nvrtc.interaction", B::kCuda, P::kInteraction, "own.gather", 0, kHalf, "generated lookups + interaction"},
      {"nvrtc.fm", B::kCuda, P::kFM, "own.gather", 0, kHalf, "generated lookups + FM"},
      {"nvrtc.cin", B::kCuda, P::kCin, "cublas.sgemm", any | cinPool, kTensorCore,
       "generated CIN layer, no outer product in memory (wmma for tf32/bf16/f16), any eltwise epilogue, pooling"},
      {"cublaslt.cin", B::kCuda, P::kCin, "cublaslt.matmul", cinAct, kTensorCore,
       "CIN layer as outer-product chunks in a bounded scratch times one cuBLASLt GEMM each, activation epilogue, "
       "pooling"},
      {"nvrtc.concat_inplace", B::kCuda, P::kConcatInPlace, "", 0, kHalf, "producers write into the concat buffer"},
      // ---- HIP (AMD) ----
      {"rocblas.sgemm", B::kHip, P::kGemm, "rocblas.sgemm", ops::kViews, kHalf, "rocBLAS GEMM, no epilogue"},
      {"hip.gemm_small", B::kHip, P::kGemm, "", any, kF32, "generated small-GEMM kernel, any eltwise epilogue"},
      {"hip.eltwise", B::kHip, P::kEltwise, "own.eltwise", 0, kHalf, "generated elementwise chain"},
      {"hip.reduce", B::kHip, P::kReduce, "own.reduce", 0, kHalf, "generated prologue + reduction"},
      {"hip.embedding", B::kHip, P::kGather, "own.gather", any | ops::bit(OpKind::kConcat), kHalf,
       "generated table-batched embedding bag"},
      {"hip.interaction", B::kHip, P::kInteraction, "own.gather", 0, kHalf, "generated lookups + interaction"},
      {"hip.fm", B::kHip, P::kFM, "own.gather", 0, kHalf, "generated lookups + FM"},
      {"hip.cin", B::kHip, P::kCin, "rocblas.sgemm", 0, kHalf, "generated CIN layer"},
      {"hip.concat_inplace", B::kHip, P::kConcatInPlace, "", 0, kHalf, "producers write into the concat buffer"},
      // ---- TPU (StableHLO / XLA) ----
      {"xla.dot", B::kTpu, P::kGemm, "xla.dot", any, kF32 | mode(Precision::kBF16), "XLA dot fused with its epilogue"},
      {"xla.fusion", B::kTpu, P::kEltwise, "xla.eltwise", 0, kF32 | mode(Precision::kBF16), "XLA loop fusion"},
      {"xla.reduce", B::kTpu, P::kReduce, "xla.reduce", 0, kF32 | mode(Precision::kBF16), "XLA reduce fusion"},
      {"xla.gather", B::kTpu, P::kGather, "xla.gather", any | ops::bit(OpKind::kConcat), kF32 | mode(Precision::kBF16),
       "XLA gather fusion"},
      {"xla.interaction", B::kTpu, P::kInteraction, "xla.gather", 0, kF32 | mode(Precision::kBF16),
       "XLA fusion of lookups + interaction"},
      {"xla.fm", B::kTpu, P::kFM, "xla.gather", 0, kF32 | mode(Precision::kBF16), "XLA fusion of lookups + FM"},
      {"xla.cin", B::kTpu, P::kCin, "xla.dot", 0, kF32 | mode(Precision::kBF16), "CIN as dots, no outer product"},
      {"xla.concat_inplace", B::kTpu, P::kConcatInPlace, "", 0, kF32 | mode(Precision::kBF16),
       "producers write into the concat buffer"},
  };
}

}  // namespace

const char* precisionName(Precision p) {
  switch (p) {
    case Precision::kF32: return "f32";
    case Precision::kTF32: return "tf32";
    case Precision::kBF16: return "bf16";
    case Precision::kF16: return "f16";
    case Precision::kInt8Rowwise: return "int8_rowwise";
  }
  return "?";
}

StatusOr<Precision> parsePrecision(const std::string& s) {
  for (Precision p : {Precision::kF32, Precision::kTF32, Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise}) {
    if (s == precisionName(p)) return p;
  }
  return invalidArgument("unknown precision '" + s + "' (expected f32, tf32, bf16, f16 or int8_rowwise)");
}

const char* layoutName(Layout l) {
  switch (l) {
    case Layout::kRowMajor: return "row_major";
    case Layout::kPacked: return "packed";
    case Layout::kPadded: return "padded";
  }
  return "?";
}

StatusOr<Layout> parseLayout(const std::string& s) {
  for (Layout l : {Layout::kRowMajor, Layout::kPacked, Layout::kPadded}) {
    if (s == layoutName(l)) return l;
  }
  return invalidArgument("unknown layout '" + s + "' (expected row_major, packed or padded)");
}

const char* backendName(Backend b) {
  switch (b) {
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
    case Backend::kHip: return "hip";
    case Backend::kTpu: return "tpu";
  }
  return "?";
}

const char* patternName(Pattern p) {
  switch (p) {
    case Pattern::kSingle: return "single";
    case Pattern::kGemm: return "gemm";
    case Pattern::kEltwise: return "eltwise";
    case Pattern::kReduce: return "reduce";
    case Pattern::kGather: return "gather";
    case Pattern::kInteraction: return "interaction";
    case Pattern::kFM: return "fm";
    case Pattern::kCin: return "cin";
    case Pattern::kConcatInPlace: return "concat_in_place";
  }
  return "?";
}

const std::vector<KernelInfo>& kernelCatalog() {
  static const std::vector<KernelInfo> catalog = buildCatalog();
  return catalog;
}

const KernelInfo& kernelInfo(KernelId id) {
  const auto& c = kernelCatalog();
  return id < c.size() ? c[id] : c[0];
}

StatusOr<KernelId> kernelByName(const std::string& name) {
  const auto& c = kernelCatalog();
  for (size_t i = 0; i < c.size(); ++i) {
    if (name == c[i].name) return static_cast<KernelId>(i);
  }
  return notFound("unknown kernel '" + name + "'");
}

bool Target::supportsStorage(Precision p) const {
  return std::find(storage.begin(), storage.end(), p) != storage.end();
}
bool Target::supportsMath(Precision p) const { return std::find(math.begin(), math.end(), p) != math.end(); }

StatusOr<Target> makeTarget(HardwareProfile hw) {
  Target t;
  using Pr = Precision;
  if (hw.kind == "cpu") {
    t.backend = Backend::kCpu;
    // One stream: independent branches on split thread teams would share the
    // same cores, so the critical-path model's free overlap does not hold.
    t.streams = 1;
    t.storage = {Pr::kF32, Pr::kBF16, Pr::kF16, Pr::kInt8Rowwise};
    t.math = {Pr::kF32};
  } else if (hw.kind == "tpu") {
    t.backend = Backend::kTpu;
    t.streams = 1;  // one XLA program, scheduled by XLA
    t.storage = {Pr::kF32, Pr::kBF16, Pr::kInt8Rowwise};
    t.math = {Pr::kF32, Pr::kBF16};
  } else if (hw.kind == "gpu" && hw.vendor == "amd") {
    t.backend = Backend::kHip;
    t.streams = 4;
    t.storage = {Pr::kF32, Pr::kBF16, Pr::kF16, Pr::kInt8Rowwise};
    t.math = {Pr::kF32, Pr::kBF16, Pr::kF16};
  } else if (hw.kind == "gpu") {
    t.backend = Backend::kCuda;
    t.streams = 4;
    t.storage = {Pr::kF32, Pr::kBF16, Pr::kF16, Pr::kInt8Rowwise};
    t.math = {Pr::kF32, Pr::kF16};
    if (hw.peakFlops.count("tf32")) t.math.push_back(Pr::kTF32);  // Ampere and later
    if (hw.peakFlops.count("bf16")) t.math.push_back(Pr::kBF16);
  } else {
    return invalidArgument("profile '" + hw.name + "' has kind '" + hw.kind + "': no backend runs it");
  }
  t.hw = std::move(hw);
  return t;
}

StatusOr<Target> resolveTarget(const std::string& nameOrPath) {
  std::string name = nameOrPath;
  if (name == "cpu") name = "x86-64";
  if (name == "cuda") name = "h200";
  CAGR_ASSIGN_OR_RETURN(HardwareProfile hw, resolveProfile(name));
  return makeTarget(std::move(hw));
}

}  // namespace cagr
