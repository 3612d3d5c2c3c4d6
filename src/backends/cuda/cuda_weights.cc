// Device formats of constants, built on the host (see cuda_weights.h).
#include "backends/cuda/cuda_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/reference/precision.h"

namespace cagr::cuda {
namespace {

size_t alignUp(size_t n) {
  return (n + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
}

// Rows x cols of a constant seen as a table (cols: its last dimension).
std::pair<int64_t, int64_t> rowsCols(const Tensor& t) {
  int64_t cols = t.rank() == 0 ? 1 : t.dim(t.rank() - 1);
  return {cols == 0 ? 0 : t.numel() / cols, cols};
}

bool isFloatTable(const Graph& g, ValueId v) {
  return g.type(v).dtype == DType::kF32;
}

// One int8-rowwise row: the same quantisation as the reference executor
// (scale = (max - min) / 255, bias = min, code = round((x - min) / scale)).
void quantizeRow(const float* x, int64_t cols, std::byte* row) {
  auto [lo, hi] = std::minmax_element(x, x + cols);
  const float bias = cols > 0 ? *lo : 0.0f;
  const float scale = cols > 0 ? (*hi - *lo) / 255.0f : 0.0f;
  auto* codes = reinterpret_cast<uint8_t*>(row);
  for (int64_t c = 0; c < cols; ++c) {
    const float q = scale > 0 ? std::nearbyint((x[c] - bias) / scale) : 0.0f;
    codes[c] = static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f));
  }
  const size_t tail = int8RowStride(cols) - 8;
  std::memcpy(row + tail, &scale, sizeof(float));
  std::memcpy(row + tail + sizeof(float), &bias, sizeof(float));
}

// Values as a library GEMM reads them: the plan's storage rounding applied
// (as the reference executor applies it), in the call's element type (f32,
// or bf16 / f16 for a GEMM whose operands are stored so: LibraryGemm::
// operands), rows at `pitch`; a transposed [R, C] as C rows of R.
Status writeLibrary(const Graph& g, const WeightFormat& f, std::byte* dst) {
  const Tensor& t = *g.constant(f.value);
  CAGR_ASSIGN_OR_RETURN(Tensor stored, ref::storedAs(t, g.value(f.value).mir.storage));
  auto [rows, cols] = rowsCols(stored);
  std::memset(dst, 0, weightBytes(g, f));
  const float* src = stored.data<float>();
  const auto put = [&](int64_t at, float x) {
    if (f.tf32 && std::isfinite(x)) {  // to nearest, ties away from zero: add half a TF32 ulp, drop 13 bits
      uint32_t bits = 0;
      std::memcpy(&bits, &x, sizeof bits);
      bits = (bits + 0x1000u) & 0xffffe000u;
      std::memcpy(&x, &bits, sizeof bits);
    }
    if (f.element == Precision::kF32) {
      reinterpret_cast<float*>(dst)[at] = x;
    } else {
      reinterpret_cast<uint16_t*>(dst)[at] = f.element == Precision::kBF16 ? floatToBf16(x) : floatToHalf(x);
    }
  };
  if ((f.transposed || f.group > 0) && t.shape().size() != 2) {
    return invalidArgument("a transposed or grouped library weight that is not 2-D");
  }
  if (f.group > 0) {  // [G][planes][R][pitch]: hi, then lo = x - hi when split
    if (cols % f.group != 0 || f.pitch < f.group) return invalidArgument("a grouped weight's columns do not split");
    const int64_t size = f.element == Precision::kF32 ? 4 : 2, chunk = 16 / size;  // elements per 16 bytes
    if (f.swizzle128 && f.pitch * size != 128) {
      return invalidArgument("a swizzled grouped weight's rows are not 128 bytes");
    }
    const int64_t planes = f.split ? 2 : 1;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t k = c % f.group, pos = f.swizzle128 ? ((k / chunk) ^ (r % 8)) * chunk + k % chunk : k;
        const int64_t at = (c / f.group * planes * rows + r) * f.pitch + pos;
        float x = src[r * cols + c];
        if (!f.split) {
          put(at, x);
          continue;
        }
        uint32_t bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        bits &= 0xffffe000u;
        float hi = 0;
        std::memcpy(&hi, &bits, sizeof bits);
        put(at, hi);
        put(at + rows * f.pitch, x - hi);
      }
    }
    return Status::ok();
  }
  const int64_t pitch = f.pitch > 0 ? f.pitch : f.transposed ? rows : cols;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) put(f.transposed ? c * pitch + r : r * pitch + c, src[r * cols + c]);
  }
  return Status::ok();
}

}  // namespace

size_t weightBytes(const Graph& g, const WeightFormat& f) {
  const Tensor& t = *g.constant(f.value);
  auto [rows, cols] = rowsCols(t);
  const size_t element = f.element == Precision::kF32 ? 4 : 2;
  if (f.library && f.group > 0) {
    return static_cast<size_t>((f.split ? 2 : 1) * (cols / f.group) * rows * f.pitch) * element;
  }
  if (f.library && f.transposed) return static_cast<size_t>(cols * (f.pitch > 0 ? f.pitch : rows)) * element;
  if (f.library) return static_cast<size_t>(rows * (f.pitch > 0 ? f.pitch : cols)) * element;
  if (!isFloatTable(g, f.value)) return t.byteSize();
  switch (g.value(f.value).mir.storage) {
    case Precision::kBF16:
    case Precision::kF16:
      return static_cast<size_t>(t.numel()) * 2;
    case Precision::kInt8Rowwise:
      return static_cast<size_t>(rows) * int8RowStride(cols);
    default:
      return static_cast<size_t>(t.numel()) * 4;
  }
}

Status writeWeight(const Graph& g, const WeightFormat& f, std::byte* dst) {
  const Tensor* t = g.constant(f.value);
  if (t == nullptr) return internalError("value %" + g.value(f.value).name + " is not a constant");
  if (f.library) {
    if (t->dtype() != DType::kF32) return unsupported("constant %" + g.value(f.value).name + " is not f32");
    return writeLibrary(g, f, dst);
  }
  Precision p = g.value(f.value).mir.storage;
  if (!isFloatTable(g, f.value) || p == Precision::kF32) {
    std::memcpy(dst, t->rawData(), t->byteSize());
    return Status::ok();
  }
  const float* x = t->data<float>();
  if (p == Precision::kBF16 || p == Precision::kF16) {
    auto* h = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < t->numel(); ++i) h[i] = p == Precision::kBF16 ? floatToBf16(x[i]) : floatToHalf(x[i]);
    return Status::ok();
  }
  if (p != Precision::kInt8Rowwise) {
    return unsupported("constant %" + g.value(f.value).name + ": storage " + precisionName(p) +
                       " has no device format");
  }
  auto [rows, cols] = rowsCols(*t);
  std::memset(dst, 0, weightBytes(g, f));
  for (int64_t r = 0; r < rows; ++r)
    quantizeRow(x + r * cols, cols, dst + static_cast<size_t>(r) * int8RowStride(cols));
  return Status::ok();
}

size_t weightOffsets(const Graph& g, const std::vector<WeightFormat>& formats, std::vector<size_t>& offset) {
  offset.assign(formats.size(), 0);
  size_t total = 0;
  for (size_t i = 0; i < formats.size(); ++i) {
    offset[i] = total;
    total += alignUp(std::max<size_t>(weightBytes(g, formats[i]), 1));
  }
  return total;
}

}  // namespace cagr::cuda
