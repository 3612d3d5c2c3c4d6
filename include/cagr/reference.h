// The reference executor: runs a HIR graph node by node with plain, obviously
// correct kernels. It is the numerical oracle every rewrite and backend is
// checked against, so it favours clarity (and double accumulation) over speed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cagr/graph.h"
#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr {

/// Runs `g` on `inputs`, keyed by the names of g.inputs(), and returns the
/// values of g.outputs() in order. Every input must be given exactly once
/// with the declared dtype (i32 is accepted, and widened, where i64 is
/// declared); shapes bind the graph's symbols. Kernel failures (e.g. an
/// out-of-range embedding id) come back as "node 'name' (Op): ..." errors.
///
/// MIR precision decisions are honoured, so a plan's numerical error is
/// measurable: a node with mir.math = tf32/bf16/f16 multiplies inputs rounded
/// to that format (ties to even; bias operands stay f32) and accumulates as
/// usual; a value with mir.storage = bf16/f16 is rounded where it is stored
/// (a graph input or constant when read), and an int8_rowwise table is
/// quantised per row and dequantised. Constants are converted once per call.
/// A graph with every decision at f32 runs exactly as before.
StatusOr<std::vector<Tensor>> runReference(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& inputs);

/// Matches `inputs` to g.inputs() by name (each exactly once, declared
/// dtype; i32 is widened where i64 is declared), in graph-input order. Every
/// executor (reference and backends) checks its inputs with it.
StatusOr<std::vector<Tensor>> matchGraphInputs(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& inputs);

/// Synthetic inputs at `batch` (each symbolic dim coef * symbol becomes
/// coef * batch): floats in [0, 2), ids uniform below the smallest table any
/// lookup reads, "*offsets*" inputs as one id per bag. Seeded, so two calls
/// agree. Real batches come from data/gen.py or the user's .npz.
std::vector<std::pair<std::string, Tensor>> synthesizeInputs(const Graph& g, int64_t batch, uint64_t seed = 1);

/// Outcome of compareTensors.
struct TensorComparison {
  bool close = false;      // dtype/shape agree and every element is within tolerance
  double maxAbsError = 0;  // largest |got - want| over all elements
  std::string message;     // empty when close; otherwise what differs and where
};

/// Elementwise |got - want| <= atol + rtol * |want|, NaN matching NaN only.
/// Tensors of different shapes or dtypes are never close.
TensorComparison compareTensors(const Tensor& got, const Tensor& want, double atol = 1e-5, double rtol = 1e-4);

/// The error a precision budget bounds: the largest, over f32 outputs, of
/// max|got - want| / max|want| (NaN where the other has none: +inf). Fails
/// when the outputs differ in number, shape or dtype.
StatusOr<double> relativeOutputError(const std::vector<Tensor>& got, const std::vector<Tensor>& want);

}  // namespace cagr
