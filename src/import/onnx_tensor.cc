// ONNX TensorProto -> Tensor, including typed fields and external data files.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "import/context.h"

namespace cagr::import {

StatusOr<DType> dtypeFromOnnx(int32_t elemType) {
  switch (elemType) {
    case onnx::TensorProto::FLOAT: return DType::kF32;
    case onnx::TensorProto::DOUBLE: return DType::kF64;
    case onnx::TensorProto::FLOAT16: return DType::kF16;
    case onnx::TensorProto::BFLOAT16: return DType::kBF16;
    case onnx::TensorProto::INT64: return DType::kI64;
    case onnx::TensorProto::INT32: return DType::kI32;
    case onnx::TensorProto::INT8: return DType::kI8;
    case onnx::TensorProto::UINT8: return DType::kU8;
    case onnx::TensorProto::BOOL: return DType::kBool;
    default: return unsupported("ONNX element type " + std::to_string(elemType) + " is not supported");
  }
}

namespace {

Status readExternal(const onnx::TensorProto& t, const std::string& modelDir, Tensor& out) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset") offset = std::stoll(kv.value());
    if (kv.key() == "length") length = std::stoll(kv.value());
  }
  if (location.empty()) return corrupt("tensor '" + t.name() + "' has external data without a location");
  std::filesystem::path file = std::filesystem::path(modelDir) / location;
  std::ifstream in(file, std::ios::binary);
  if (!in) return notFound("cannot open external data file '" + file.string() + "' of tensor '" + t.name() + "'");
  auto want = static_cast<int64_t>(out.byteSize());
  if (length >= 0 && length != want) {
    return corrupt("external data of tensor '" + t.name() + "' has " + std::to_string(length) + " bytes, expected " +
                   std::to_string(want));
  }
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(out.rawData()), want);
  if (in.gcount() != want) {
    return corrupt("external data file '" + file.string() + "' is too short for tensor '" + t.name() + "'");
  }
  return Status::ok();
}

// Copies a repeated typed field into `out`, converting each element.
template <typename Field>
Status copyTyped(const Field& field, Tensor& out, const std::string& name) {
  if (static_cast<int64_t>(field.size()) != out.numel()) {
    return corrupt("tensor '" + name + "' holds " + std::to_string(field.size()) + " values, its shape needs " +
                   std::to_string(out.numel()));
  }
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (out.dtype() == DType::kI64) {
      out.data<int64_t>()[i] = static_cast<int64_t>(field.Get(static_cast<int>(i)));
    } else if (out.dtype() == DType::kF16 || out.dtype() == DType::kBF16) {
      out.data<uint16_t>()[i] = static_cast<uint16_t>(field.Get(static_cast<int>(i)));  // bit patterns
    } else {
      out.setF64(i, static_cast<double>(field.Get(static_cast<int>(i))));
    }
  }
  return Status::ok();
}

}  // namespace

StatusOr<Tensor> tensorFromOnnx(const onnx::TensorProto& t, const std::string& modelDir) {
  auto dtOr = dtypeFromOnnx(t.data_type());
  if (!dtOr.isOk()) return dtOr.status().withContext("tensor '" + t.name() + "'");
  DType dt = *dtOr;
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape) {
    if (d < 0) return corrupt("tensor '" + t.name() + "' has a negative dimension");
  }
  Tensor out(dt, shape);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    CAGR_RETURN_IF_ERROR(readExternal(t, modelDir, out));
    return out;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != out.byteSize()) {
      return corrupt("tensor '" + t.name() + "' has " + std::to_string(t.raw_data().size()) + " bytes of data, its " +
                     "shape needs " + std::to_string(out.byteSize()));
    }
    if (out.byteSize() > 0) std::memcpy(out.rawData(), t.raw_data().data(), out.byteSize());
    return out;
  }
  switch (dt) {
    case DType::kF32: CAGR_RETURN_IF_ERROR(copyTyped(t.float_data(), out, t.name())); break;
    case DType::kF64: CAGR_RETURN_IF_ERROR(copyTyped(t.double_data(), out, t.name())); break;
    case DType::kI64: CAGR_RETURN_IF_ERROR(copyTyped(t.int64_data(), out, t.name())); break;
    default: CAGR_RETURN_IF_ERROR(copyTyped(t.int32_data(), out, t.name())); break;
  }
  return out;
}

}  // namespace cagr::import
