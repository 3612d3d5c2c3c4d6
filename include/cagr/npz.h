// NumPy .npy / .npz I/O: how CAGR exchanges tensors (model inputs, weights,
// reference outputs) with Python.
//
// Reading supports .npy format versions 1.0, 2.0 and 3.0 and .npz archives
// written by np.savez (stored) and np.savez_compressed (deflated), including
// ZIP64 archives. Element types: '<f4' '<f8' '<f2' '<i8' '<i4' '|i1' '|u1'
// '|b1'. Fortran-order arrays are transposed into C order on load. Big-endian
// data, unsigned 16/32/64-bit integers, complex, string and structured dtypes
// are rejected with kUnsupported. CRC32 of every zip member is verified.
//
// Writing produces version 1.0 .npy data in stored (uncompressed) zip members
// that numpy.load reads. NumPy has no bfloat16, so bf16 tensors are written
// as '<f4' (exactly representable); they read back as f32.
//
// Every error message starts with the file path and names the array key
// where one is involved. Host byte order must be little-endian.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr {

/// One named array of an .npz archive; the name has no ".npy" suffix.
using NpzEntry = std::pair<std::string, Tensor>;
/// Arrays of an .npz archive in file order.
using NpzContents = std::vector<NpzEntry>;

/// Knobs for writeNpz.
struct NpzWriteOptions {
  /// Emit ZIP64 extra fields and end records even when sizes do not need
  /// them (they are used automatically past 4 GiB). Meant for testing.
  bool forceZip64 = false;
};

/// Reads every array of an .npz archive, in central-directory (file) order.
StatusOr<NpzContents> readNpz(const std::string& path);

/// Reads a single .npy file.
StatusOr<Tensor> readNpy(const std::string& path);

/// Writes `arrays` as an uncompressed .npz archive that numpy.load reads.
/// Keys must be non-empty and unique; each becomes member "<key>.npy".
/// The file is written to "<path>.tmp" and renamed into place.
Status writeNpz(const std::string& path, const NpzContents& arrays,
                const NpzWriteOptions& options = {});

/// Writes one tensor as a .npy file (format 1.0; bf16 becomes '<f4').
Status writeNpy(const std::string& path, const Tensor& tensor);

/// Returns the array named `key`, or kNotFound with a message such as
/// "<path>: no array named 'dense' (has: sparse, offsets)". `path` is only
/// used for the message.
StatusOr<Tensor> findArray(const NpzContents& contents, const std::string& key,
                           const std::string& path);

/// Decodes the bytes of a complete .npy file. `context` prefixes errors
/// (typically "<path>" or "<path>: array 'key'").
StatusOr<Tensor> decodeNpy(std::string_view bytes, const std::string& context);

/// Encodes a tensor as the bytes of a .npy file (format 1.0).
std::string encodeNpy(const Tensor& tensor);

}  // namespace cagr
