// GEMM groups on cuBLAS / cuBLASLt, the GPU-free part (see cuda_gemm.h).
#include "backends/cuda/cuda_gemm.h"

#include <algorithm>

#include "backends/cuda/gemm_wgmma.h"
#include "cagr/mir.h"

namespace cagr::cuda {
namespace {

bool isView(const Graph& g, const Node& n) {
  bool view = n.op == OpKind::kReshape || n.op == OpKind::kFlatten || n.op == OpKind::kSqueeze ||
              n.op == OpKind::kUnsqueeze || n.op == OpKind::kIdentity;
  return view && g.type(n.inputs[0]).dtype == g.type(n.outputs[0]).dtype;
}

bool contains(const std::vector<NodeId>& v, NodeId x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The dims of `t` without leading 1s (the last one stays).
std::vector<Dim> stripOnes(const std::vector<Dim>& t) {
  auto first = t.begin();
  while (t.end() - first > 1 && *first == 1) ++first;
  return {first, t.end()};
}

// The static size of the product's N when it is the output's last axis
// (Gemm, MatMul, Conv1x1, an Einsum with one N letter last), else -1.
Dim lastAxisN(const Graph& g, const cpu::GemmAnchor& a) {
  const std::vector<Dim>& out = g.type(g.node(a.node).outputs[0]).dims;
  if (out.empty() || isSymbolic(out.back())) return -1;
  if (a.op == OpKind::kEinsum && a.nLetters.size() != 1) return -1;
  if (a.op == OpKind::kMatMul && g.type(a.b).rank() == 1) return -1;  // 1-D B: no N axis
  return out.back();
}

// A [N] vector added along the last axis of `chain` (whose last axis is N).
bool isBias(const Graph& g, ValueId other, ValueId chain, Dim n) {
  const std::vector<Dim>& cd = g.type(chain).dims;
  return n > 0 && !cd.empty() && cd.back() == n && stripOnes(g.type(other).dims) == std::vector<Dim>{n} &&
         g.type(other).dims.size() <= cd.size() && g.type(other).dtype == DType::kF32;
}

bool isAddend(const Graph& g, ValueId other, ValueId chain) {
  return g.type(other).dims == g.type(chain).dims && g.type(other).dtype == DType::kF32;
}

// The Gemm's own C as bias or addend; Conv1x1's channel bias is neither.
Status takeAnchorAddend(const Graph& g, LibraryGemm& p, Dim n) {
  const cpu::GemmAnchor& a = p.anchor;
  if (a.c == kNoValue || (a.op == OpKind::kGemm && a.beta == 0.0)) return Status::ok();
  std::string where = nodeWhere(g, a.node);
  if (a.cOnChannels) return unsupported(where + ": a channel bias is no cuBLASLt epilogue");
  ValueId out = g.node(a.node).outputs[0];
  if (a.beta == 1.0 && isBias(g, a.c, out, n)) {
    p.bias = a.c;
  } else if (isAddend(g, a.c, out)) {
    p.addend = a.c;
    p.beta = static_cast<float>(a.beta);
  } else {
    return unsupported(where + ": C of shape " + g.typeString(g.type(a.c)) + " is neither a bias nor a full addend");
  }
  return Status::ok();
}

// Follows the single-consumer chain from the anchor through what the
// library's epilogue runs; stops at the first member it cannot take.
void fuseEpilogue(const Graph& g, const ValueUses& uses, const std::vector<NodeId>& members, Dim n, LibraryGemm& p) {
  ValueId chain = p.out;
  while (uses.count(chain) == 1 && !uses.isOutput[static_cast<size_t>(chain)]) {
    NodeId next = uses.consumers[static_cast<size_t>(chain)][0];
    if (!contains(members, next)) break;
    const Node& m = g.node(next);
    Precision stored = g.value(m.outputs[0]).mir.storage;
    if (stored != Precision::kF32 && (stored != p.operands || p.addend != kNoValue)) break;
    bool lt = p.library == GemmLibrary::kCublasLt && p.act == Activation::kNone;
    if (isView(g, m)) {
      // bytes unchanged
    } else if (lt && m.op == OpKind::kAdd && m.inputs[0] != m.inputs[1]) {
      ValueId other = m.inputs[0] == chain ? m.inputs[1] : m.inputs[0];
      NodeId producer = g.value(other).producer;
      if (producer >= 0 && contains(members, producer)) break;  // computed after the GEMM
      if (p.addend == kNoValue && isAddend(g, other, chain)) {
        p.addend = other;
        p.beta = 1.0f;
      } else if (p.bias == kNoValue && isBias(g, other, chain, n)) {
        p.bias = other;
      } else {
        break;
      }
    } else if (lt && m.op == OpKind::kRelu) {
      p.act = Activation::kRelu;
    } else if (lt && m.op == OpKind::kGelu && m.attrs.getString("approximate", "none") == "tanh") {
      p.act = Activation::kGelu;
    } else {
      break;
    }
    p.fused.push_back(next);
    chain = m.outputs[0];
    p.out = chain;
  }
}

// The members not fused, split into connected pieces (graph order each).
std::vector<std::vector<NodeId>> restPieces(const Graph& g, const std::vector<NodeId>& members,
                                            const std::vector<NodeId>& fused) {
  std::vector<NodeId> rest;
  for (NodeId m : members) {
    if (!contains(fused, m)) rest.push_back(m);
  }
  std::vector<int> piece(rest.size(), -1);
  auto linked = [&](NodeId x, NodeId y) {
    for (ValueId v : g.node(y).inputs) {
      if (v != kNoValue && g.value(v).producer == x) return true;
    }
    return false;
  };
  int pieces = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (piece[i] >= 0) continue;
    std::vector<size_t> stack{i};
    piece[i] = pieces;
    while (!stack.empty()) {
      size_t x = stack.back();
      stack.pop_back();
      for (size_t j = 0; j < rest.size(); ++j) {
        if (piece[j] < 0 && (linked(rest[x], rest[j]) || linked(rest[j], rest[x]))) {
          piece[j] = pieces;
          stack.push_back(j);
        }
      }
    }
    ++pieces;
  }
  std::vector<std::vector<NodeId>> out(static_cast<size_t>(pieces));
  for (size_t i = 0; i < rest.size(); ++i) out[static_cast<size_t>(piece[i])].push_back(rest[i]);
  return out;
}

// The device element type of the product's A and B (LibraryGemm::operands):
// an activation operand stored bf16 / f16 makes both that type, which needs
// math in the same precision (the library then rounds nothing the plan did
// not) and the other operand a constant (uploaded so) or stored the same.
Status operandStorage(const Graph& g, LibraryGemm& p) {
  const ValueId ops[] = {p.anchor.a, p.anchor.b};
  for (ValueId v : ops) {
    if (g.isConstant(v) || g.value(v).mir.storage == Precision::kF32) continue;
    p.operands = g.value(v).mir.storage;
  }
  if (p.operands == Precision::kF32) return Status::ok();
  const std::string where = nodeWhere(g, p.anchor.node), name = precisionName(p.operands);
  if (p.math != p.operands) {
    return unsupported(where + ": an operand stored " + name + " with " + precisionName(p.math) + " math");
  }
  if (p.library != GemmLibrary::kCublasLt) return unsupported(where + ": " + name + " operands take cuBLASLt");
  for (ValueId v : ops) {
    if (!g.isConstant(v) && g.value(v).mir.storage != p.operands) {
      return unsupported(where + ": operands stored " + name + " and " + precisionName(g.value(v).mir.storage));
    }
  }
  return Status::ok();
}

// Row pitch of a padded 2-D constant operand (0: stored dense).
int64_t padPitch(const Graph& g, ValueId v, int64_t align) {
  if (!g.isConstant(v) || g.type(v).rank() != 2 || g.value(v).mir.layout != Layout::kPadded || align <= 1) return 0;
  int64_t cols = g.type(v).dims[1];
  int64_t pitch = (cols + align - 1) / align * align;
  return cols > 1 && pitch != cols ? pitch : 0;
}

// padPitch of the transpose of 2-D constant `v` (rows of dims[0] elements).
int64_t flippedPitch(const Graph& g, ValueId v, int64_t align) {
  if (g.value(v).mir.layout != Layout::kPadded || align <= 1) return 0;
  int64_t cols = g.type(v).dims[0];
  int64_t pitch = (cols + align - 1) / align * align;
  return cols > 1 && pitch != cols ? pitch : 0;
}

// Replaces the row stride `cols` of a row-major operand by `pitch`.
void applyPitch(int64_t& rs, int64_t& cs, int64_t cols, int64_t pitch) {
  if (pitch == 0) return;
  if (cs == 1 && rs == cols)
    rs = pitch;
  else if (rs == 1 && cs == cols)
    cs = pitch;
}

struct BlasOperand {
  bool trans = false;
  int64_t ld = 1;
};

// X[rows][cols] (element (r, c) at r*rs + c*cs) read as the column-major
// matrix X^T: stored as X^T (no transpose) or as X (transposed).
StatusOr<BlasOperand> transposedView(int64_t rs, int64_t cs, int64_t rows, int64_t cols) {
  const int64_t r1 = std::max<int64_t>(rows, 1), c1 = std::max<int64_t>(cols, 1);
  if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= c1)) return BlasOperand{false, rows <= 1 ? c1 : rs};
  if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= r1)) return BlasOperand{true, cols <= 1 ? r1 : cs};
  return unsupported("strides (" + std::to_string(rs) + ", " + std::to_string(cs) + ") of a " + std::to_string(rows) +
                     "x" + std::to_string(cols) + " operand are no BLAS layout");
}

}  // namespace

StatusOr<LibraryGemm> planLibraryGemm(const Graph& g, const ValueUses& uses, const std::vector<NodeId>& members,
                                      NodeId anchor, GemmLibrary library, int64_t align, bool keepWeightKMajor) {
  LibraryGemm p;
  p.library = library;
  CAGR_ASSIGN_OR_RETURN(p.anchor, cpu::analyzeAnchor(g, anchor, /*anyMath=*/true));
  const Node& a = g.node(anchor);
  p.math = a.mir.math;
  if (p.math == Precision::kInt8Rowwise) return unsupported(nodeWhere(g, anchor) + ": int8 is no GEMM math mode");
  CAGR_RETURN_IF_ERROR(operandStorage(g, p));
  if (Precision s = g.value(a.outputs[0]).mir.storage; s != Precision::kF32 && s != p.operands) {
    return unsupported(nodeWhere(g, anchor) + ": its output is stored " + precisionName(s) + " and its operands " +
                       precisionName(p.operands));
  }
  p.alpha = static_cast<float>(p.anchor.op == OpKind::kGemm ? p.anchor.alpha : 1.0);
  Dim n = lastAxisN(g, p.anchor);
  if (library == GemmLibrary::kCublas && p.anchor.c != kNoValue &&
      !(p.anchor.op == OpKind::kGemm && p.anchor.beta == 0)) {
    return unsupported(nodeWhere(g, anchor) + ": cuBLAS has no epilogue for its C");
  }
  CAGR_RETURN_IF_ERROR(takeAnchorAddend(g, p, n));
  p.fused = {anchor};
  p.out = a.outputs[0];
  fuseEpilogue(g, uses, members, n, p);
  p.output = g.value(p.out).mir.storage;
  if (p.output != Precision::kF32 && (p.addend != kNoValue || p.library != GemmLibrary::kCublasLt)) {
    return unsupported(nodeWhere(g, anchor) + ": a " + precisionName(p.output) +
                       " output takes cuBLASLt without an addend");
  }
  p.rest = restPieces(g, members, p.fused);
  p.padA = padPitch(g, p.anchor.a, align);
  p.padB = padPitch(g, p.anchor.b, align);
  // fp32 (SIMT) calls run faster on a weight they read untransposed: on the
  // H200, cuBLASLt's first heuristic pick for 4096x400x400 took 38.5 us with
  // the weight as the call's column-major A and 40.5 us transposed, 35.1 vs
  // 37.7 at 4096x400x352, 28.4 vs 30.4 at 4096x256x512 (bench/cuda/FINDINGS.md).
  // A Linear's [N, K] weight is read transposed, so it goes up as [K, N];
  // not where the wgmma tile may read it in place (16-byte rows, a call the
  // tile can run, at least one tile of columns: cuda_gemm.h).
  const std::vector<Dim>& bd = g.type(p.anchor.b).dims;
  const bool inPlace = keepWeightKMajor && bd.size() == 2 && !isSymbolic(bd[0]) && !isSymbolic(bd[1]) &&
                       bd[1] % 4 == 0 && bd[0] >= kWgmmaCols && wgmmaPlanRejection(p).empty();
  if (!inPlace && p.math == Precision::kF32 && p.anchor.op == OpKind::kGemm && p.anchor.transB &&
      g.isConstant(p.anchor.b) && bd.size() == 2) {
    p.flipB = true;
    p.padB = flippedPitch(g, p.anchor.b, align);
  }
  return p;
}

StatusOr<cpu::GemmShape> gemmShape(const LibraryGemm& p, const std::vector<int64_t>& aShape,
                                   const std::vector<int64_t>& bShape) {
  CAGR_ASSIGN_OR_RETURN(cpu::GemmShape s, p.anchor.shape(aShape, bShape));
  if (p.padA != 0) applyPitch(s.ars, s.acs, aShape.back(), p.padA);
  if (p.flipB) {  // B read transposed (element (k, n) at n * K + k), stored as its transpose
    if (s.brs != 1 || bShape.size() != 2) return invalidArgument("a flipped B that is not read transposed");
    s.bcs = 1;
    s.brs = p.padB != 0 ? p.padB : bShape[0];
  } else if (p.padB != 0) {
    applyPitch(s.brs, s.bcs, bShape.back(), p.padB);
  }
  return s;
}

StatusOr<ColumnMajorGemm> columnMajor(const cpu::GemmShape& s) {
  if (s.batch.size() > 1) return unsupported("batch dimensions that do not merge into one stride");
  CAGR_ASSIGN_OR_RETURN(BlasOperand b, transposedView(s.brs, s.bcs, s.k, s.n));
  CAGR_ASSIGN_OR_RETURN(BlasOperand a, transposedView(s.ars, s.acs, s.m, s.k));
  ColumnMajorGemm c;
  c.m = s.n;
  c.n = s.m;
  c.k = s.k;
  c.transA = b.trans;
  c.lda = b.ld;
  c.transB = a.trans;
  c.ldb = a.ld;
  c.ldd = std::max<int64_t>(s.n, 1);
  if (!s.batch.empty()) {
    c.batch = s.batch[0].size;
    c.strideA = s.batch[0].strideB;
    c.strideB = s.batch[0].strideA;
    c.strideD = s.m * s.n;
  }
  return c;
}

std::string libraryGemmName(const LibraryGemm& p) {
  if (p.library == GemmLibrary::kCublas) return "cublas.sgemm";
  std::string s = "cublaslt.matmul";
  if (p.addend != kNoValue) s += "+add";
  if (p.bias != kNoValue) s += "+bias";
  if (p.act == Activation::kRelu) s += "+relu";
  if (p.act == Activation::kGelu) s += "+gelu_tanh";
  if (p.operands != Precision::kF32) {
    s += std::string(" (") + precisionName(p.operands) + " operands, " + precisionName(p.output) + " out)";
  }
  return s;
}

std::string gemmShapeText(const cpu::GemmShape& s, Precision math) {
  std::string batch = s.batchCount() > 1 ? std::to_string(s.batchCount()) + "*" : "";
  return "[" + batch + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " +
         precisionName(math) + "]";
}

}  // namespace cagr::cuda
