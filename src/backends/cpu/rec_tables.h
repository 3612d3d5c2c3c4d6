// Embedding tables as the CPU kernels read them, and the bag-pooling kernel
// every lookup step runs (Gather, EmbeddingBag, EmbeddingBags, the lookups of
// fused interaction / FM groups). Tables are converted once at compile time
// to their planned storage (f32, bf16, f16 or int8 row-wise with a per-row
// scale and bias) and widened to f32 inside the kernel, so a reduced table
// costs half or a quarter of the memory traffic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr::cpu {

enum class PoolMode : uint8_t { kSum, kMean, kMax };

/// "sum" | "mean" | "max", or an error naming the mode.
StatusOr<PoolMode> parsePoolMode(const std::string& mode);

/// Rows of one table in its storage format (non-owning; see EmbeddingTable).
struct TableView {
  const void* data = nullptr;        // rows x dim elements of the storage type
  const float* scaleBias = nullptr;  // int8_rowwise: {scale, bias} per row
  int64_t rows = 0, dim = 0;
  Precision storage = Precision::kF32;  // kF32, kBF16, kF16 or kInt8Rowwise
};

/// A table owned by a step: a constant converted to its storage precision,
/// or (f32 only) a value read from the run's buffers.
class EmbeddingTable {
 public:
  /// A 2-D f32 constant stored as `storage` (same rounding and quantisation
  /// as the reference executor, so both read identical values).
  static StatusOr<EmbeddingTable> fromConstant(const Tensor& t, Precision storage);
  /// A 2-D f32 table that is not a constant: bound at run time.
  static EmbeddingTable fromValue(ValueId v, int64_t dim);

  bool isConstant() const { return value_ == kNoValue; }
  ValueId value() const { return value_; }
  int64_t dim() const { return dim_; }
  Precision storage() const { return view_.storage; }
  /// The rows to read; `runtime` is the bound f32 buffer for a non-constant table.
  TableView view(const float* runtime = nullptr, int64_t runtimeRows = 0) const;

 private:
  TableView view_;
  ValueId value_ = kNoValue;
  int64_t dim_ = 0;
  std::shared_ptr<const void> owned_;  // the stored rows (and scales)
};

/// One call of the pooling kernel: bags [begin, end) of one table.
struct BagJob {
  TableView table;
  const void* ids = nullptr;  // i64 or i32 ids
  bool ids32 = false;
  const float* weights = nullptr;  // per-sample weights aligned with ids (sum mode), or null
  // Offsets form: bag b = ids[bounds[b], bounds[b+1]). Fixed form (bounds
  // null): bag b = ids[first + b * stride + p] for p < pooling.
  const int64_t* bounds = nullptr;
  int64_t first = 0, stride = 1, pooling = 1;
  PoolMode mode = PoolMode::kSum;
  bool wrapNegative = false;  // Gather: id -R..-1 means R+id
  int64_t begin = 0, end = 0;
  float* out = nullptr;  // bag b's row at out + (b - begin) * ldOut
  int64_t ldOut = 0;
};

/// Pools the job's bags (an empty bag gives zeros). Returns -1, or the first
/// bag holding an out-of-range id (its row and later ones are unspecified).
int64_t poolBags(const BagJob& job);

/// The ids of bag b of `job` (the positions, for error messages).
void bagRange(const BagJob& job, int64_t b, int64_t& lo, int64_t& hi);
/// Reads id `p` of the job's id array.
int64_t idAt(const BagJob& job, int64_t p);

}  // namespace cagr::cpu
