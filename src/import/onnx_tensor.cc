// ONNX TensorProto -> Tensor, including typed fields and external data files.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "import/context.h"
#include "support/files.h"
#include "support/sizes.h"

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

StatusOr<int64_t> externalInt(const onnx::TensorProto& t, const std::string& key, const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return corrupt("tensor '" + t.name() + "': external data " + key + " '" + text + "' is not a non-negative integer");
  }
  return v;
}

// The external data file of `t`: `location` must be a relative path that
// stays inside the model's directory once symlinks are resolved (as ONNX
// Runtime requires), and a regular file.
StatusOr<std::filesystem::path> externalFile(const onnx::TensorProto& t, const std::string& location,
                                             const std::string& modelDir) {
  namespace fs = std::filesystem;
  const std::string where = "tensor '" + t.name() + "': external data location '" + location + "'";
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) {
    return corrupt(where + " is an absolute path; it must be relative to the model's directory");
  }
  for (const auto& part : rel) {
    if (part == "..") return corrupt(where + " leaves the model's directory ('..')");
  }
  std::error_code ec;
  fs::path dir = fs::canonical(modelDir.empty() ? fs::path(".") : fs::path(modelDir), ec);
  if (ec) return notFound("cannot resolve the model directory '" + modelDir + "': " + ec.message());
  fs::path file = fs::canonical(dir / rel, ec);
  if (ec) return notFound("cannot open external data file '" + (dir / rel).string() + "' of tensor '" + t.name() + "'");
  auto [a, b] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  if (a != dir.end()) return corrupt(where + " resolves to '" + file.string() + "', outside the model's directory");
  if (!fs::is_regular_file(file, ec)) return corrupt(where + " is not a regular file");
  return file;
}

// Where a tensor's external data lies.
struct ExternalData {
  std::filesystem::path file;
  int64_t offset = 0, length = -1;  // length -1: not given
};

StatusOr<ExternalData> externalData(const onnx::TensorProto& t, const std::string& modelDir) {
  std::string location;
  ExternalData e;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset") {
      CAGR_ASSIGN_OR_RETURN(e.offset, externalInt(t, "offset", kv.value()));
    }
    if (kv.key() == "length") {
      CAGR_ASSIGN_OR_RETURN(e.length, externalInt(t, "length", kv.value()));
    }
  }
  if (location.empty()) return corrupt("tensor '" + t.name() + "' has external data without a location");
  CAGR_ASSIGN_OR_RETURN(e.file, externalFile(t, location, modelDir));
  return e;
}

// External data at least this large is memory-mapped rather than read: the
// weights are then held once, by the page cache, and only touched rows load.
constexpr int64_t kMapBytes = int64_t{1} << 20;

StatusOr<Tensor> readExternal(const onnx::TensorProto& t, const std::string& modelDir, DType dt,
                              std::vector<int64_t> shape, int64_t want) {
  CAGR_ASSIGN_OR_RETURN(ExternalData e, externalData(t, modelDir));
  if (e.length >= 0 && e.length != want) {
    return corrupt("external data of tensor '" + t.name() + "' has " + std::to_string(e.length) + " bytes, expected " +
                   std::to_string(want));
  }
  std::error_code ec;
  auto fileSize = static_cast<int64_t>(std::filesystem::file_size(e.file, ec));
  if (ec || e.offset > fileSize || want > fileSize - e.offset) {
    return corrupt("external data file '" + e.file.string() + "' is too short for tensor '" + t.name() + "' (" +
                   std::to_string(want) + " bytes at offset " + std::to_string(e.offset) + ")");
  }
  if (want >= kMapBytes && e.offset % static_cast<int64_t>(dtypeSize(dt)) == 0) {
    auto region = mapFileRegion(e.file.string(), static_cast<uint64_t>(e.offset), static_cast<uint64_t>(want));
    if (region.isOk()) return Tensor::view(dt, std::move(shape), region->owner, region->data);
  }
  Tensor out(dt, std::move(shape));
  std::ifstream in(e.file, std::ios::binary);
  if (!in) return notFound("cannot open external data file '" + e.file.string() + "' of tensor '" + t.name() + "'");
  in.seekg(e.offset);
  in.read(reinterpret_cast<char*>(out.rawData()), want);
  if (in.gcount() != want) {
    return corrupt("external data file '" + e.file.string() + "' is too short for tensor '" + t.name() + "'");
  }
  return out;
}

// Bytes the tensor's data holds in the file (before allocating the tensor).
StatusOr<uint64_t> storedBytes(const onnx::TensorProto& t, size_t elemSize, const std::string& modelDir) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    CAGR_ASSIGN_OR_RETURN(ExternalData e, externalData(t, modelDir));
    std::error_code ec;
    uint64_t n = std::filesystem::file_size(e.file, ec);
    return ec ? 0 : n;
  }
  if (t.has_raw_data()) return t.raw_data().size();
  uint64_t n = static_cast<uint64_t>(t.float_data_size()) + t.double_data_size() + t.int64_data_size() +
               t.int32_data_size();
  return n * elemSize;
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
  // Validate the declared size against the bytes the file holds before allocating.
  auto bytes = checkedTensorBytes(dt, shape, "tensor '" + t.name() + "'");
  if (!bytes.isOk()) return corrupt(bytes.status().message());
  CAGR_ASSIGN_OR_RETURN(uint64_t stored, storedBytes(t, dtypeSize(dt), modelDir));
  if (*bytes > stored) {
    return corrupt("tensor '" + t.name() + "' declares " + std::to_string(*bytes) + " bytes of data but its file holds " +
                   std::to_string(stored));
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    return readExternal(t, modelDir, dt, std::move(shape), static_cast<int64_t>(*bytes));
  }
  Tensor out(dt, shape);
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
