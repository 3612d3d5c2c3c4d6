#include "cagr/tensor.h"
#include "support/sizes.h"

#include <cmath>
#include <stdexcept>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <sstream>

namespace cagr {

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::kF64:
    case DType::kI64: return 8;
    case DType::kF32:
    case DType::kI32: return 4;
    case DType::kF16:
    case DType::kBF16: return 2;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool: return 1;
  }
  return 1;
}

const char* dtypeName(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI64: return "i64";
    case DType::kI32: return "i32";
    case DType::kI8: return "i8";
    case DType::kU8: return "ui8";
    case DType::kBool: return "i1";
  }
  return "?";
}

StatusOr<DType> parseDType(const std::string& name) {
  static const DType kAll[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI64,
                               DType::kI32, DType::kI8,  DType::kU8,  DType::kBool};
  for (DType t : kAll) {
    if (name == dtypeName(t)) return t;
  }
  return invalidArgument("unknown element type '" + name + "'");
}

StatusOr<size_t> checkedTensorBytes(DType dtype, std::span<const int64_t> shape, const std::string& what) {
  uint64_t bytes = dtypeSize(dtype);
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0) return invalidArgument(what + ": negative dimension " + std::to_string(d));
    zero = zero || d == 0;
  }
  if (zero) return size_t{0};
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) || bytes > kMaxTensorBytes) {
      std::string s;
      for (int64_t e : shape) s += (s.empty() ? "" : ",") + std::to_string(e);
      return invalidArgument(what + ": shape [" + s + "] of " + dtypeName(dtype) + " is larger than " +
                             std::to_string(kMaxTensorBytes >> 40) + " TiB");
    }
  }
  return static_cast<size_t>(bytes);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  // Callers validate file-declared shapes first (checkedTensorBytes); this
  // guard turns a missed case into an exception instead of a wrapped size.
  auto checked = checkedTensorBytes(dtype_, shape_, "tensor");
  if (!checked.isOk()) throw std::length_error(checked.status().message());
  // calloc: large blocks come zeroed from the kernel, page by page as they
  // are touched, so a zero tensor nobody fills (an elided plan constant)
  // costs no memory.
  size_t bytes = std::max<size_t>(*checked, 1);
  auto* p = static_cast<std::byte*>(std::calloc(bytes, 1));
  if (p == nullptr) throw std::bad_alloc();
  data_ = std::shared_ptr<std::byte[]>(p, [](std::byte* q) { std::free(q); });
}

int64_t Tensor::numel() const {
  return std::accumulate(shape_.begin(), shape_.end(), int64_t{1}, std::multiplies<>());
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::wrap(DType dtype, std::vector<int64_t> shape, std::byte* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = std::shared_ptr<std::byte[]>(std::shared_ptr<std::byte[]>(), data);  // aliasing: no owner
  return t;
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> shape, std::shared_ptr<void> owner, std::byte* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = std::shared_ptr<std::byte[]>(std::move(owner), data);  // aliasing: `owner` keeps `data` alive
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (byteSize() > 0) std::memcpy(t.rawData(), rawData(), byteSize());
  return t;
}

double Tensor::getF64(int64_t i) const {
  switch (dtype_) {
    case DType::kF32: return data<float>()[i];
    case DType::kF64: return data<double>()[i];
    case DType::kF16: return halfToFloat(data<uint16_t>()[i]);
    case DType::kBF16: return bf16ToFloat(data<uint16_t>()[i]);
    case DType::kI64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kI32: return data<int32_t>()[i];
    case DType::kI8: return data<int8_t>()[i];
    case DType::kU8: return data<uint8_t>()[i];
    case DType::kBool: return data<uint8_t>()[i] ? 1.0 : 0.0;
  }
  return 0;
}

int64_t Tensor::getI64(int64_t i) const {
  switch (dtype_) {
    case DType::kI64: return data<int64_t>()[i];
    case DType::kI32: return data<int32_t>()[i];
    default: return static_cast<int64_t>(getF64(i));
  }
}

void Tensor::setF64(int64_t i, double v) {
  switch (dtype_) {
    case DType::kF32: data<float>()[i] = static_cast<float>(v); break;
    case DType::kF64: data<double>()[i] = v; break;
    case DType::kF16: data<uint16_t>()[i] = floatToHalf(static_cast<float>(v)); break;
    case DType::kBF16: data<uint16_t>()[i] = floatToBf16(static_cast<float>(v)); break;
    case DType::kI64: data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::kI32: data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::kI8: data<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::kU8: data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::kBool: data<uint8_t>()[i] = v != 0.0; break;
  }
}

Tensor Tensor::cast(DType to) const {
  Tensor t(to, shape_);
  int64_t n = numel();
  if (to == DType::kI64 && (dtype_ == DType::kI32 || dtype_ == DType::kI64)) {
    for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = getI64(i);
    return t;
  }
  for (int64_t i = 0; i < n; ++i) t.setF64(i, getF64(i));
  return t;
}

std::string Tensor::typeString() const {
  std::ostringstream os;
  os << dtypeName(dtype_) << "[";
  for (size_t i = 0; i < shape_.size(); ++i) os << (i ? "," : "") << shape_[i];
  os << "]";
  return os.str();
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float bf16ToFloat(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace cagr
