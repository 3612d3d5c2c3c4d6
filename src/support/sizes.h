// Checked size arithmetic for tensors whose shape comes from a file (ONNX
// initializers, npz arrays, plan constants): a declared shape is validated
// before anything is allocated, so a 25 KB file cannot ask for 2^60 elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr {

/// Largest byte size any one tensor may declare (2^46 B = 64 TiB): beyond any
/// host or device this runs on, far below where size arithmetic overflows.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 46;

/// Bytes of a `dtype` tensor of `shape`. Fails (naming `what`) on a negative
/// dimension, on an element count or byte size that overflows, or above
/// kMaxTensorBytes.
StatusOr<size_t> checkedTensorBytes(DType dtype, std::span<const int64_t> shape, const std::string& what);

}  // namespace cagr
