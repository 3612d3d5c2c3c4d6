// Reference kernels, one per op of ops.def. The declarations are generated
// from the op table, and executor.cc builds its dispatch array the same way,
// so an op without a kernel fails to link (undefined ref<Op>), not at run time.
#pragma once

#include <span>

#include "cagr/graph.h"
#include "cagr/tensor.h"

namespace cagr::ref {

/// A reference kernel. `in[i]` is operand i (nullptr for an absent optional
/// operand, kNoValue); `out` arrives allocated (zero-filled) with the shapes
/// and dtypes that shape inference resolved for this execution. A kernel may
/// also replace an output tensor wholesale, provided shape and dtype agree.
using RefKernel = Status (*)(const Node& n, std::span<const Tensor* const> in, std::span<Tensor> out);

/// Signature of the kernel of op `Enum`; kernel files define them with it.
#define CAGR_REF_KERNEL(Enum) Status ref##Enum(const Node& n, std::span<const Tensor* const> in, std::span<Tensor> out)

/// Runs op `n.op`'s reference kernel (backends use it as their fallback).
Status runKernel(const Node& n, std::span<const Tensor* const> in, std::span<Tensor> out);

#define CAGR_OP(Enum, ...) CAGR_REF_KERNEL(Enum);
#include "cagr/ops.def"
#undef CAGR_OP

}  // namespace cagr::ref
