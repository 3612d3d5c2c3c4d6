// The CPU data-movement step: Concat, Split, Slice, Transpose, Expand, Gather
// and GatherND as single nodes. Concat / Split copy whole row blocks
// (fixed-size copies for the narrow blocks recommendation models stack);
// Slice, Transpose and Expand are one coalesced strided copy; Gather and
// GatherND check every index first (the reference's errors), then copy rows
// or single elements. Large copies are split over threads. A Concat (in
// place or not) copies only the inputs whose producers could not write into
// its buffer themselves (the engine asks them: Step::placeOutput).
// Any element type; indices i64 or i32.
#include <algorithm>
#include <cstring>

#include "backends/cpu/eltwise_program.h"
#include "backends/cpu/eltwise_steps.h"
#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "runtime/reference/kernel_util.h"

namespace cagr::cpu {
namespace {

// What one movement kernel gets: the node, its operands' data (and buffers
// for shapes) and its output buffers.
struct Args {
  const Node& n;
  std::vector<const std::byte*> in;
  std::vector<const Buffer*> inBuf;
  std::vector<const Buffer*> out;
  int threads;
  std::vector<int64_t> skip;  // Concat: > 0 for an input already in place (its extent along the axis; not read)
};

void copyBlock(std::byte* dst, const std::byte* src, int64_t bytes) {
  switch (bytes) {  // constant sizes compile to plain moves
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    case 16:
      std::memcpy(dst, src, 16);
      return;
    case 32:
      std::memcpy(dst, src, 32);
      return;
    case 64:
      std::memcpy(dst, src, 64);
      return;
    default:
      std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
}

StatusOr<size_t> axisOf(const Node& n, size_t rank) {
  int64_t axis = intAttr(n, "axis");
  auto ax = normAxis(axis, static_cast<int64_t>(rank));
  if (!ax) return invalidArgument("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(*ax);
}

// Concat and Split move the same blocks: row o of piece k is bytes
// [pos_k, pos_k + chunk_k) of row o of the whole tensor.
struct Piece {
  std::byte* data;
  int64_t chunk, pos;
};

Status movePieces(std::byte* whole, int64_t pitch, int64_t outer, const std::vector<Piece>& pieces, bool intoWhole,
                  int nt) {
  return parallelChunks(outer, nt, [&](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) {
      for (const Piece& p : pieces) {
        if (p.chunk == 0) continue;
        std::byte* w = whole + o * pitch + p.pos;
        std::byte* part = p.data + o * p.chunk;
        intoWhole ? copyBlock(w, part, p.chunk) : copyBlock(part, w, p.chunk);
      }
    }
    return Status::ok();
  });
}

Status concat(const Args& a) {
  const Buffer& y = *a.out[0];
  CAGR_ASSIGN_OR_RETURN(size_t axis, axisOf(a.n, y.shape.size()));
  int64_t inner = ref::product(y.shape, axis + 1) * static_cast<int64_t>(dtypeSize(y.dtype)), pos = 0;
  std::vector<Piece> pieces;
  for (size_t k = 0; k < a.in.size(); ++k) {
    bool placed = k < a.skip.size() && a.skip[k] > 0;
    int64_t chunk = (placed ? a.skip[k] : a.inBuf[k]->shape[axis]) * inner;
    if (!placed) pieces.push_back({const_cast<std::byte*>(a.in[k]), chunk, pos});  // only read
    pos += chunk;
  }
  int64_t pitch = y.shape[axis] * inner, rows = ref::product(y.shape, 0, axis);
  for (int64_t r = 0; pos < pitch && r < rows; ++r) {  // `pad` zeros after the last operand
    std::memset(y.data + r * pitch + pos, 0, static_cast<size_t>(pitch - pos));
  }
  if (pieces.empty()) return Status::ok();
  return movePieces(y.data, y.shape[axis] * inner, ref::product(y.shape, 0, axis), pieces, true,
                    threadsFor(y.numel(), a.threads));
}

Status split(const Args& a) {
  const Buffer& x = *a.inBuf[0];
  CAGR_ASSIGN_OR_RETURN(size_t axis, axisOf(a.n, x.shape.size()));
  int64_t inner = ref::product(x.shape, axis + 1) * static_cast<int64_t>(dtypeSize(x.dtype)), pos = 0;
  int64_t pitch = x.shape[axis] * inner;
  std::vector<Piece> pieces;
  for (const Buffer* piece : a.out) {
    int64_t chunk = piece->shape[axis] * inner;
    if (pos + chunk > pitch)
      return invalidArgument("split sizes exceed the axis size " + std::to_string(x.shape[axis]));
    pieces.push_back({piece->data, chunk, pos});
    pos += chunk;
  }
  return movePieces(const_cast<std::byte*>(a.in[0]), pitch, ref::product(x.shape, 0, axis), pieces, false,
                    threadsFor(x.numel(), a.threads));
}

void copyView(const Args& a, const StridedLayout& l) {
  const Buffer& y = *a.out[0];
  copyStridedAll(a.in[0], dtypeSize(y.dtype), l, y.numel(), y.data, a.threads);
}

Status slice(const Args& a) {
  const Buffer& x = *a.inBuf[0];
  const Buffer& y = *a.out[0];
  CAGR_ASSIGN_OR_RETURN(SliceParams sp, sliceParams(a.n));
  std::vector<int64_t> strides = ref::contiguousStrides(x.shape);
  std::vector<char> seen(x.shape.size(), 0);
  int64_t start = 0, rank = static_cast<int64_t>(x.shape.size());
  for (size_t i = 0; i < sp.axes.size(); ++i) {
    auto ax = normAxis(sp.axes[i], rank);
    if (!ax || seen[static_cast<size_t>(*ax)] || sp.steps[i] == 0) {
      return invalidArgument("slice axis " + std::to_string(sp.axes[i]) + " is invalid or repeated, or its step is 0");
    }
    size_t d = static_cast<size_t>(*ax);
    seen[d] = 1;
    if (x.shape[d] == 0) continue;
    SliceRange r = normalizeSlice(sp.starts[i], sp.ends[i], sp.steps[i], x.shape[d]);
    if (r.count != y.shape[d])
      return internalError("slice of axis " + std::to_string(d) + " disagrees with its output");
    start += r.start * strides[d];
    strides[d] *= r.step;
  }
  copyView(a, coalesce(y.shape, strides, start));
  return Status::ok();
}

Status transpose(const Args& a) {
  const Buffer& x = *a.inBuf[0];
  int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> perm = intsAttr(a.n, "perm"), own = ref::contiguousStrides(x.shape), strides;
  if (perm.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  for (int64_t p : perm) {
    auto ax = normAxis(p, rank);
    if (!ax) return invalidArgument("perm entry " + std::to_string(p) + " is out of range");
    strides.push_back(own[static_cast<size_t>(*ax)]);
  }
  copyView(a, coalesce(a.out[0]->shape, strides));
  return Status::ok();
}

int64_t indexAt(const std::byte* p, DType t, int64_t i) {
  return t == DType::kI32 ? reinterpret_cast<const int32_t*>(p)[i] : reinterpret_cast<const int64_t*>(p)[i];
}

// indices[pos] wrapped into [0, dim) (negative counts from the end), or the reference's error.
StatusOr<int64_t> wrapped(const Args& a, int64_t pos, int64_t dim, size_t axis) {
  int64_t v = indexAt(a.in[1], a.inBuf[1]->dtype, pos);
  if (v >= -dim && v < dim) return v < 0 ? v + dim : v;
  return invalidArgument("indices[" + std::to_string(pos) + "] = " + std::to_string(v) + " is out of range [" +
                         std::to_string(-dim) + ", " + std::to_string(dim - 1) + "] for data axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim));
}

Status gather(const Args& a) {
  const Buffer& data = *a.inBuf[0];
  CAGR_ASSIGN_OR_RETURN(size_t axis, axisOf(a.n, data.shape.size()));
  size_t es = dtypeSize(data.dtype);
  int64_t dim = data.shape[axis], inner = ref::product(data.shape, axis + 1);
  int64_t count = a.inBuf[1]->numel(), outer = ref::product(data.shape, 0, axis);
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    CAGR_ASSIGN_OR_RETURN(rows[static_cast<size_t>(i)], wrapped(a, i, dim, axis));
  }
  if (count == 0) return Status::ok();
  std::byte* y = a.out[0]->data;
  return parallelChunks(outer * count, threadsFor(a.out[0]->numel(), a.threads), [&](int64_t lo, int64_t hi) {
    int64_t o = lo / count, i = lo % count;
    ref::visitElementBytes(es, [&](auto tag) {
      using E = decltype(tag);
      const E* src = reinterpret_cast<const E*>(a.in[0]);
      E* dst = reinterpret_cast<E*>(y);
      for (int64_t j = lo; j < hi; ++j) {
        const E* row = src + (o * dim + rows[static_cast<size_t>(i)]) * inner;
        if (inner == 1) {
          dst[j] = *row;
        } else {
          copyBlock(reinterpret_cast<std::byte*>(dst + j * inner), reinterpret_cast<const std::byte*>(row),
                    inner * static_cast<int64_t>(sizeof(E)));
        }
        if (++i == count) {
          i = 0;
          ++o;
        }
      }
    });
    return Status::ok();
  });
}

Status gatherND(const Args& a) {
  const Buffer& data = *a.inBuf[0];
  const Buffer& idx = *a.inBuf[1];
  size_t b = static_cast<size_t>(intAttr(a.n, "batch_dims")), q = idx.shape.size();
  if (q == 0 || b >= q || b > data.shape.size() ||
      !std::equal(data.shape.begin(), data.shape.begin() + static_cast<std::ptrdiff_t>(b), idx.shape.begin())) {
    return invalidArgument("the batch dims of data " + ref::shapeString(data.shape) + " and indices " +
                           ref::shapeString(idx.shape) + " differ");
  }
  int64_t depth = idx.shape[q - 1], es = static_cast<int64_t>(dtypeSize(data.dtype));
  int64_t tuples = ref::product(idx.shape, b, q - 1), rowsTotal = ref::product(idx.shape, 0, q - 1);
  int64_t block = ref::product(data.shape, b + static_cast<size_t>(depth)) * es;
  int64_t batchPitch = ref::product(data.shape, b) * es;
  std::vector<int64_t> strides = ref::contiguousStrides(data.shape), offset(static_cast<size_t>(rowsTotal));
  for (int64_t row = 0; row < rowsTotal; ++row) {
    int64_t off = (tuples == 0 ? 0 : row / tuples) * batchPitch;
    for (int64_t j = 0; j < depth; ++j) {
      size_t d = b + static_cast<size_t>(j);
      CAGR_ASSIGN_OR_RETURN(int64_t v, wrapped(a, row * depth + j, data.shape[d], d));
      off += v * strides[d] * es;
    }
    offset[static_cast<size_t>(row)] = off;
  }
  std::byte* y = a.out[0]->data;
  return parallelChunks(rowsTotal, threadsFor(a.out[0]->numel(), a.threads), [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row)
      copyBlock(y + row * block, a.in[0] + offset[static_cast<size_t>(row)], block);
    return Status::ok();
  });
}

class MovementStep : public Step {
 public:
  MovementStep(const StepRequest& r, std::vector<OperandSource> sources)
      : node_(r.g.node(r.members[0])), sources_(std::move(sources)) {
    const KernelInfo& k = kernelInfo(r.kernel);
    inPlace_ = k.pattern == Pattern::kConcatInPlace;
    for (ValueId v : node_.outputs) storage_.push_back(r.g.value(v).mir.storage);
  }

  std::string kernelName() const override {
    std::string name = inPlace_ ? "own.concat_inplace" : std::string("own.movement:") + opInfo(node_.op).mnemonic;
    size_t placed = std::count_if(skip_.begin(), skip_.end(), [](int64_t e) { return e > 0; });
    if (placed == node_.inputs.size() && inPlace_) return name;
    if (placed == 0) return inPlace_ ? name + "(copy)" : name;
    return name + "(copy " + std::to_string(node_.inputs.size() - placed) + " of " +
           std::to_string(node_.inputs.size()) + ")";
  }
  std::vector<ValueId> writes() const override { return node_.outputs; }

  bool skipInputs(const std::vector<int64_t>& extent) override {
    if (node_.op != OpKind::kConcat || extent.size() != node_.inputs.size()) return false;
    skip_ = extent;
    return true;
  }

  Status run(const RunContext& ctx) const override {
    std::vector<Tensor> keep(sources_.size());
    Args a{node_, {}, {}, {}, ctx.threads(), skip_};
    static const Buffer kNone;
    for (size_t k = 0; k < sources_.size(); ++k) {
      if (k < skip_.size() && skip_[k] > 0) {  // in place already: not read (it has no buffer)
        a.in.push_back(nullptr);
        a.inBuf.push_back(&kNone);
        continue;
      }
      CAGR_ASSIGN_OR_RETURN(const std::byte* p, sources_[k].data(ctx, keep[k]));
      a.in.push_back(p);
      a.inBuf.push_back(&ctx.buffer(node_.inputs[k]));
    }
    for (ValueId v : node_.outputs) a.out.push_back(&ctx.buffer(v));
    CAGR_RETURN_IF_ERROR(dispatch(a).withContext("node '" + node_.name + "'"));
    for (size_t i = 0; i < a.out.size(); ++i) {
      if (storage_[i] != Precision::kF32) roundTile(a.out[i]->as<float>(), a.out[i]->numel(), storage_[i]);
    }
    return Status::ok();
  }

 private:
  Status dispatch(const Args& a) const {
    switch (node_.op) {
      case OpKind::kConcat:
        return concat(a);
      case OpKind::kSplit:
        return split(a);
      case OpKind::kSlice:
        return slice(a);
      case OpKind::kTranspose:
        return transpose(a);
      case OpKind::kExpand:
        copyView(a, broadcastLayout(a.inBuf[0]->shape, a.out[0]->shape));
        return Status::ok();
      case OpKind::kGather:
        return gather(a);
      case OpKind::kGatherND:
        return gatherND(a);
      default:
        return internalError("not a movement op");
    }
  }

  Node node_;
  std::vector<OperandSource> sources_;
  std::vector<Precision> storage_;
  bool inPlace_ = false;
  std::vector<int64_t> skip_;  // in-place concat: inputs their producers wrote (extent along the axis)
};

bool isMovement(OpKind k) {
  return k == OpKind::kConcat || k == OpKind::kSplit || k == OpKind::kSlice || k == OpKind::kTranspose ||
         k == OpKind::kExpand || k == OpKind::kGather || k == OpKind::kGatherND;
}

}  // namespace

StatusOr<std::unique_ptr<Step>> makeMovementStep(const StepRequest& r) {
  const Node& n = r.g.node(r.members[0]);
  if (r.members.size() != 1 || !isMovement(n.op)) return unsupported("not a single data-movement node");
  CAGR_RETURN_IF_ERROR(checkStorableOutputs(r.g, n));
  bool indexed = n.op == OpKind::kGather || n.op == OpKind::kGatherND;
  std::vector<OperandSource> sources;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    ValueId v = n.inputs[k];
    DType t = r.g.type(v).dtype;
    if (indexed && k == 1 && t != DType::kI64 && t != DType::kI32) return unsupported("indices must be i64 or i32");
    if (!indexed && t != r.g.type(n.outputs[0]).dtype) return unsupported("operand and result element types differ");
    CAGR_ASSIGN_OR_RETURN(OperandSource s, OperandSource::make(r.g, v));
    sources.push_back(std::move(s));
  }
  return std::unique_ptr<Step>(std::make_unique<MovementStep>(r, std::move(sources)));
}

}  // namespace cagr::cpu
