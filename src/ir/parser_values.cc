// Numbers and dense data of the HIR text form (see ir/parser_values.h).
#include "ir/parser_values.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <new>

#include "ir/text_format.h"

namespace cagr::text {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 40;

StatusOr<uint64_t> hexValue(const Source& src, const RawScalar& s) {
  std::string_view d = s.text.substr(2);
  uint64_t v = 0;
  auto r = std::from_chars(d.data(), d.data() + d.size(), v, 16);
  if (r.ec != std::errc() || r.ptr != d.data() + d.size()) return src.error(s.pos, "hex literal out of range");
  return v;
}

template <typename F>
StatusOr<F> decimalValue(const Source& src, const RawScalar& s) {
  F v{};
  auto r = std::from_chars(s.text.data(), s.text.data() + s.text.size(), v);
  if (r.ec != std::errc() || r.ptr != s.text.data() + s.text.size()) {
    return src.error(s.pos, "float literal '" + std::string(s.text) + "' is out of range");
  }
  return s.negative ? -v : v;
}

size_t floatBits(DType t) { return dtypeSize(t) * 8; }

// The bit pattern of a hex float literal, checked against the type's width.
StatusOr<uint64_t> hexFloatBits(const Source& src, const RawScalar& s, DType t) {
  if (s.negative) return src.error(s.pos, "a hex float literal cannot be negative");
  CAGR_ASSIGN_OR_RETURN(uint64_t bits, hexValue(src, s));
  if (floatBits(t) < 64 && (bits >> floatBits(t)) != 0) {
    return src.error(s.pos, std::string("hex literal is too wide for ") + dtypeName(t));
  }
  return bits;
}

// A float literal's value in floating type `t` (f64, f32, f16, bf16).
StatusOr<double> floatValue(const Source& src, const RawScalar& s, DType t) {
  if (s.kind == RawScalar::kBool) return src.error(s.pos, "expected a float, found a boolean");
  if (s.kind != RawScalar::kHex) {
    if (t == DType::kF64) return decimalValue<double>(src, s);
    CAGR_ASSIGN_OR_RETURN(float f, decimalValue<float>(src, s));
    return static_cast<double>(f);
  }
  CAGR_ASSIGN_OR_RETURN(uint64_t bits, hexFloatBits(src, s, t));
  switch (t) {
    case DType::kF64: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case DType::kF32: {
      auto b32 = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b32, sizeof f);
      return static_cast<double>(f);
    }
    case DType::kBF16:
      return static_cast<double>(bf16ToFloat(static_cast<uint16_t>(bits)));
    default:
      return static_cast<double>(halfToFloat(static_cast<uint16_t>(bits)));
  }
}

StatusOr<DType> floatTypeOf(const std::string& name) {
  if (name == "f64") return DType::kF64;
  if (name == "f32") return DType::kF32;
  if (name == "f16") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  return invalidArgument("not a float type");
}

bool isIntegerTypeName(const std::string& name) {
  if (name == "index") return true;
  size_t p = name.starts_with("si") || name.starts_with("ui") ? 2 : name.starts_with("i") ? 1 : std::string::npos;
  return p != std::string::npos && p < name.size() && name.find_first_not_of("0123456789", p) == std::string::npos;
}

// Integer element in [lo, hi], for the narrower integer dtypes.
StatusOr<int64_t> boundedInt(const Source& src, const RawScalar& s, int64_t lo, int64_t hi, DType t) {
  CAGR_ASSIGN_OR_RETURN(int64_t v, scalarInt(src, s));
  if (v < lo || v > hi) return src.error(s.pos, std::to_string(v) + " does not fit in " + dtypeName(t));
  return v;
}

// Writes element `i` of `t` from a literal.
Status storeElement(const Source& src, Tensor& t, int64_t i, const RawScalar& s) {
  DType dt = t.dtype();
  bool isFloat = dt == DType::kF32 || dt == DType::kF64 || dt == DType::kF16 || dt == DType::kBF16;
  if (isFloat && s.kind == RawScalar::kHex) {  // exact bits, NaN payloads included
    CAGR_ASSIGN_OR_RETURN(uint64_t bits, hexFloatBits(src, s, dt));
    std::memcpy(t.rawData() + static_cast<size_t>(i) * dtypeSize(dt), &bits, dtypeSize(dt));
    return Status::ok();
  }
  switch (dt) {
    case DType::kF64: {
      CAGR_ASSIGN_OR_RETURN(t.data<double>()[i], floatValue(src, s, dt));
      return Status::ok();
    }
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16: {
      CAGR_ASSIGN_OR_RETURN(double v, floatValue(src, s, DType::kF32));
      auto f = static_cast<float>(v);
      if (dt == DType::kF32) t.data<float>()[i] = f;
      if (dt != DType::kF32) t.data<uint16_t>()[i] = dt == DType::kF16 ? floatToHalf(f) : floatToBf16(f);
      return Status::ok();
    }
    case DType::kI64: {
      CAGR_ASSIGN_OR_RETURN(t.data<int64_t>()[i], scalarInt(src, s));
      return Status::ok();
    }
    case DType::kI32: {
      CAGR_ASSIGN_OR_RETURN(int64_t v, boundedInt(src, s, INT32_MIN, UINT32_MAX, dt));
      t.data<int32_t>()[i] = static_cast<int32_t>(static_cast<uint32_t>(v));
      return Status::ok();
    }
    case DType::kI8:
    case DType::kU8: {
      CAGR_ASSIGN_OR_RETURN(int64_t v, boundedInt(src, s, dt == DType::kI8 ? -128 : 0, 255, dt));
      t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
      return Status::ok();
    }
    case DType::kBool: {
      if (s.kind == RawScalar::kBool) {
        t.data<uint8_t>()[i] = s.text == "true" ? 1 : 0;
        return Status::ok();
      }
      CAGR_ASSIGN_OR_RETURN(int64_t v, boundedInt(src, s, 0, 1, dt));
      t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
      return Status::ok();
    }
  }
  return src.error(s.pos, "unsupported element type");
}

// Copies element 0 over the whole tensor.
void replicateFirst(Tensor& t) {
  size_t sz = dtypeSize(t.dtype());
  for (int64_t i = 1, n = t.numel(); i < n; ++i)
    std::memcpy(t.rawData() + static_cast<size_t>(i) * sz, t.rawData(), sz);
}

unsigned hexDigit(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

Status fillFromHex(const Source& src, const RawAttr& a, Tensor& t) {
  size_t bytes = a.hex.size() / 2;
  auto byteAt = [&](size_t k) {
    return static_cast<uint8_t>(hexDigit(a.hex[2 * k]) << 4 | hexDigit(a.hex[2 * k + 1]));
  };
  int64_t n = t.numel();
  if (t.dtype() == DType::kBool) {
    if (bytes == packedBoolBytes(n)) {
      for (int64_t i = 0; i < n; ++i) t.data<uint8_t>()[i] = (byteAt(static_cast<size_t>(i / 8)) >> (i % 8)) & 1;
      return Status::ok();
    }
    if (bytes == 1) {
      std::memset(t.rawData(), byteAt(0) != 0 ? 1 : 0, static_cast<size_t>(n));
      return Status::ok();
    }
    return src.error(a.pos, "hex data has " + std::to_string(bytes) + " bytes but " + a.denseType.str() + " needs " +
                                std::to_string(packedBoolBytes(n)) + " (i1 is bit-packed)");
  }
  size_t sz = dtypeSize(t.dtype());
  if (bytes != t.byteSize() && !(bytes == sz && n > 0)) {
    return src.error(a.pos, "hex data has " + std::to_string(bytes) + " bytes but " + a.denseType.str() + " needs " +
                                std::to_string(t.byteSize()));
  }
  auto* out = reinterpret_cast<uint8_t*>(t.rawData());
  for (size_t k = 0; k < bytes; ++k) out[k] = byteAt(k);
  if (bytes != t.byteSize()) replicateFirst(t);
  return Status::ok();
}

std::string shapeString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

Status fillFromList(const Source& src, const RawAttr& a, Tensor& t) {
  if (a.listShape != t.shape() || (a.listLeafDepth >= 0 && a.listLeafDepth != t.rank())) {
    return src.error(a.pos,
                     "dense list has shape " + shapeString(a.listShape) + " but the type is " + a.denseType.str());
  }
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    CAGR_RETURN_IF_ERROR(storeElement(src, t, i, a.denseElems[static_cast<size_t>(i)]));
  }
  return Status::ok();
}

}  // namespace

StatusOr<int64_t> scalarInt(const Source& src, const RawScalar& s) {
  switch (s.kind) {
    case RawScalar::kBool:
      return s.text == "true" ? 1 : 0;
    case RawScalar::kFloat:
      return src.error(s.pos, "expected an integer, found '" + std::string(s.text) + "'");
    case RawScalar::kHex: {
      CAGR_ASSIGN_OR_RETURN(uint64_t v, hexValue(src, s));
      return s.negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    }
    case RawScalar::kInt:
      break;
  }
  uint64_t v = 0;
  auto r = std::from_chars(s.text.data(), s.text.data() + s.text.size(), v);
  uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (s.negative ? 1 : 0);
  if (r.ec != std::errc() || v > limit) return src.error(s.pos, "integer literal does not fit in 64 bits");
  return s.negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

StatusOr<AttrValue> numberAttr(const Source& src, const RawAttr& a, bool preferFloat) {
  const RawScalar& s = a.scalar;
  if (a.typeName) {
    auto ft = floatTypeOf(*a.typeName);
    if (ft.isOk()) {
      CAGR_ASSIGN_OR_RETURN(double d, floatValue(src, s, *ft));
      return AttrValue(d);
    }
    if (!isIntegerTypeName(*a.typeName)) return src.error(a.pos, "unsupported attribute type '" + *a.typeName + "'");
    CAGR_ASSIGN_OR_RETURN(int64_t i, scalarInt(src, s));
    return AttrValue(i);
  }
  if (s.kind == RawScalar::kFloat || (preferFloat && s.kind != RawScalar::kBool)) {
    CAGR_ASSIGN_OR_RETURN(double d, floatValue(src, s, DType::kF64));
    return AttrValue(d);
  }
  CAGR_ASSIGN_OR_RETURN(int64_t i, scalarInt(src, s));
  return AttrValue(i);
}

StatusOr<Tensor> zeroTensor(const Source& src, const RawType& ty) {
  if (!ty.isStatic()) return src.error(ty.pos, "a constant needs a static type, got " + ty.str());
  int64_t n = 1;
  for (int64_t d : ty.dims) {
    if (d != 0 && n > kMaxElements / d) return src.error(ty.pos, "constant " + ty.str() + " is too large");
    n *= d;
  }
  try {
    return Tensor(ty.dtype, ty.dims);
  } catch (const std::bad_alloc&) {
    return src.error(ty.pos, "cannot allocate constant " + ty.str(), ErrorCode::kInvalidArgument);
  }
}

StatusOr<Tensor> denseToTensor(const Source& src, const RawAttr& a) {
  const RawType& ty = a.denseType;
  CAGR_ASSIGN_OR_RETURN(Tensor t, zeroTensor(src, ty));
  int64_t n = t.numel();
  size_t sz = dtypeSize(ty.dtype);
  switch (a.denseForm) {
    case RawAttr::kElided:
      return t;
    case RawAttr::kEmpty:
      if (n != 0) {
        return src.error(a.pos, "dense<> holds no data but " + ty.str() + " has " + std::to_string(n) + " elements");
      }
      return t;
    case RawAttr::kSplat: {
      Tensor probe(ty.dtype, {1});  // checks the literal even when `t` is empty
      CAGR_RETURN_IF_ERROR(storeElement(src, probe, 0, a.denseElems.front()));
      bool zero = true;
      for (size_t b = 0; b < sz; ++b) zero = zero && probe.rawData()[b] == std::byte{0};
      if (zero) return t;  // already zero, and untouched pages cost nothing
      // A non-zero splat is data the file does not hold: at most 1 GiB of it.
      if (static_cast<uint64_t>(n) * sz > (uint64_t{1} << 30)) {
        return src.error(a.pos, "splat constant " + ty.str() + " would fill " + std::to_string(n * static_cast<int64_t>(sz)) +
                                    " bytes from one literal; at most 1 GiB is accepted");
      }
      for (int64_t i = 0; i < n; ++i) std::memcpy(t.rawData() + static_cast<size_t>(i) * sz, probe.rawData(), sz);
      return t;
    }
    case RawAttr::kList:
      CAGR_RETURN_IF_ERROR(fillFromList(src, a, t));
      return t;
    case RawAttr::kHexData:
      CAGR_RETURN_IF_ERROR(fillFromHex(src, a, t));
      return t;
  }
  return t;
}

}  // namespace cagr::text
