// Padding of misaligned GEMM widths for matrix units (a lowering step of the
// CUDA backend, like XLA's cuBLAS GEMM padding; not a policy decision: it
// never changes a value the graph computes, only how wide internal tensors
// are stored). A tensor-core GEMM whose activation rows are not a multiple
// of 16 bytes (DCN-v2's 429 features) cannot use cuBLASLt's TMA / vector
// kernels at all: measured on the H200, 4096x429x429 takes 31 us in tf32
// and 30 us in bf16, 4096x432x432 12 and 6 us.
//
// The step finds a feature width F (the last axis of a rank-2 Concat output
// that is not a multiple of `align`) and widens, to W = F rounded up, every
// tensor that carries those features: the Concat (`pad` W - F zero columns), the elementwise ops over them, GEMMs whose output is another
// F-wide tensor of the same space (weight and bias get zero columns) and
// GEMMs that read them as operand A (weight gets zero rows). A Concat that
// takes a widened tensor grows by the padding at that operand's end, and
// its readers (GEMM operand A only) get zero weight rows there. Padded
// columns stay finite (zeros through the allowed elementwise ops), and
// every GEMM multiplies them by zero weights, so the graph's outputs are
// the same values. A width is padded only when the whole set is closed
// under these rules (anything else reading or producing one of the tensors,
// or a graph output among them, leaves it as it is) and one of its GEMMs
// runs reduced math (tf32 / bf16 / f16): f32 SIMT GEMMs measured no faster.
//
// The result is a valid plan: the root Concat gets `pad` (ops.def: zeros
// after its last operand), which every backend's concat and the reference
// executor write; the zero columns are never visible in an output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/status.h"

namespace cagr {

struct PaddedWidth {
  NodeId concat = -1;  // the Concat whose output starts the set
  int64_t from = 0, to = 0;
  int values = 0;      // tensors widened
  int gemms = 0;       // GEMMs whose weights got zero rows / columns
};

/// `plan` with every closed feature set of a misaligned width padded to a
/// multiple of `align` elements; `out` (optional) lists what was padded.
StatusOr<Graph> padGemmDims(const Graph& plan, int64_t align, std::vector<PaddedWidth>* out = nullptr);

}  // namespace cagr
