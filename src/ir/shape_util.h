// Shape helpers shared by shape rules, cost rules and reference kernels.
#pragma once

#include <string>
#include <vector>

#include "cagr/graph.h"

namespace cagr {

/// Element count of a concrete shape, as a double (FLOP/byte counting).
double numelOf(const std::vector<int64_t>& shape);

/// Slice attributes with ONNX defaults filled in (axes 0..n-1, steps 1),
/// checked for equal lengths.
struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};
StatusOr<SliceParams> sliceParams(const Node& n);

std::string dimsString(const Graph& g, const std::vector<Dim>& dims);
/// NumPy broadcasting of two (possibly symbolic) shapes.
StatusOr<std::vector<Dim>> broadcastDims(const Graph& g, const std::vector<Dim>& a, const std::vector<Dim>& b);
/// ONNX Reshape target (0 copies, -1 infers) applied to `in`.
StatusOr<std::vector<Dim>> reshapeDims(const Graph& g, const std::vector<Dim>& in, const std::vector<int64_t>& target);

/// A parsed einsum equation: one index string per operand and the output's.
struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
};
StatusOr<EinsumSpec> parseEinsum(const std::string& equation, size_t numInputs);

/// One axis of an ONNX slice after clamping: elements start, start+step, ...
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};
/// ONNX Slice clamping rules for a static dim of size `dim`.
SliceRange normalizeSlice(int64_t start, int64_t end, int64_t step, int64_t dim);
/// True if (start, end, step) selects the whole axis whatever its size.
bool isFullSlice(int64_t start, int64_t end, int64_t step);

/// Conv attributes with defaults filled in (strides/dilations 1, pads 0).
struct ConvParams {
  std::vector<int64_t> strides, pads, dilations;
  int64_t group = 1;
};
StatusOr<ConvParams> convParams(const Node& n);

/// Reduction axes normalised and sorted; empty `axes` means all.
StatusOr<std::vector<int64_t>> reduceAxes(const std::vector<int64_t>& axes, int64_t rank);

}  // namespace cagr
