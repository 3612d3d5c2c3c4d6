// GEMM groups on the CUDA libraries, the part that needs no GPU: the anchor
// of a kGemm group (Gemm, MatMul incl. batched, Conv1x1 without bias, a
// plain Einsum contraction) as one column-major cuBLAS / cuBLASLt call, the
// members cuBLASLt's epilogue runs (a per-column bias, a full addend as
// beta*C, then ReLU or tanh-GELU), and the members left over, which the
// runtime hands to the code generator as elementwise kernels of their own.
#pragma once

#include <string>
#include <vector>

#include "backends/cpu/gemm_problem.h"
#include "cagr/graph.h"
#include "cagr/status.h"
#include "ir/graph_queries.h"

namespace cagr::cuda {

enum class GemmLibrary : uint8_t { kCublasLt, kCublas };
enum class Activation : uint8_t { kNone, kRelu, kGelu };  // kGelu: the tanh form cuBLASLt computes

/// A kGemm group as one library call plus what is left for generated kernels.
struct LibraryGemm {
  GemmLibrary library = GemmLibrary::kCublasLt;
  cpu::GemmAnchor anchor;  // the product Y = A * B (shared description with the CPU backend)
  Precision math = Precision::kF32;
  float alpha = 1.0f, beta = 0.0f;  // D = act(alpha * A B + beta * addend + bias)
  ValueId bias = kNoValue;          // [N] along the output's last axis
  ValueId addend = kNoValue;        // same shape as the output
  Activation act = Activation::kNone;
  std::vector<NodeId> fused;              // the anchor and the members the call runs
  ValueId out = kNoValue;                 // the value it writes
  std::vector<std::vector<NodeId>> rest;  // the other members: one elementwise kernel per connected piece
  int64_t padA = 0, padB = 0;             // row pitch (elements) of a padded constant operand; 0: dense
  bool flipB = false;                     // B, a constant read transposed, is on the device as its transpose
  // Device element type of A and B: f32, or bf16 / f16 when an activation
  // operand is stored so (cuda_storage.cc; then math is that precision and a
  // constant operand is uploaded in it), and of the output (f32, or the
  // operands' type: cuBLASLt writes 16-bit D only from 16-bit A and B, and
  // then takes its bias in D's type too: rounded, as autocast rounds it).
  Precision operands = Precision::kF32, output = Precision::kF32;
  std::string note;                       // why the library differs from the plan's kernel ("" if it does not)
};

/// Plans the kGemm group `members` (graph order, `anchor` first) on
/// `library`; `align` is the row pitch padded weights round up to.
/// kUnsupported with the reason when the library cannot run the anchor
/// itself (the group then goes to the code generator). An f32 Linear's
/// [N, K] weight goes up as [K, N] (cuBLASLt's SIMT kernels read it faster
/// untransposed) unless `keepWeightKMajor` (sm_90), K is a multiple of 4,
/// N at least kWgmmaCols and the call one the wgmma tile of gemm_wgmma.h can
/// run (wgmmaPlanRejection): the tile then reads it in place, with no copy
/// of it on the device (other weights it copies K-major where it runs).
/// A weight the tile will not run gains nothing from staying [N, K], so it
/// goes up flipped for cuBLASLt as before.
StatusOr<LibraryGemm> planLibraryGemm(const Graph& g, const ValueUses& uses, const std::vector<NodeId>& members,
                                      NodeId anchor, GemmLibrary library, int64_t align,
                                      bool keepWeightKMajor = false);

/// One column-major call: D[m x n] = op(A)[m x k] * op(B)[k x n] for each of
/// `batch` matrices. Row-major Y = A*B is computed as Y^T = B^T A^T, so the
/// call's A is the product's B and the call's B the product's A.
struct ColumnMajorGemm {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 1, ldb = 1, ldd = 1;
  int64_t batch = 1, strideA = 0, strideB = 0, strideD = 0;
  bool operator==(const ColumnMajorGemm&) const = default;
};

/// The call for a row-major product (after GemmShape::simplify); fails when
/// an operand is no BLAS layout or the batch does not merge into one stride.
StatusOr<ColumnMajorGemm> columnMajor(const cpu::GemmShape& s);

/// The product for concrete operand shapes, with padded operands' pitches.
StatusOr<cpu::GemmShape> gemmShape(const LibraryGemm& p, const std::vector<int64_t>& aShape,
                                   const std::vector<int64_t>& bShape);

/// "cublaslt.matmul+bias+relu", "cublas.sgemm".
std::string libraryGemmName(const LibraryGemm& p);
/// "[4096x512x256 tf32]": rows x cols x depth of the row-major product,
/// "8192*" in front when batched.
std::string gemmShapeText(const cpu::GemmShape& s, Precision math);

}  // namespace cagr::cuda
