// Constants as the CUDA backend stores them on the device, built on the
// host (no GPU needed): the generated kernels' formats of codegen.h (f32
// as float; bf16 / f16 as 16-bit; int8-rowwise as rows of unsigned 8-bit
// codes padded to 4 bytes, then float scale and float bias; ids as 64-bit
// integers), and the library GEMMs' f32 operands with the plan's storage
// rounding applied and rows padded to the pitch a padded layout asks for.
#pragma once

#include <cstddef>
#include <vector>

#include "backends/cuda/cuda_program.h"

namespace cagr::cuda {

/// Bytes of constant `f.value` in format `f`.
size_t weightBytes(const Graph& g, const WeightFormat& f);
/// Writes constant `f.value` in format `f` to `dst` (weightBytes(g, f) bytes).
Status writeWeight(const Graph& g, const WeightFormat& f, std::byte* dst);

/// Offsets of `formats` in one pool (each aligned to kDeviceAlign); returns the pool's size.
size_t weightOffsets(const Graph& g, const std::vector<WeightFormat>& formats, std::vector<size_t>& offset);

}  // namespace cagr::cuda
