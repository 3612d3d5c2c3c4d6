// IR text of the backend probes' generated plans (backend_probes.cc for the
// CPU backend, cuda_probes.cc for the CUDA backend): one graph over inputs
// of shape [N, tail...] (activations or i64 ids) and fixed-shape tables,
// built from op lines, and random inputs for it at a batch N.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cagr/tensor.h"

namespace cagr::hw::probe {

/// "tensor<?xAxBxf32>" for [N, tail...].
std::string tensorType(const std::vector<int64_t>& tail, const char* dtype = "f32");

/// A probe input: [N, dims...] f32 activations, or a fixed-shape f32 table
/// (`table`), or [N, dims...] i64 ids below `idBound`.
struct Input {
  std::vector<int64_t> dims;
  bool table = false;
  int64_t idBound = 0;  // > 0: i64 ids in [0, idBound)
  std::string type() const;
  std::string dimsText() const;
};

/// A graph over `inputs` (%arg0, %arg1, ...) with `body` lines producing
/// %out of type `outType`.
std::string graphText(const std::vector<Input>& inputs, const std::string& body, const std::string& outType);

/// One op line: %res = "cagr.op"(args) {attrs} : (in types) -> out type.
std::string opLine(const std::string& res, const std::string& op, const std::string& args, const std::string& attrs,
                   const std::string& inTypes, const std::string& outType);

/// A splat f32 constant line: %res = "cagr.constant"() {value = dense<v>} : () -> tensor<dims x f32>.
std::string constantLine(const std::string& res, const std::vector<int64_t>& dims, double value);
/// "tensor<AxBxf32>" (no batch dim).
std::string fixedType(const std::vector<int64_t>& dims);

/// A constant tensor line of any dtype (dense data, hex past 16 elements).
std::string tensorConstantLine(const std::string& res, const Tensor& t);

/// A CSR SpMM plan without inputs (NGCF's graph propagation): a constant
/// [rows, rows] matrix times a constant [rows, k] dense operand, every row
/// `perRow` entries, or (`skewed`) one row in 100 with 32 * perRow entries
/// and the others fewer, so the mean stays ~perRow (NGCF's longest row is
/// ~31x its mean); columns uniform. No batch dimension: the plan is the same
/// at every N. Shared by the CPU and CUDA backend probes.
struct CsrPlan {
  std::string body, outType, label;
};
CsrPlan spmmCsrPlan(int64_t rows, int64_t perRow, int64_t k, bool skewed);

/// Inputs named in0, in1, ... at batch `n`: floats in [0.1, 1), ids uniform below idBound.
std::vector<std::pair<std::string, Tensor>> randomInputs(const std::vector<Input>& inputs, int64_t n);

}  // namespace cagr::hw::probe
