// Shared helpers of the ONNX op handlers (onnx_ops.cc, shape_ops.cc).
#pragma once

#include "import/context.h"

namespace cagr::import {

/// The graph value of input `i` of `n` (error if absent).
StatusOr<ValueId> input(Context& ctx, const onnx::NodeProto& n, int i);
bool hasInput(const onnx::NodeProto& n, int i);
/// The graph values of all present (non-empty) inputs of `n`, in order.
StatusOr<std::vector<ValueId>> presentInputs(Context& ctx, const onnx::NodeProto& n);
/// Binds output 0 of `n` to `v`.
Status bindOutput(Context& ctx, const onnx::NodeProto& n, ValueId v);
/// Add / Sub / Mul / Div over shape arithmetic with symbolic entries.
Status symbolicArith(Context& ctx, const onnx::NodeProto& n, const SymInts& a, const SymInts& b);
/// Scatter-add graph propagation -> SpMM (scatter_spmm.cc).
Status importScatterND(Context& ctx, const onnx::NodeProto& n);
Status importScatterElements(Context& ctx, const onnx::NodeProto& n);
/// Handlers for comparisons, logic, TopK, Tile, Pad, Conv, If... (general_ops.cc), or nullptr.
Handler findGeneralHandler(const std::string& opType);
/// Handlers for data-movement and shape-arithmetic ops, or nullptr.
Handler findShapeHandler(const std::string& opType);

}  // namespace cagr::import
