// Lookup nodes compiled once (tables converted to their planned storage,
// ids / offsets / weights located) and bound per run: offsets are checked
// and turned into bag bounds serially (cheap, O(bags)), ids are checked in
// the kernel itself, and a failed range is re-scanned for the message.
#include "backends/cpu/rec_lookup.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "cagr/mir.h"
#include "ir/op_table.h"

namespace cagr::cpu {
namespace {

bool isIndex(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}

int64_t readIndex(const Buffer& b, int64_t i) {
  return b.dtype == DType::kI32 ? b.as<int32_t>()[i] : b.as<int64_t>()[i];
}

// Bag bounds from offsets (PyTorch rules, as the reference kernel): `count`
// offsets from element `at` of `off`, non-decreasing and within [0, len];
// without include_last_offset the last bag ends at len.
StatusOr<std::vector<int64_t>> bagBounds(const Buffer& off, int64_t at, int64_t count, int64_t len, int64_t bags,
                                         bool includeLast) {
  if (count != bags + (includeLast ? 1 : 0)) {
    return invalidArgument("offsets has " + std::to_string(count) + " entries for " + std::to_string(bags) + " bags");
  }
  std::vector<int64_t> bounds(static_cast<size_t>(bags) + 1);
  int64_t prev = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = readIndex(off, at + i);
    if (v < prev || v > len) {
      return invalidArgument("offsets[" + std::to_string(i) + "] = " + std::to_string(v) +
                             ": offsets must be non-decreasing and within [0, " + std::to_string(len) +
                             "] (the number of indices)");
    }
    bounds[static_cast<size_t>(i)] = prev = v;
  }
  if (!includeLast) bounds[static_cast<size_t>(bags)] = len;
  return bounds;
}

StatusOr<EmbeddingTable> tableOf(const Graph& g, ValueId v) {
  const TensorType& t = g.type(v);
  if (t.dtype != DType::kF32 || t.rank() != 2 || isSymbolic(t.dims[1])) {
    return unsupported("table '" + g.value(v).name + "' is " + g.typeString(t) + ", not f32 [rows, dim]");
  }
  if (const Tensor* c = g.constant(v)) return EmbeddingTable::fromConstant(*c, g.value(v).mir.storage);
  return EmbeddingTable::fromValue(v, t.dims[1]);
}

// Rows [r0, r1) of a one-id-per-bag lookup: for each bag row, one row of
// every table copied to its columns (the output row is written in order;
// widths of one vector or a few take constant-size copies). False on an
// out-of-range id.
template <typename Id>
[[gnu::always_inline]] inline bool copyRowsAs(const Lookup::Bound& b, const Id* ids, int64_t r0, int64_t r1,
                                              float* out, int64_t ld) {
  const Lookup::Bound::RowCopy* tables = b.copies.data();
  const size_t count = b.copies.size();
  for (int64_t r = r0; r < r1; ++r) {
    const Id* idr = ids + r * b.idStride;
    float* y = out + (r - r0) * ld;
    for (size_t t = 0; t < count; ++t) {
      const Lookup::Bound::RowCopy& c = tables[t];
      const auto id = static_cast<int64_t>(idr[c.slot]);
      if (static_cast<uint64_t>(id) >= static_cast<uint64_t>(c.rows)) return false;
      const float* src = c.data + id * c.dim;
      float* dst = y + c.column;
      switch (c.dim) {
        case 1:
          *dst = *src;
          break;
        case 4:
          std::memcpy(dst, src, 4 * sizeof(float));
          break;
        case 8:
          std::memcpy(dst, src, 8 * sizeof(float));
          break;
        case 16:
          std::memcpy(dst, src, 16 * sizeof(float));
          break;
        case 32:
          std::memcpy(dst, src, 32 * sizeof(float));
          break;
        case 64:
          std::memcpy(dst, src, 64 * sizeof(float));
          break;
        default:
          std::memcpy(dst, src, static_cast<size_t>(c.dim) * sizeof(float));
      }
    }
  }
  return true;
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) bool copyRows(
    const Lookup::Bound& b, const void* ids, bool ids32, int64_t r0, int64_t r1, float* out, int64_t ld) {
  return ids32 ? copyRowsAs(b, static_cast<const int32_t*>(ids), r0, r1, out, ld)
               : copyRowsAs(b, static_cast<const int64_t*>(ids), r0, r1, out, ld);
}

}  // namespace

StatusOr<Lookup> Lookup::compile(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  Lookup l;
  l.op_ = n.op;
  l.name_ = n.name;
  l.output_ = n.outputs[0];
  std::vector<ValueId> tables;
  std::vector<int64_t> slots;
  if (n.op == OpKind::kGather) {
    int64_t axis = intAttr(n, "axis");
    if (g.type(n.inputs[0]).rank() != 2 || (axis != 0 && axis != -2)) {
      return unsupported("only a Gather along axis 0 of a 2-D table is a lookup");
    }
    tables = {n.inputs[0]};
    l.ids_ = n.inputs[1];
  } else if (n.op == OpKind::kEmbeddingBag) {
    tables = {n.inputs[0]};
    l.ids_ = n.inputs[1];
    if (n.inputs.size() > 2) l.offsets_ = n.inputs[2];
    if (n.inputs.size() > 3) l.weights_ = n.inputs[3];
  } else if (n.op == OpKind::kEmbeddingBags) {
    auto count = static_cast<size_t>(intAttr(n, "num_tables"));
    tables.assign(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(count));
    l.ids_ = n.inputs[count];
    if (n.inputs.size() > count + 1) l.offsets_ = n.inputs[count + 1];
    slots = intsAttr(n, "slots");
  } else {
    return unsupported(std::string(opInfo(n.op).name) + " is not a lookup");
  }
  if (n.op != OpKind::kGather) {
    CAGR_ASSIGN_OR_RETURN(l.mode_, parsePoolMode(stringAttr(n, "mode")));
    l.includeLast_ = intAttr(n, "include_last_offset") != 0;
  }
  if (!isIndex(g.type(l.ids_).dtype) || (l.offsets_ != kNoValue && !isIndex(g.type(l.offsets_).dtype))) {
    return unsupported("ids and offsets must be i64 or i32");
  }
  if (l.weights_ != kNoValue && g.type(l.weights_).dtype != DType::kF32) return unsupported("weights must be f32");
  if (g.type(l.output_).dtype != DType::kF32) return unsupported("the output must be f32");
  for (size_t t = 0; t < tables.size(); ++t) {
    CAGR_ASSIGN_OR_RETURN(EmbeddingTable table, tableOf(g, tables[t]));
    int64_t slot = slots.empty() ? static_cast<int64_t>(t) : slots[t];
    l.tables_.push_back(TableUse{std::move(table), slot, l.width_});
    l.width_ += l.tables_.back().table.dim();
  }
  return l;
}

std::string Lookup::where() const {
  return "node '" + name_ + "' (" + opInfo(op_).name + ")";
}

std::string Lookup::label() const {
  std::set<std::string> reduced;
  for (const TableUse& t : tables_) {
    if (t.table.storage() != Precision::kF32) reduced.insert(precisionName(t.table.storage()));
  }
  std::string out = opInfo(op_).mnemonic;
  if (reduced.empty()) return out;
  out += "[";
  for (const std::string& r : reduced) out += (out.back() == '[' ? "" : ",") + r;
  return out + "]";
}

void Lookup::bindFixed(const Buffer& ids, Bound& b) const {
  int64_t slots = 1, pooling = 1;
  if (op_ == OpKind::kGather) {
    b.rows = ids.numel();
  } else {
    b.rows = ids.shape.empty() ? 0 : ids.shape[0];
    if (op_ == OpKind::kEmbeddingBag) pooling = ids.shape.size() > 1 ? ids.shape[1] : 1;
    if (op_ == OpKind::kEmbeddingBags) {
      slots = ids.shape.size() > 1 ? ids.shape[1] : 1;
      pooling = ids.shape.size() > 2 ? ids.shape[2] : 1;
    }
  }
  for (size_t t = 0; t < tables_.size(); ++t) {
    BagJob& j = b.jobs[t];
    j.first = tables_[t].slot * pooling;
    j.stride = slots * pooling;
    j.pooling = pooling;
  }
}

Status Lookup::bindBounds(const Buffer& ids, const Buffer& offsets, Bound& b) const {
  if (op_ == OpKind::kEmbeddingBag) {
    int64_t count = offsets.numel();
    b.rows = count - (includeLast_ ? 1 : 0);
    b.bounds.resize(1);
    CAGR_ASSIGN_OR_RETURN(b.bounds[0], bagBounds(offsets, 0, count, ids.numel(), b.rows, includeLast_));
    return Status::ok();
  }
  int64_t numSlots = ids.shape[0], len = ids.shape[1], count = offsets.shape[1];
  if (offsets.shape[0] != numSlots) return invalidArgument("indices and offsets disagree on the number of slots");
  b.rows = count - (includeLast_ ? 1 : 0);
  b.bounds.resize(static_cast<size_t>(numSlots));
  size_t es = dtypeSize(ids.dtype);
  for (size_t t = 0; t < tables_.size(); ++t) {
    int64_t slot = tables_[t].slot;
    b.jobs[t].ids = ids.data + static_cast<size_t>(slot * len) * es;
    auto& bounds = b.bounds[static_cast<size_t>(slot)];
    if (!bounds.empty()) continue;
    auto got = bagBounds(offsets, slot * count, count, len, b.rows, includeLast_);
    if (!got.isOk()) return got.status().withContext("slot " + std::to_string(slot));
    bounds = std::move(got).value();
  }
  return Status::ok();
}

StatusOr<Lookup::Bound> Lookup::bind(const RunContext& ctx) const {
  Bound b;
  const Buffer& ids = ctx.buffer(ids_);
  for (const TableUse& t : tables_) {
    BagJob j;
    if (t.table.isConstant()) {
      j.table = t.table.view();
    } else {
      const Buffer& tb = ctx.buffer(t.table.value());
      j.table = t.table.view(tb.as<float>(), tb.shape[0]);
    }
    j.ids = ids.data;
    j.ids32 = ids.dtype == DType::kI32;
    j.weights = weights_ != kNoValue ? ctx.buffer(weights_).as<float>() : nullptr;
    j.mode = mode_;
    j.wrapNegative = op_ == OpKind::kGather;
    b.jobs.push_back(j);
  }
  if (offsets_ == kNoValue) {
    bindFixed(ids, b);
  } else {
    Status st = bindBounds(ids, ctx.buffer(offsets_), b);
    if (!st.isOk()) return st.withContext(where());
  }
  // Floats written plus read, roughly: each slot's ids read one row per table.
  std::set<int64_t> slots;
  for (const TableUse& t : tables_) slots.insert(t.slot);
  b.work = b.rows * width_ + ids.numel() * width_ / static_cast<int64_t>(std::max<size_t>(1, slots.size()));
  bool copies = op_ == OpKind::kEmbeddingBags && offsets_ == kNoValue && weights_ == kNoValue &&
                ids.shape.size() == 2 && b.rows > 0 && ids.numel() == b.rows * ids.shape[1];
  for (size_t t = 0; t < tables_.size() && copies; ++t) {
    copies = b.jobs[t].table.storage == Precision::kF32 && b.jobs[t].pooling == 1;
  }
  if (copies) {
    b.idStride = ids.shape[1];
    for (size_t t = 0; t < tables_.size(); ++t) {
      const TableView& v = b.jobs[t].table;
      b.copies.push_back({static_cast<const float*>(v.data), v.rows, v.dim, tables_[t].slot, tables_[t].column});
    }
  }
  return b;
}

BagJob Lookup::jobFor(const Bound& b, size_t t) const {
  BagJob j = b.jobs[t];
  if (!b.bounds.empty()) j.bounds = b.bounds[b.bounds.size() == 1 ? 0 : static_cast<size_t>(tables_[t].slot)].data();
  return j;
}

bool Lookup::compute(const Bound& b, int64_t r0, int64_t r1, float* out, int64_t ld) const {
  if (!b.copies.empty()) return copyRows(b, b.jobs[0].ids, b.jobs[0].ids32, r0, r1, out, ld);
  for (size_t t = 0; t < tables_.size(); ++t) {
    BagJob j = jobFor(b, t);
    j.begin = r0;
    j.end = r1;
    j.out = out + tables_[t].column;
    j.ldOut = ld;
    if (poolBags(j) >= 0) return false;
  }
  return true;
}

Status Lookup::outOfRange(size_t t, int64_t bag, int64_t p, int64_t id, int64_t rows) const {
  std::string msg = where() + ": ";
  if (tables_.size() > 1) msg += "table " + std::to_string(t) + " (slot " + std::to_string(tables_[t].slot) + "): ";
  msg += "indices[" + std::to_string(p) + "] = " + std::to_string(id) + " (bag " + std::to_string(bag) + ")";
  msg += " is out of range [" + std::to_string(op_ == OpKind::kGather ? -rows : 0) + ", ";
  msg += std::to_string(rows - 1) + "] for a table of " + std::to_string(rows) + " rows";
  return invalidArgument(msg);
}

Status Lookup::badIdError(const Bound& b) const {
  for (size_t t = 0; t < tables_.size(); ++t) {
    BagJob j = jobFor(b, t);
    const int64_t rows = j.table.rows, lowest = op_ == OpKind::kGather ? -rows : 0;
    for (int64_t bag = 0; bag < b.rows; ++bag) {
      int64_t lo, hi;
      bagRange(j, bag, lo, hi);
      for (int64_t p = lo; p < hi; ++p) {
        int64_t id = idAt(j, p);
        if (id < lowest || id >= rows) return outOfRange(t, bag, p, id, rows);
      }
    }
  }
  return internalError(where() + ": a lookup failed without an out-of-range id");
}

}  // namespace cagr::cpu
