// One lookup node compiled for the CPU kernels: Gather (axis 0 of a 2-D f32
// table), EmbeddingBag (fixed pooling or offsets, sum / mean / max, per-sample
// weights, include_last_offset) or EmbeddingBags (table-batched, slots shared
// by tables, fixed [B,S] / [B,S,P] or multi-hot [S,L] + [S,B] ids). Its output
// is `rows()` rows of `width()` floats; any range of rows can be computed on
// its own, so callers split the rows over threads or tiles.
#pragma once

#include <string>
#include <vector>

#include "backends/cpu/rec_tables.h"
#include "backends/cpu/step.h"

namespace cagr::cpu {

class Lookup {
 public:
  /// kUnsupported (with the reason) for a lookup these kernels do not run:
  /// other Gathers, non-f32 tables or weights.
  static StatusOr<Lookup> compile(const Graph& g, NodeId id);

  /// The buffers and bag bounds of one run (offsets already validated).
  struct Bound {
    int64_t rows = 0;
    int64_t work = 0;                          // floats read and written, roughly
    std::vector<BagJob> jobs;                  // one per table; begin/end/out set by compute
    std::vector<std::vector<int64_t>> bounds;  // per slot, offsets form only
    // One id per bag and table, f32 tables, no weights (DeepFM's batched
    // fields): every bag is a row copy, done row by row over all tables.
    struct RowCopy {
      const float* data;
      int64_t rows, dim, slot, column;
    };
    std::vector<RowCopy> copies;  // empty unless that form
    int64_t idStride = 0;         // ids per bag row (the slots)
  };
  /// Binds the run's buffers; fails (naming the node) on bad offsets.
  StatusOr<Bound> bind(const RunContext& ctx) const;

  /// Rows [r0, r1) into out, row r at out + (r - r0) * ld. False when an id
  /// is out of range (then badIdError explains it).
  bool compute(const Bound& b, int64_t r0, int64_t r1, float* out, int64_t ld) const;
  /// The error for the first out-of-range id, naming the node.
  Status badIdError(const Bound& b) const;

  /// "node 'name' (Op)", for messages.
  std::string where() const;
  ValueId output() const { return output_; }
  int64_t width() const { return width_; }
  OpKind op() const { return op_; }
  /// "gather", "embedding_bag" or "embedding_bags", plus the reduced
  /// storages it reads ("embedding_bags[int8_rowwise]").
  std::string label() const;

 private:
  struct TableUse {
    EmbeddingTable table;
    int64_t slot = 0;    // EmbeddingBags: the id slot it reads
    int64_t column = 0;  // first output column
  };

  Status outOfRange(size_t table, int64_t bag, int64_t p, int64_t id, int64_t rows) const;
  Status bindBounds(const Buffer& ids, const Buffer& offsets, Bound& b) const;
  void bindFixed(const Buffer& ids, Bound& b) const;
  /// Table t's job with its slot's bag bounds.
  BagJob jobFor(const Bound& b, size_t t) const;

  OpKind op_ = OpKind::kGather;
  std::string name_;
  ValueId ids_ = kNoValue, offsets_ = kNoValue, weights_ = kNoValue, output_ = kNoValue;
  std::vector<TableUse> tables_;
  PoolMode mode_ = PoolMode::kSum;
  bool includeLast_ = false;
  int64_t width_ = 0;
};

}  // namespace cagr::cpu
