// Internal to the CUDA code generator: the builder every generator writes its
// kernel through (parameters in the runtime's order, run-time extents for
// symbolic dimensions, the launch rule the runtime evaluates), the scalar
// expression emitters shared by all patterns, and the generator entry points
// the dispatcher (codegen_dispatch.cc) picks from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/codegen.h"

namespace cagr::cuda::gen {

/// kUnsupported naming node `n`: "nvrtc codegen: node 'x' (Op): why".
Status unsupportedAt(const Graph& g, NodeId n, const std::string& why);

/// Device C type of `v`'s elements as stored: the dtype's type, or
/// __nv_bfloat16 / __half / unsigned char (int8 rows) for reduced storage.
std::string storageType(const Graph& g, ValueId v);
/// The C type elementwise code computes a dtype in (float for f32/f16/bf16).
std::string computeType(DType t);
/// A C literal of `v` in compute type `t` ("0.5f", "3LL", "CAGR_INF").
std::string literal(double v, DType t);
/// The CIN kernels' math switch: 0 f32 (FFMA), 1 tf32, 2 bf16, 3 f16.
int mathCode(Precision p);

/// How many blocks a launch needs: ceil(prod(work) / perBlock) clamped to
/// [1, maxBlocks] (grid-stride loops cover the rest), `threads` per block.
struct LaunchRule {
  std::vector<Dim> work;  // product = work items; empty = 1
  // roundTo[i] > 1: work[i] rounded up to a multiple of it first (a GEMM's
  // rows to whole row tiles, so a batch of 4 rows still gets a block per
  // column tile).
  std::vector<int64_t> roundTo;
  int64_t perBlock = 256;
  unsigned threads = 256;
  unsigned gridY = 1;
  unsigned sharedBytes = 0;
  int64_t maxBlocks = int64_t{1} << 20;
  unsigned minBlocksPerSm = 0;  // > 0: __launch_bounds__'s second argument (caps registers)
  // splitY > 1: launches of fewer than splitBelow blocks along x get gridY =
  // splitY, the blocks of one x forming a cluster (sm_90; the kernel reads
  // gridDim.y).
  unsigned splitY = 1;
  int64_t splitBelow = 0;
};

/// Builds one kernel: registers parameters, turns dims into C expressions
/// over run-time extents, and assembles the entry point.
class KernelBuilder {
 public:
  /// `kind` names the entry ("eltwise" -> "cagr_eltwise_n12").
  KernelBuilder(const CodegenRequest& r, const std::string& kind, const std::string& moduleSource);

  const Graph& g() const { return r_.g; }
  const CodegenRequest& req() const { return r_; }
  const std::string& entry() const { return entry_; }

  /// Registers `v` as a buffer the kernel reads / writes; returns its C name.
  std::string in(ValueId v);
  /// Registers constant `v` (2-D [R, C], f32) as read in its transpose
  /// [C, R] (GeneratedKernel::transposed); returns its C name.
  std::string inTransposed(ValueId v);
  /// As inTransposed, each value rounded to TF32 on upload (WeightFormat::tf32).
  std::string inTransposedTf32(ValueId v);
  /// Registers CIN weight `v` ([O, H*M], f32) as read K-major per h
  /// (GeneratedKernel::grouped: M = `group`, rows at `pitch`, hi / lo planes
  /// when `split`, else rounded to TF32 — or as bf16, `element` — rows of
  /// 128 bytes swizzled when `swizzle128`); returns its C name.
  std::string inGrouped(ValueId v, int64_t group, int64_t pitch, bool split, bool swizzle128,
                        Precision element = Precision::kF32);
  std::string out(ValueId v);
  bool isMemberValue(ValueId v) const;  // produced by a member
  bool isOutput(ValueId v) const;       // one of the request's outputs

  /// C expression of a dimension ("22LL", "(S1*26LL)") / a product of dims.
  std::string dim(Dim d);
  std::string size(const std::vector<Dim>& dims, size_t begin = 0, size_t end = SIZE_MAX);
  std::string dims(ValueId v, size_t begin = 0, size_t end = SIZE_MAX) { return size(g().type(v).dims, begin, end); }
  /// A static dim passed at run time anyway ("X0"): kernels that differ only
  /// in such a size (e.g. a table's row count) share one compiled function.
  std::string extent(ValueId v, int dim);
  /// A fresh local variable name with `prefix`.
  std::string fresh(const std::string& prefix);

  std::string body;  // the kernel body, after the symbol preamble

  /// Appends `prefix` (helpers the kernel needs, emitted once per module
  /// under `guard` when non-empty) and the kernel to `moduleSource`. Inside
  /// the kernel, buffers are named by parameter position (arg0, ...), so a
  /// kernel whose code is the same as one already in the module reuses that
  /// one's entry instead of adding a copy.
  StatusOr<GeneratedKernel> finish(std::string& moduleSource, const LaunchRule& rule, std::string name,
                                   const std::string& prefix = "", const std::string& guard = "");
  /// The body calls CAGR_GRID_WAIT() itself, before its first read of a
  /// buffer another kernel writes and before its first write
  /// (GeneratedKernel::waitsLate); else the kernel starts with CAGR_GRID_DEPS().
  bool waitsLate = false;

 private:
  struct SymbolSource {
    int symbol;
    int extent;
    int64_t coef;
  };
  StatusOr<std::vector<SymbolSource>> resolveSymbols(const LaunchRule& rule, std::vector<ExtentRef>& extents) const;

  const CodegenRequest& r_;
  std::string entry_;
  std::string canonical(const std::string& code) const;

  std::vector<ValueId> reads_, writes_, transposed_, tf32_;
  std::vector<GeneratedKernel::Grouped> grouped_;
  std::vector<std::pair<ValueId, int>> explicitExtents_;
  std::vector<char> memberValue_;
  std::vector<int> symbolsUsed_;
  int counter_ = 0;
};

/// Wraps `inner` in the standard grid-stride loop over `count` items:
/// `for (long long <var> = ...; <var> < count; ...) { inner }`, starting at
/// `first` (an expression; "" for 0).
std::string gridStride(const std::string& var, const std::string& count, const std::string& inner,
                       const std::string& threadsPerItem = "1", const std::string& first = "");

// ---- scalar expressions (codegen_expr.cc) ----

/// C expression of elementwise or view node `n` over operand expressions
/// in their compute types.
StatusOr<std::string> opExpr(const Graph& g, NodeId n, const std::vector<std::string>& args);
/// Linear index into a tensor of shape `in` that NumPy-broadcasts into
/// `out`, given the linear index expression `idx` into `out`.
std::string broadcastIndex(KernelBuilder& k, const std::vector<Dim>& out, const std::string& idx,
                           const std::vector<Dim>& in);
/// True when `idx` is the first element of `out` that maps to its element
/// of `in` (every broadcast coordinate is 0): who writes a smaller output.
std::string broadcastGuard(KernelBuilder& k, const std::vector<Dim>& out, const std::string& idx,
                           const std::vector<Dim>& in);
/// Operand `i` of node `n` broadcast into n's output at `idx` (BatchNorm's
/// per-channel parameters included).
std::string operandIndex(KernelBuilder& k, NodeId n, size_t i, const std::string& idx);
/// True when `a` and `b` have the same element count for every binding.
bool sameSize(const std::vector<Dim>& a, const std::vector<Dim>& b);
/// True when `in` NumPy-broadcasts into `out` (unidirectionally).
bool broadcastsInto(const std::vector<Dim>& in, const std::vector<Dim>& out);

/// Emits the values of a group's elementwise members on demand: a value at
/// a linear index is computed once (memoised) from its operands, recursively;
/// values produced outside the group are loaded from their buffers.
class ValueEmitter {
 public:
  ValueEmitter(KernelBuilder& k, std::string& code, std::string indent)
      : k_(k), code_(code), indent_(std::move(indent)) {}
  /// A variable holding `v` at linear index `idx` (in v's shape).
  StatusOr<std::string> at(ValueId v, const std::string& idx);
  /// Makes `var` the value of `v` at `idx` (the anchor's element of a tail).
  void bind(ValueId v, const std::string& idx, const std::string& var) { memo_[{v, idx}] = var; }
  /// Emits a store of `var` into output `v` at `idx`.
  void store(ValueId v, const std::string& idx, const std::string& var);
  /// The values from outside the group that at() has loaded at exactly `idx`.
  std::vector<ValueId> loadedAt(const std::string& idx) const;

 private:
  KernelBuilder& k_;
  std::string& code_;
  std::string indent_;
  std::map<std::pair<ValueId, std::string>, std::string> memo_;
};

/// The members after an anchor, applied to one anchor element at a time.
/// Elementwise ops and views form any graph over the anchor's output and
/// outside values (computed on demand by a ValueEmitter at the element's
/// index); with a Concat they must form a chain (each member reads the
/// previous one; its other operands come from outside the group).
class TailChain {
 public:
  /// kUnsupported naming the node when the members cannot follow `anchor`.
  static StatusOr<TailChain> plan(const KernelBuilder& k, NodeId anchor);
  bool empty() const { return steps_.empty(); }
  /// Applies the tail to the anchor output's element `var` at linear index
  /// `idx` and stores every group output it reaches there (the anchor's own
  /// output too unless `anchorStored`).
  Status emit(KernelBuilder& k, const std::string& var, const std::string& idx, std::string& code,
              const std::string& indent, bool anchorStored = false) const;
  /// Grid-stride copies of the concat operands that are not on the chain.
  Status emitSideCopies(KernelBuilder& k, std::string& code) const;
  /// "+relu+concat" for kernel names.
  std::string suffix(const Graph& g) const;

 private:
  struct Step {
    NodeId node;
    int chainOperand;  // Concat: which operand is the chain
  };
  Status emitGraph(KernelBuilder& k, const std::string& var, const std::string& idx, std::string& code,
                   const std::string& indent) const;

  ValueId anchorOut_ = kNoValue;
  std::vector<Step> steps_;
  bool chain_ = false;  // a Concat is among the members: emitted as a chain
};

/// Copies operand `operand` of Concat node `n` into the concat's output
/// buffer `dst` (grid-stride loop); shared by concat kernels and tails.
Status emitConcatCopy(KernelBuilder& k, NodeId n, size_t operand, const std::string& dst, std::string& code);
/// Linear index into `whole` of element `idx` of `part`, one of the blocks
/// `whole` joins along `axis` (Concat / Split), starting at linear offset
/// `off` (" + a + b", each a block's size from `axis` on) within a row.
std::string blockIndex(KernelBuilder& k, const std::vector<Dim>& part, const std::vector<Dim>& whole, size_t axis,
                       const std::string& off, const std::string& idx);
/// Linear index into Concat `n`'s output of operand `operand`'s element at `idx`.
std::string concatIndex(KernelBuilder& k, NodeId n, size_t operand, const std::string& idx);

/// Data index of Gather node `n`'s output element `idx` (ids wrapped like
/// ONNX); statements go to `code`, the returned variable holds the index.
StatusOr<std::string> gatherSource(KernelBuilder& k, NodeId n, const std::string& idx, std::string& code,
                                   const std::string& indent);

/// An environment variable's value ("" when unset): the generators' switches.
std::string envValue(const char* name);

// ---- generators, one per pattern family ----
StatusOr<GeneratedKernel> generateEltwise(const CodegenRequest& r, std::string& src);
StatusOr<GeneratedKernel> generateReduce(const CodegenRequest& r, std::string& src);
StatusOr<GeneratedKernel> generateMovement(const CodegenRequest& r, std::string& src);
StatusOr<GeneratedKernel> generateLookup(const CodegenRequest& r, std::string& src);
StatusOr<GeneratedKernel> generateRec(const CodegenRequest& r, std::string& src);
StatusOr<GeneratedKernel> generateCin(const CodegenRequest& r, std::string& src);
/// The 3xTF32 tensor-core f32 CIN kernel's source (codegen_cin_x3.cc); it
/// needs tf32x3Helpers() before it.
const char* cinX3Source();
/// The wgmma CIN kernel's source (codegen_cin_wg.cc, sm_90a; needs
/// kCinCommon's cagr_tf32, tf32x3Helpers() and cinWgOperands() before it)
/// and its m64nOk8 TF32 (or, `bf16`, m64nOk16 bf16) wgmma for one O, each
/// guarded so a module may hold them twice.
const char* cinWgSource();
std::string cinWgOperands();  // gemm_wgmma.h wgmmaOperandSource(), which it needs before it
std::string cinWgMma(int O, bool bf16);
/// cagr_split_tf32 / cagr_mma_tf32, guarded so a module may hold them twice,
/// and the 3xTF32 GEMM tile (codegen_gemm_x3.cc).
const char* tf32x3Helpers();
const char* gemmX3Source();
/// nvrtc.gemm_small's narrow-layer kernel (cagr_gemm_narrow: N <= 64, K <= 256, f32).
const char* gemmNarrowSource();
StatusOr<GeneratedKernel> generateGemm(const CodegenRequest& r, std::string& src);
StatusOr<GeneratedKernel> generateSpmm(const CodegenRequest& r, std::string& src);

// ---- lookups shared by the lookup and the interaction / FM kernels ----

/// How one lookup node reads table rows: pooling of a bag (EmbeddingBag,
/// EmbeddingBags) or one id per row (Gather on axis 0 of a float table).
struct LookupInfo {
  NodeId node = -1;
  std::vector<ValueId> tables;  // one per table
  ValueId ids = kNoValue, offsets = kNoValue, weights = kNoValue;
  std::vector<int64_t> dims;    // columns per table
  std::vector<int64_t> colOff;  // first output column per table
  std::vector<int64_t> slots;   // id slot per table (EmbeddingBags)
  int64_t width = 0;            // output columns per row
  int64_t pooling = 1;          // ids per bag without offsets
  int64_t numSlots = 1;         // EmbeddingBags: slots of the id tensor
  int mode = 0;                 // 0 sum, 1 mean, 2 max
  bool includeLast = false;
  bool gather = false;    // Gather: one id per row, negative ids wrap
  int vec = 4;            // elements per row load that every table's width allows (fused rec kernels)
  std::vector<Dim> rows;  // rows of the output ([B] or the Gather's id shape)
};
/// The table-row view of lookup node `n`, or kUnsupported (e.g. a Gather
/// that selects columns of integer data: the movement kernel's job).
StatusOr<LookupInfo> lookupInfo(const Graph& g, NodeId n);
/// Device variables that select one table of a lookup at run time, so
/// tables of one storage type and width share one pooling loop:
/// declarations ("const float* tab; long long tab_rows, tab_slot, tab_col;")
/// and the assignments for table `t` (one case of the caller's switch).
std::string tableVars(const Graph& g, const LookupInfo& li, int t);
std::string tableCase(KernelBuilder& k, const LookupInfo& li, int t);
/// True when tables `a` and `b` of `li` can share a pooling loop.
bool sameTableKind(const Graph& g, const LookupInfo& li, int a, int b);
/// Emits the pooling of the selected table (tableVars) for output row `row`
/// (a C expression): columns [c, c + vec) of the row into float array
/// `acc[vec]` (declared by the caller; vec divides li.vec). `t` is any
/// table of the selected kind.
std::string emitPool(KernelBuilder& k, const LookupInfo& li, int t, int vec, const std::string& row,
                     const std::string& c, const std::string& acc);

}  // namespace cagr::cuda::gen
