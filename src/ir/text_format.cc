// MLIR literal spellings for the HIR text form (see ir/text_format.h).
#include "ir/text_format.h"

#include <cmath>
#include <variant>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace cagr::text {
namespace {

std::string hexBits(uint64_t bits, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llX", digits, static_cast<unsigned long long>(bits));
  return buf;
}

// MLIR float literals need a '.' in the mantissa: "1e-05" -> "1.0e-05".
std::string withDot(std::string s) {
  size_t e = s.find_first_of("eE");
  std::string mant = s.substr(0, e);
  if (mant.find('.') == std::string::npos) mant += ".0";
  return e == std::string::npos ? mant : mant + s.substr(e);
}

template <typename F>
std::string shortest(F v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return withDot(std::string(buf, res.ptr));
}

void appendHexByte(std::string& out, unsigned b) {
  static const char kDigits[] = "0123456789ABCDEF";
  out += kDigits[(b >> 4) & 0xF];
  out += kDigits[b & 0xF];
}

// One element of `t` as a dense-list literal.
std::string elementLiteral(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kF32:
      return formatF32(t.data<float>()[i]);
    case DType::kF64:
      return formatF64(t.data<double>()[i]);
    case DType::kF16:
      return formatHalf(t.data<uint16_t>()[i], false);
    case DType::kBF16:
      return formatHalf(t.data<uint16_t>()[i], true);
    case DType::kI64:
      return std::to_string(t.data<int64_t>()[i]);
    case DType::kI32:
      return std::to_string(t.data<int32_t>()[i]);
    case DType::kI8:
      return std::to_string(static_cast<int>(t.data<int8_t>()[i]));
    case DType::kU8:
      return std::to_string(static_cast<unsigned>(t.data<uint8_t>()[i]));
    case DType::kBool:
      return t.data<uint8_t>()[i] != 0 ? "true" : "false";
  }
  return "0";
}

bool sameElement(const Tensor& t, int64_t a, int64_t b) {
  if (t.dtype() == DType::kBool) return (t.data<uint8_t>()[a] != 0) == (t.data<uint8_t>()[b] != 0);
  size_t sz = dtypeSize(t.dtype());
  return std::memcmp(t.rawData() + static_cast<size_t>(a) * sz, t.rawData() + static_cast<size_t>(b) * sz, sz) == 0;
}

bool isSplat(const Tensor& t) {
  for (int64_t i = 1, n = t.numel(); i < n; ++i) {
    if (!sameElement(t, 0, i)) return false;
  }
  return true;
}

// Nested list over dims [axis, rank), elements from `*next` on.
void appendList(const Tensor& t, size_t axis, int64_t* next, std::string& out) {
  if (axis == t.shape().size()) {
    out += elementLiteral(t, (*next)++);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < t.shape()[axis]; ++i) {
    if (i > 0) out += ", ";
    appendList(t, axis + 1, next, out);
  }
  out += ']';
}

void appendHex(const Tensor& t, std::string& out) {
  out += "\"0x";
  if (t.dtype() == DType::kBool) {
    std::string packed(packedBoolBytes(t.numel()), '\0');
    for (int64_t i = 0, n = t.numel(); i < n; ++i) {
      if (t.data<uint8_t>()[i] != 0) packed[static_cast<size_t>(i / 8)] |= static_cast<char>(1 << (i % 8));
    }
    for (char c : packed) appendHexByte(out, static_cast<unsigned char>(c));
  } else {
    static const char kDigits[] = "0123456789ABCDEF";
    const auto* bytes = reinterpret_cast<const unsigned char*>(t.rawData());
    size_t start = out.size(), n = t.byteSize();
    out.resize(start + n * 2);
    char* dst = out.data() + start;
    for (size_t i = 0; i < n; ++i) {
      dst[2 * i] = kDigits[bytes[i] >> 4];
      dst[2 * i + 1] = kDigits[bytes[i] & 0xF];
    }
  }
  out += '"';
}

}  // namespace

std::string formatF64(double v) {
  if (!std::isfinite(v)) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return hexBits(bits, 16);
  }
  return shortest(v);
}

std::string formatF32(float v) {
  if (!std::isfinite(v)) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return hexBits(bits, 8);
  }
  return shortest(v);
}

std::string formatHalf(uint16_t bits, bool bf16) {
  float f = bf16 ? bf16ToFloat(bits) : halfToFloat(bits);
  if (!std::isfinite(f)) return hexBits(bits, 4);
  return shortest(f);
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (u >= 0x20 && u < 0x7F && c != '"') {
      out += c;
    } else {
      out += '\\';
      appendHexByte(out, u);
    }
  }
  return out + "\"";
}

std::string tensorTypeString(const TensorType& t) {
  std::string s = "tensor<";
  for (Dim d : t.dims) s += (isSymbolic(d) ? std::string("?") : std::to_string(d)) + "x";
  return s + dtypeName(t.dtype) + ">";
}

std::string denseLiteral(const Tensor& t) {
  std::string out = "dense<";
  if (t.numel() == 0) {
    // nothing between the brackets
  } else if (isSplat(t)) {
    out += elementLiteral(t, 0);
  } else if (t.numel() <= kMaxListElements) {
    int64_t next = 0;
    appendList(t, 0, &next, out);
  } else {
    appendHex(t, out);
  }
  return out + ">";
}

std::string attrLiteral(const AttrValue& v) {
  struct Visitor {
    std::string operator()(int64_t i) const { return std::to_string(i) + " : i64"; }
    std::string operator()(double d) const { return formatF64(d) + " : f64"; }
    std::string operator()(const std::string& s) const { return quote(s); }
    std::string operator()(const std::vector<int64_t>& l) const {
      std::string s = "[";
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + std::to_string(l[i]);
      return s + "]";
    }
    std::string operator()(const std::vector<double>& l) const {
      // A non-finite element is a bit pattern, which needs its type in MLIR.
      std::string s = "[";
      for (size_t i = 0; i < l.size(); ++i) {
        s += (i ? ", " : "") + formatF64(l[i]);
        if (!std::isfinite(l[i])) s += " : f64";
      }
      return s + "]";
    }
  };
  return std::visit(Visitor{}, v);
}

}  // namespace cagr::text
