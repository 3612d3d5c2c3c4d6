// Interaction / FM groups as one pass over tiles of samples. At compile time
// the group is mapped onto at most three rows per sample: X (the [F, D]
// input: pieces looked up, copied from outside, or concatenated), R (the
// interaction's output) and J (the joining concat's output); every member
// value is a column span of one of them, so writes and precision rounding
// are copies / passes over spans, and views cost nothing.
#include "backends/cpu/rec_fused.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>

#include "backends/cpu/rec_kernels.h"
#include "backends/cpu/rec_lookup.h"
#include "backends/cpu/rec_tail.h"
#include "cagr/mir.h"
#include "ir/op_table.h"
#include "lower/op_sets.h"

namespace cagr::cpu {
namespace {

// Floats of one tile's rows (X, R and J): they stay in L2 between the stages.
constexpr int64_t kTileFloats = 32768;
// Below this many row floats per run one thread does it all (a fork / join
// costs more than the work).
constexpr int64_t kParallelWork = int64_t{1} << 17;

enum class RowId : uint8_t { kX, kRec, kJoin };

struct Piece {
  enum class Kind : uint8_t { kLookup, kExternal, kRec, kSpan };
  Kind kind = Kind::kExternal;
  int64_t column = 0, width = 0;
  int lookup = -1;           // kLookup: index into the plan's lookups
  int64_t perSample = 1;     // kLookup: lookup rows per sample
  ValueId value = kNoValue;  // kExternal
  std::string name;          // kExternal: the value's name, for errors
  int64_t from = 0;          // kSpan: first column in X
};

struct Row {
  std::vector<Piece> pieces;
  int64_t width = 0;
};

struct Span {
  RowId row = RowId::kX;
  int64_t c0 = 0, c1 = 0;
};

struct GroupPlan {
  std::vector<Lookup> lookups;
  Row x, join;
  std::map<ValueId, Span> spans;                     // every member value
  std::vector<std::pair<Span, Precision>> rounding;  // reduced-storage member values, graph order
  OpKind op = OpKind::kInteraction;
  int64_t fields = 0, dim = 0, recWidth = 0;
  bool self = false, reduce = true;
};

// Maps the group's values onto the rows (compile time).
class Analyzer {
 public:
  Analyzer(const Graph& g, const std::vector<NodeId>& members, NodeId rec, GroupPlan& p)
      : g_(g), members_(members), rec_(rec), p_(p) {}

  Status run() {
    const Node& r = g_.node(rec_);
    const TensorType& t = g_.type(r.inputs[0]);
    if (t.dtype != DType::kF32 || t.rank() != 3 || isSymbolic(t.dims[1]) || isSymbolic(t.dims[2])) {
      return unsupported("the input of '" + r.name + "' is not f32 [B, F, D] with static F and D");
    }
    batch_ = t.dims[0];
    p_.op = r.op;
    p_.fields = t.dims[1];
    p_.dim = t.dims[2];
    p_.self = r.op == OpKind::kInteraction && intAttr(r, "self_interaction") != 0;
    p_.reduce = r.op == OpKind::kFM && intAttr(r, "reduce") != 0;
    p_.recWidth = r.op == OpKind::kInteraction ? interactionWidth(p_.fields, p_.self) : (p_.reduce ? 1 : p_.dim);
    CAGR_RETURN_IF_ERROR(resolve(r.inputs[0], RowId::kX, p_.x));
    p_.spans[r.outputs[0]] = Span{RowId::kRec, 0, p_.recWidth};
    for (NodeId m : members_) {
      if (m > rec_ && g_.node(m).op == OpKind::kConcat) {
        CAGR_RETURN_IF_ERROR(resolve(g_.node(m).outputs[0], RowId::kJoin, p_.join));
      }
    }
    return coverMembers();
  }

 private:
  bool member(NodeId n) const { return std::find(members_.begin(), members_.end(), n) != members_.end(); }

  // Views nothing else reached take their input's span; any other member
  // left out means the group is not rows of this kernel.
  Status coverMembers() {
    for (NodeId m : members_) {
      const Node& n = g_.node(m);
      for (ValueId v : n.outputs) {
        if (!p_.spans.count(v)) {
          auto in = p_.spans.find(n.inputs[0]);
          if (!ops::in(ops::kViews, n.op) || in == p_.spans.end()) {
            return unsupported("'" + n.name + "' is not part of the kernel's rows");
          }
          p_.spans[v] = in->second;
        }
        Precision s = g_.value(v).mir.storage;
        if (s != Precision::kF32) p_.rounding.emplace_back(p_.spans[v], s);
      }
    }
    return Status::ok();
  }

  static void append(Row& row, Piece pc) {
    pc.column = row.width;
    row.width += pc.width;
    row.pieces.push_back(pc);
  }

  Status resolve(ValueId v, RowId id, Row& row) {
    const std::string name = "'" + g_.value(v).name + "'";
    if (auto it = p_.spans.find(v); it != p_.spans.end()) {
      const Span& s = it->second;
      if (id != RowId::kJoin || s.row == RowId::kJoin) return unsupported(name + " appears twice in one row");
      Piece pc;
      pc.kind = s.row == RowId::kRec ? Piece::Kind::kRec : Piece::Kind::kSpan;
      pc.width = s.c1 - s.c0;
      pc.from = s.c0;
      append(row, pc);
      return Status::ok();
    }
    const TensorType& t = g_.type(v);
    if (t.dtype != DType::kF32 || t.rank() < 1 || t.dims[0] != batch_) {
      return unsupported(name + " is not a batch-major f32 value like the kernel's input");
    }
    int64_t width = 1;
    for (size_t k = 1; k < t.dims.size(); ++k) {
      if (isSymbolic(t.dims[k])) return unsupported(name + " has a symbolic trailing dim");
      width *= t.dims[k];
    }
    int64_t c0 = row.width;
    NodeId producer = g_.value(v).producer;
    if (producer >= 0 && member(producer)) {
      CAGR_RETURN_IF_ERROR(resolveMember(producer, width, id, row));
    } else {
      if (g_.isConstant(v)) return unsupported(name + " is a constant");
      Piece pc;
      pc.kind = Piece::Kind::kExternal;
      pc.width = width;
      pc.value = v;
      pc.name = g_.value(v).name;
      append(row, pc);
    }
    if (row.width - c0 != width) return unsupported(name + " does not map onto whole rows");
    p_.spans[v] = Span{id, c0, row.width};
    return Status::ok();
  }

  Status resolveMember(NodeId id, int64_t width, RowId rowId, Row& row) {
    const Node& n = g_.node(id);
    if (ops::in(ops::kViews, n.op)) return resolve(n.inputs[0], rowId, row);
    if (n.op == OpKind::kConcat) {
      int64_t axis = intAttr(n, "axis");
      if (axis < 0) axis += g_.type(n.outputs[0]).rank();
      if (axis != 1) return unsupported("'" + n.name + "' does not concatenate along axis 1");
      for (ValueId in : n.inputs) {
        CAGR_RETURN_IF_ERROR(resolve(in, rowId, row));
      }
      return Status::ok();
    }
    if (!ops::in(ops::kLookups, n.op)) {
      return unsupported(std::string(opInfo(n.op).name) + " cannot be part of the kernel");
    }
    CAGR_ASSIGN_OR_RETURN(Lookup l, Lookup::compile(g_, id));
    if (l.width() <= 0 || width % l.width() != 0) return unsupported("'" + n.name + "' rows do not tile the sample");
    Piece pc;
    pc.kind = Piece::Kind::kLookup;
    pc.width = width;
    pc.lookup = static_cast<int>(p_.lookups.size());
    pc.perSample = width / l.width();
    append(row, pc);
    p_.lookups.push_back(std::move(l));
    return Status::ok();
  }

  const Graph& g_;
  const std::vector<NodeId>& members_;
  NodeId rec_;
  GroupPlan& p_;
  Dim batch_ = 0;
};

// One run's bindings.
struct Bindings {
  int64_t batch = 0;
  std::vector<Lookup::Bound> bounds;
  std::map<ValueId, const float*> inputs;
  std::vector<float*> out;  // per write
};

// One thread's tile buffers.
struct Tile {
  int64_t b0 = 0, count = 0;
  const float* x = nullptr;
  float* rec = nullptr;  // rows recLd apart (inside the J row when it is computed there)
  int64_t recLd = 0;
  float* join = nullptr;
  std::vector<float> xBuf, recBuf, joinBuf, scratch;
};

class RecGroupStep : public Step {
 public:
  RecGroupStep(GroupPlan p, std::vector<ValueId> writes, std::string name)
      : p_(std::move(p)), writes_(std::move(writes)), name_(std::move(name)) {
    for (ValueId w : writes_) spans_.push_back(p_.spans.at(w));
    const Span& first = spans_.front();
    const bool one = writes_.size() == 1;
    directRec_ = one && first.row == RowId::kRec;
    directJoin_ = one && first.row == RowId::kJoin && first.c0 == 0 && first.c1 == p_.join.width;
    bool recWritten = std::any_of(spans_.begin(), spans_.end(), [](const Span& w) { return w.row == RowId::kRec; });
    for (const Piece& pc : p_.join.pieces) {
      if (pc.kind == Piece::Kind::kRec && !recWritten) recColumn_ = pc.column;
    }
    bool roundsX =
        std::any_of(p_.rounding.begin(), p_.rounding.end(), [](const auto& r) { return r.first.row == RowId::kX; });
    directX_ = p_.x.pieces.size() == 1 && p_.x.pieces[0].kind == Piece::Kind::kExternal && !roundsX;
    perSample_ = p_.x.width + p_.recWidth + p_.join.width;
    tileSamples_ = std::clamp<int64_t>(kTileFloats / std::max<int64_t>(perSample_, 1), 1, 256);
  }

  std::string kernelName() const override { return name_; }
  std::vector<ValueId> writes() const override { return writes_; }
  Status run(const RunContext& ctx) const override;

 private:
  StatusOr<Bindings> bind(const RunContext& ctx) const;
  bool fill(const Row& row, const Bindings& bd, Tile& t, float* dst, int& bad) const;
  bool runTile(const Bindings& bd, Tile& t, int& bad) const;
  void roundSpans(RowId row, float* base, int64_t ld, int64_t count) const;
  const float* rowBase(RowId r, const Tile& t, int64_t& ld) const;

  GroupPlan p_;
  std::vector<ValueId> writes_;
  std::vector<Span> spans_;  // per write
  std::string name_;
  // Rows computed in place: R / J straight into the one written buffer, R
  // inside J at recColumn_ (>= 0) when R is not written on its own, X read
  // from the one input it copies.
  bool directRec_ = false, directJoin_ = false, directX_ = false;
  int64_t recColumn_ = -1;
  int64_t perSample_ = 0;  // floats of the three rows of one sample
  int64_t tileSamples_ = 1;
};

Status checkRows(const Buffer& b, int64_t rows, int64_t width, const std::string& what) {
  if (b.numel() == rows * width && (b.shape.empty() || b.shape[0] == rows)) return Status::ok();
  return invalidArgument(what + " has " + std::to_string(b.numel()) + " elements, expected " + std::to_string(rows) +
                         " rows of " + std::to_string(width));
}

StatusOr<Bindings> RecGroupStep::bind(const RunContext& ctx) const {
  Bindings bd;
  bd.batch = ctx.buffer(writes_.front()).shape.at(0);
  for (size_t w = 0; w < writes_.size(); ++w) {
    bd.out.push_back(ctx.buffer(writes_[w]).as<float>());
    CAGR_RETURN_IF_ERROR(checkRows(ctx.buffer(writes_[w]), bd.batch, spans_[w].c1 - spans_[w].c0, "an output"));
  }
  for (const Row* row : {&p_.x, &p_.join}) {
    for (const Piece& pc : row->pieces) {
      if (pc.kind != Piece::Kind::kExternal) continue;
      const Buffer& b = ctx.buffer(pc.value);
      CAGR_RETURN_IF_ERROR(checkRows(b, bd.batch, pc.width, "value '" + pc.name + "'"));
      bd.inputs[pc.value] = b.as<float>();
    }
  }
  for (const Lookup& l : p_.lookups) {
    CAGR_ASSIGN_OR_RETURN(Lookup::Bound b, l.bind(ctx));
    bd.bounds.push_back(std::move(b));
  }
  for (const Row* row : {&p_.x, &p_.join}) {
    for (const Piece& pc : row->pieces) {
      if (pc.kind != Piece::Kind::kLookup) continue;
      int64_t rows = bd.bounds[static_cast<size_t>(pc.lookup)].rows;
      if (rows != bd.batch * pc.perSample) {
        return invalidArgument(p_.lookups[static_cast<size_t>(pc.lookup)].where() + " gives " + std::to_string(rows) +
                               " rows for a batch of " + std::to_string(bd.batch));
      }
    }
  }
  return bd;
}

// Copies `count` rows of `width` floats (strides ldSrc / ldDst).
void copyRows(const float* src, int64_t ldSrc, float* dst, int64_t ldDst, int64_t count, int64_t width) {
  for (int64_t t = 0; t < count; ++t) {
    std::memcpy(dst + t * ldDst, src + t * ldSrc, static_cast<size_t>(width) * sizeof(float));
  }
}

bool RecGroupStep::fill(const Row& row, const Bindings& bd, Tile& t, float* dst, int& bad) const {
  const int64_t ld = row.width;
  for (const Piece& pc : row.pieces) {
    float* at = dst + pc.column;
    switch (pc.kind) {
      case Piece::Kind::kExternal:
        copyRows(bd.inputs.at(pc.value) + t.b0 * pc.width, pc.width, at, ld, t.count, pc.width);
        break;
      case Piece::Kind::kRec:
        if (at != t.rec) copyRows(t.rec, t.recLd, at, ld, t.count, pc.width);
        break;
      case Piece::Kind::kSpan:
        copyRows(t.x + pc.from, p_.x.width, at, ld, t.count, pc.width);
        break;
      case Piece::Kind::kLookup: {
        const Lookup& l = p_.lookups[static_cast<size_t>(pc.lookup)];
        const Lookup::Bound& b = bd.bounds[static_cast<size_t>(pc.lookup)];
        bool ok = true;
        if (pc.perSample == 1) {
          ok = l.compute(b, t.b0, t.b0 + t.count, at, ld);
        } else {
          for (int64_t s = 0; s < t.count && ok; ++s) {
            int64_t r0 = (t.b0 + s) * pc.perSample;
            ok = l.compute(b, r0, r0 + pc.perSample, at + s * ld, l.width());
          }
        }
        if (!ok) {
          bad = pc.lookup;
          return false;
        }
        break;
      }
    }
  }
  return true;
}

void RecGroupStep::roundSpans(RowId row, float* base, int64_t ld, int64_t count) const {
  for (const auto& [span, precision] : p_.rounding) {
    if (span.row != row) continue;
    for (int64_t t = 0; t < count; ++t) roundInPlace(base + t * ld + span.c0, span.c1 - span.c0, precision);
  }
}

const float* RecGroupStep::rowBase(RowId r, const Tile& t, int64_t& ld) const {
  switch (r) {
    case RowId::kX:
      ld = p_.x.width;
      return t.x;
    case RowId::kRec:
      ld = t.recLd;
      return t.rec;
    default:
      ld = p_.join.width;
      return t.join;
  }
}

bool RecGroupStep::runTile(const Bindings& bd, Tile& t, int& bad) const {
  if (directX_) {
    t.x = bd.inputs.at(p_.x.pieces[0].value) + t.b0 * p_.x.width;
  } else {
    if (!fill(p_.x, bd, t, t.xBuf.data(), bad)) return false;
    roundSpans(RowId::kX, t.xBuf.data(), p_.x.width, t.count);
    t.x = t.xBuf.data();
  }
  t.join = directJoin_ ? bd.out[0] + t.b0 * p_.join.width : t.joinBuf.data();
  if (recColumn_ >= 0) {
    t.rec = t.join + recColumn_;
    t.recLd = p_.join.width;
  } else {
    t.rec = directRec_ ? bd.out[0] + t.b0 * p_.recWidth : t.recBuf.data();
    t.recLd = p_.recWidth;
  }
  if (p_.op == OpKind::kInteraction) {
    interactionRows(t.x, t.count, p_.x.width, p_.fields, p_.dim, p_.self, t.rec, t.recLd, t.scratch.data());
  } else {
    fmRows(t.x, t.count, p_.x.width, p_.fields, p_.dim, p_.reduce, t.rec, t.recLd);
  }
  roundSpans(RowId::kRec, t.rec, t.recLd, t.count);
  if (!p_.join.pieces.empty()) {
    if (!fill(p_.join, bd, t, t.join, bad)) return false;
    roundSpans(RowId::kJoin, t.join, p_.join.width, t.count);
  }
  for (size_t w = directRec_ || directJoin_ ? 1 : 0; w < writes_.size(); ++w) {
    int64_t ld = 0, width = spans_[w].c1 - spans_[w].c0;
    const float* base = rowBase(spans_[w].row, t, ld);
    copyRows(base + spans_[w].c0, ld, bd.out[w] + t.b0 * width, width, t.count, width);
  }
  return true;
}

Status RecGroupStep::run(const RunContext& ctx) const {
  CAGR_ASSIGN_OR_RETURN(Bindings bd, bind(ctx));
  const int64_t tiles = (bd.batch + tileSamples_ - 1) / tileSamples_;
  std::atomic<int> bad{-1};
#pragma omp parallel num_threads(ctx.threads()) if (tiles > 1 && bd.batch * perSample_ >= kParallelWork)
  {
    Tile t;
    t.xBuf.resize(static_cast<size_t>(tileSamples_ * p_.x.width));
    t.recBuf.resize(static_cast<size_t>(tileSamples_ * p_.recWidth));
    t.joinBuf.resize(static_cast<size_t>(tileSamples_ * p_.join.width));
    t.scratch.resize(static_cast<size_t>(interactionScratchFloats(p_.fields, p_.dim)));
#pragma omp for schedule(static)
    for (int64_t k = 0; k < tiles; ++k) {
      t.b0 = k * tileSamples_;
      t.count = std::min(tileSamples_, bd.batch - t.b0);
      int which = -1;
      if (bad.load(std::memory_order_relaxed) < 0 && !runTile(bd, t, which)) bad.store(which);
    }
  }
  int which = bad.load();
  if (which >= 0) return p_.lookups[static_cast<size_t>(which)].badIdError(bd.bounds[static_cast<size_t>(which)]);
  return Status::ok();
}

std::string describe(const GroupPlan& p, const char* kernel) {
  std::string out = kernel;
  if (!p.lookups.empty()) {
    std::set<std::string> labels;
    for (const Lookup& l : p.lookups) labels.insert(l.label());
    std::string list;
    for (const std::string& s : labels) list += (list.empty() ? "" : ",") + s;
    out += "+" + std::to_string(p.lookups.size()) + "x" + list;
  }
  if (!p.join.pieces.empty()) out += "+concat";
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<Step>> makeInteractionStep(const StepRequest& r) {
  if (r.shape.pattern != Pattern::kInteraction && r.shape.pattern != Pattern::kFM) {
    return unsupported("not an interaction / FM group");
  }
  const char* kernel = r.shape.pattern == Pattern::kInteraction ? "own.interaction" : "own.fm";
  if (r.kernel != 0 && std::string(kernelInfo(r.kernel).name) != kernel) {
    return unsupported(std::string("the plan names ") + kernelInfo(r.kernel).name);
  }
  if (r.outputs.empty()) return unsupported("the group writes nothing");
  GroupPlan p;
  CAGR_RETURN_IF_ERROR(Analyzer(r.g, r.members, r.shape.anchor, p).run());
  std::string name = describe(p, kernel);
  return std::unique_ptr<Step>(std::make_unique<RecGroupStep>(std::move(p), r.outputs, std::move(name)));
}

}  // namespace cagr::cpu
