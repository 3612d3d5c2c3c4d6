// Dense host tensors: the currency of the reference executor, npz I/O and
// graph constants. Storage is shared and immutable once published as a graph
// constant, so cloning a graph never copies weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cagr/status.h"

namespace cagr {

/// Element types CAGR understands. Reduced precisions appear in plans
/// (issue 4+); the reference executor computes in f32/f64/i64.
enum class DType : uint8_t { kF32, kF64, kF16, kBF16, kI64, kI32, kI8, kU8, kBool };

/// Byte size of one element.
size_t dtypeSize(DType t);
/// MLIR element-type spelling: f32, f64, f16, bf16, i64, i32, i8, ui8, i1.
const char* dtypeName(DType t);
/// Parses dtypeName()'s spelling back.
StatusOr<DType> parseDType(const std::string& name);

/// Row-major dense tensor with concrete dimensions.
class Tensor {
 public:
  Tensor() = default;
  /// Allocates zero-filled storage.
  Tensor(DType dtype, std::vector<int64_t> shape);
  /// A tensor over memory it does not own (a backend's arena or a caller's
  /// buffer), which must outlive it and every copy of it.
  static Tensor wrap(DType dtype, std::vector<int64_t> shape, std::byte* data);
  /// A tensor over `data`, memory that `owner` keeps alive (a mapped weights
  /// file): copies of the tensor share `owner`, which is released with the last.
  static Tensor view(DType dtype, std::vector<int64_t> shape, std::shared_ptr<void> owner, std::byte* data);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const;
  size_t byteSize() const { return static_cast<size_t>(numel()) * dtypeSize(dtype_); }

  std::byte* rawData() { return data_.get(); }
  const std::byte* rawData() const { return data_.get(); }

  template <typename T>
  T* data() { return reinterpret_cast<T*>(data_.get()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(data_.get()); }
  template <typename T>
  std::span<const T> values() const { return {data<T>(), static_cast<size_t>(numel())}; }

  /// Same storage viewed with another shape of equal element count.
  Tensor reshaped(std::vector<int64_t> shape) const;
  /// Deep copy.
  Tensor clone() const;
  /// Converts to another dtype (numeric cast).
  Tensor cast(DType to) const;
  /// Reads element i (any numeric dtype) as double / int64.
  double getF64(int64_t i) const;
  int64_t getI64(int64_t i) const;
  void setF64(int64_t i, double v);

  /// "f32[256,13]".
  std::string typeString() const;

 private:
  DType dtype_ = DType::kF32;
  std::vector<int64_t> shape_;
  std::shared_ptr<std::byte[]> data_;
};

/// Converts between IEEE half / bfloat16 bit patterns and float.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);

}  // namespace cagr
