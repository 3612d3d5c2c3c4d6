// The fused elementwise program (see eltwise_program.h): compile-time slot
// and instruction building with the reasons it declines, per-run shape
// binding and storage placement, and the tiled evaluation.
#include "backends/cpu/eltwise_program.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/op_table.h"
#include "lower/op_sets.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/precision.h"

namespace cagr::cpu {
namespace {

// Elements per tile: a few L1-resident tiles per live value.
constexpr int64_t kTile = 1024;
// Rows at least this long are read in place by binary ops (kRow); shorter
// ones are cheaper to expand once per tile.
constexpr int64_t kMinRow = 64;

std::string whereOf(const Node& n) {
  return "node '" + n.name + "' (" + opInfo(n.op).name + ")";
}

int64_t numelOf(const std::vector<int64_t>& shape) {
  return ref::product(shape);
}

std::vector<uint64_t> wordsFor(int64_t elements, size_t elemSize) {
  return std::vector<uint64_t>(static_cast<size_t>(elements) * elemSize / 8 + 1);
}

bool isBinaryOp(OpKind k) {
  return ops::in(ops::kBinary, k) && k != OpKind::kWhere;
}

}  // namespace

// ---- operands and storage decisions ----

StatusOr<OperandSource> OperandSource::make(const Graph& g, ValueId v) {
  OperandSource s;
  s.value_ = v;
  Precision p = g.value(v).mir.storage;
  if (p == Precision::kF32) return s;
  if (g.isConstant(v)) {
    auto t = ref::storedAs(*g.constant(v), p);
    if (!t.isOk()) return unsupported(t.status().message());
    s.stored_ = std::make_shared<const Tensor>(std::move(t).value());
  } else if (g.value(v).producer < 0) {
    if (g.type(v).dtype != DType::kF32 || p == Precision::kInt8Rowwise) {
      return unsupported("input '" + g.value(v).name + "' has a storage decision for non-f32 data");
    }
    s.roundTo_ = p;
  }
  return s;
}

StatusOr<const std::byte*> OperandSource::data(const RunContext& ctx, Tensor& keep) const {
  if (stored_) return stored_->rawData();
  const Buffer& b = ctx.buffer(value_);
  if (roundTo_ == Precision::kF32) return static_cast<const std::byte*>(b.data);
  CAGR_ASSIGN_OR_RETURN(keep, ref::storedAs(Tensor::wrap(b.dtype, b.shape, b.data), roundTo_));
  return static_cast<const std::byte*>(keep.rawData());
}

Status checkStorableOutputs(const Graph& g, const Node& n) {
  for (ValueId v : n.outputs) {
    Precision p = g.value(v).mir.storage;
    if (p != Precision::kF32 && (g.type(v).dtype != DType::kF32 || p == Precision::kInt8Rowwise)) {
      return unsupported(whereOf(n) + ": output stored as " + precisionName(p));
    }
  }
  return Status::ok();
}

std::vector<double> broadcastToDoubles(const std::byte* data, DType dtype, const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& to) {
  Tensor t(dtype, to);
  copyStrided(data, dtypeSize(dtype), broadcastLayout(shape, to), 0, t.numel(), t.rawData());
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = t.getF64(i);
  return out;
}

// ---- building ----

int EltwiseProgram::slotOf(ValueId v) const {
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s].value == v) return static_cast<int>(s);
  }
  return -1;
}

int EltwiseProgram::rootOf(int slot) const {
  while (slots_[static_cast<size_t>(slot)].aliasOf >= 0) slot = slots_[static_cast<size_t>(slot)].aliasOf;
  return slot;
}

StatusOr<int> EltwiseProgram::leafSlot(const Graph& g, ValueId v) {
  int s = slotOf(v);
  if (s >= 0) return s;
  CAGR_ASSIGN_OR_RETURN(OperandSource src, OperandSource::make(g, v));
  Slot leaf;
  leaf.value = v;
  leaf.dtype = g.type(v).dtype;
  leaf.dims = g.type(v).dims;
  leaf.source = std::make_unique<OperandSource>(std::move(src));
  slots_.push_back(std::move(leaf));
  return static_cast<int>(slots_.size() - 1);
}

StatusOr<std::unique_ptr<EltwiseProgram>> EltwiseProgram::build(const Graph& g, const std::vector<NodeId>& members,
                                                                const std::vector<ValueId>& sinks,
                                                                const std::vector<ValueId>& leaves) {
  auto p = std::make_unique<EltwiseProgram>();
  for (NodeId m : members) {
    const Node& n = g.node(m);
    if (n.outputs.size() != 1) return unsupported(whereOf(n) + " has " + std::to_string(n.outputs.size()) + " outputs");
    bool sink = std::find(sinks.begin(), sinks.end(), n.outputs[0]) != sinks.end();
    CAGR_RETURN_IF_ERROR(p->addMember(g, n, sink));
    p->names_ += (p->names_.empty() ? "" : "+") + std::string(opInfo(n.op).mnemonic);
  }
  for (ValueId v : leaves) {
    CAGR_RETURN_IF_ERROR(p->leafSlot(g, v).status());
  }
  return p;
}

Status EltwiseProgram::addMember(const Graph& g, const Node& n, bool sink) {
  if (!ops::in(ops::kEltwise | ops::kViews, n.op)) return unsupported(whereOf(n) + " is not elementwise");
  CAGR_RETURN_IF_ERROR(checkStorableOutputs(g, n));
  std::vector<int> in;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) return unsupported(whereOf(n) + " has an absent operand");
    CAGR_ASSIGN_OR_RETURN(int s, leafSlot(g, v));
    in.push_back(s);
  }
  ValueId out = n.outputs[0];
  if (ops::in(ops::kViews, n.op) && !sink && g.value(out).mir.storage == Precision::kF32) {
    Slot view;  // shares its input's storage: no instruction
    view.value = out;
    view.dtype = g.type(out).dtype;
    view.dims = g.type(out).dims;
    view.aliasOf = in[0];
    slots_.push_back(std::move(view));
    return Status::ok();
  }
  return addInstr(g, n, std::move(in), sink);
}

Status EltwiseProgram::addInstr(const Graph& g, const Node& n, std::vector<int> in, bool sink) {
  Instr ins;
  ins.where = whereOf(n);
  ValueId out = n.outputs[0];
  auto dtypeOf = [&](size_t k) { return slots_[static_cast<size_t>(in[k])].dtype; };
  ins.op.op = ops::in(ops::kViews, n.op) ? OpKind::kIdentity : n.op;
  ins.op.out = g.type(out).dtype;
  ins.op.in = dtypeOf(n.op == OpKind::kWhere ? 1 : 0);
  if (n.op == OpKind::kLeakyRelu) ins.op.a = floatAttr(n, "alpha");
  if (n.op == OpKind::kClip) {
    ins.op.a = floatAttr(n, "min");
    ins.op.b = floatAttr(n, "max");
  }
  if (n.op == OpKind::kGelu) {
    std::string approx = stringAttr(n, "approximate");
    if (approx != "none" && approx != "tanh") return unsupported(ins.where + ": approximate '" + approx + "'");
    ins.op.tanhGelu = approx == "tanh";
  }
  if (n.op == OpKind::kBatchNorm) {
    ins.eps = floatAttr(n, "epsilon");
    if (g.type(n.inputs[0]).rank() < 2) return unsupported(ins.where + ": input of rank < 2");
    for (size_t k = 1; k < in.size(); ++k) {
      if (!slots_[static_cast<size_t>(rootOf(in[k]))].source) return unsupported(ins.where + ": computed parameters");
    }
  }
  if (n.op == OpKind::kWhere && (dtypeOf(0) != DType::kBool || dtypeOf(2) != ins.op.out)) {
    return unsupported(ins.where + ": operand types");
  }
  if (isBinaryOp(n.op) && (dtypeOf(0) != ins.op.out || dtypeOf(1) != ins.op.out)) {
    return unsupported(ins.where + ": operands of different element types");
  }
  std::string why = eltOpSupport(ins.op);
  if (!why.empty()) return unsupported(ins.where + ": " + why);
  Slot s;
  s.value = out;
  s.dtype = ins.op.out;
  s.dims = g.type(out).dims;
  s.storage = g.value(out).mir.storage;
  s.producer = static_cast<int>(instrs_.size());
  s.sink = sink;
  ins.in = std::move(in);
  ins.out = static_cast<int>(slots_.size());
  slots_.push_back(std::move(s));
  instrs_.push_back(std::move(ins));
  return Status::ok();
}

// ---- per run ----

Status EltwiseProgram::bindShapes(const RunContext& ctx, Frame& f) const {
  SymbolBindings b;
  b.values.assign(static_cast<size_t>(kSymStride), -1);
  for (const Slot& s : slots_) {
    if (!s.source && !s.sink) continue;
    const Buffer& buf = ctx.buffer(s.value);
    if (buf.shape.size() != s.dims.size()) return internalError("buffer rank differs from the value's type");
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (isSymbolic(s.dims[d]))
        b.values[static_cast<size_t>(dimSymbol(s.dims[d]))] = buf.shape[d] / dimCoef(s.dims[d]);
    }
  }
  f.shape.resize(slots_.size());
  for (size_t s = 0; s < slots_.size(); ++s) {
    CAGR_ASSIGN_OR_RETURN(f.shape[s], b.resolve(slots_[s].dims));
  }
  return Status::ok();
}

Status EltwiseProgram::placeSlots(const RunContext& ctx, Frame& f) const {
  f.home.assign(slots_.size(), nullptr);
  f.kept.reserve(slots_.size());
  for (size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    if (slot.source) {
      Tensor& keep = f.kept.emplace_back();
      CAGR_ASSIGN_OR_RETURN(const std::byte* data, slot.source->data(ctx, keep));
      f.home[s] = const_cast<std::byte*>(data);  // read only
    } else if (slot.sink) {
      f.home[s] = ctx.buffer(slot.value).data;
    } else if (slot.producer >= 0 && !f.full[static_cast<size_t>(slot.producer)]) {
      f.temps.push_back(wordsFor(numelOf(f.shape[s]), dtypeSize(slot.dtype)));
      f.home[s] = reinterpret_cast<std::byte*>(f.temps.back().data());
    }
  }
  return Status::ok();
}

void EltwiseProgram::planAccess(Frame& f) const {
  f.access.assign(instrs_.size(), {});
  for (size_t i = 0; i < instrs_.size(); ++i) {
    const Instr& ins = instrs_[i];
    const std::vector<int64_t>& outShape = f.shape[static_cast<size_t>(ins.out)];
    size_t operands = ins.op.op == OpKind::kBatchNorm ? 1 : ins.in.size();
    for (size_t k = 0; k < operands; ++k) {
      const std::vector<int64_t>& shape = f.shape[static_cast<size_t>(ins.in[k])];
      Access a;
      if (numelOf(shape) == numelOf(outShape)) {
        a.mode = Access::kDirect;
      } else if (numelOf(shape) == 1 && isBinaryOp(ins.op.op)) {
        a.mode = Access::kScalar;
      } else {
        a.layout = broadcastLayout(shape, outShape);
        const StridedLayout& l = a.layout;
        bool row = l.shape.size() == 2 && l.strides[0] == 0 && l.strides[1] == 1 && l.shape[1] >= kMinRow;
        a.mode = row && isBinaryOp(ins.op.op) ? Access::kRow : Access::kExpand;
        a.row = l.shape.back();
      }
      f.access[i].push_back(std::move(a));
    }
  }
}

void EltwiseProgram::batchNormParams(const Frame& f, const Instr& ins, std::vector<double>& out) const {
  int64_t channels = f.shape[static_cast<size_t>(ins.in[0])][1];
  std::vector<std::vector<double>> p;  // scale, bias, mean, var
  for (size_t k = 1; k < 5; ++k) {
    int s = ins.in[k], r = rootOf(s);
    p.push_back(broadcastToDoubles(f.home[static_cast<size_t>(r)], slots_[static_cast<size_t>(s)].dtype,
                                   f.shape[static_cast<size_t>(s)], {channels}));
  }
  out.assign(static_cast<size_t>(3 * channels), 0.0);
  for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
    out[c] = p[2][c];
    out[static_cast<size_t>(channels) + c] = p[0][c] / std::sqrt(p[3][c] + ins.eps);
    out[static_cast<size_t>(2 * channels) + c] = p[1][c];
  }
}

StatusOr<std::unique_ptr<EltwiseProgram::Frame>> EltwiseProgram::prepare(const RunContext& ctx, ValueId space) const {
  auto f = std::make_unique<Frame>();
  CAGR_RETURN_IF_ERROR(bindShapes(ctx, *f));
  if (space != kNoValue) {
    f->total = numelOf(f->shape[static_cast<size_t>(slotOf(space))]);
  }
  for (const Instr& ins : instrs_) {
    int64_t n = numelOf(f->shape[static_cast<size_t>(ins.out)]);
    if (space == kNoValue) f->total = std::max(f->total, n);
  }
  for (const Instr& ins : instrs_) {
    int64_t n = numelOf(f->shape[static_cast<size_t>(ins.out)]);
    if (n > f->total) return internalError(ins.where + " is larger than the iteration space");
    f->full.push_back(n == f->total ? 1 : 0);
  }
  CAGR_RETURN_IF_ERROR(placeSlots(ctx, *f));
  planAccess(*f);
  f->bn.resize(instrs_.size());
  for (size_t i = 0; i < instrs_.size(); ++i) {
    if (instrs_[i].op.op == OpKind::kBatchNorm) batchNormParams(*f, instrs_[i], f->bn[i]);
  }
  CAGR_RETURN_IF_ERROR(materialise(ctx, *f));
  return f;
}

Status EltwiseProgram::materialise(const RunContext& ctx, Frame& f) const {
  for (size_t i = 0; i < instrs_.size(); ++i) {
    if (f.full[i]) continue;
    int64_t n = numelOf(f.shape[static_cast<size_t>(instrs_[i].out)]);
    CAGR_RETURN_IF_ERROR(parallelChunks(n, threadsFor(n, ctx.threads()), [&](int64_t lo, int64_t hi) -> Status {
      Scratch s = makeScratch(f);
      for (int64_t t0 = lo; t0 < hi; t0 += kTile) {
        CAGR_RETURN_IF_ERROR(runInstr(f, i, t0, std::min(kTile, hi - t0), lo, s, -1, nullptr));
      }
      return Status::ok();
    }));
  }
  return Status::ok();
}

EltwiseProgram::Scratch EltwiseProgram::makeScratch(const Frame& f) const {
  Scratch s;
  s.reg.resize(slots_.size());
  for (size_t i = 0; i < instrs_.size(); ++i) {
    size_t out = static_cast<size_t>(instrs_[i].out);
    if (f.full[i] && f.home[out] == nullptr) s.reg[out] = wordsFor(kTile, dtypeSize(slots_[out].dtype));
  }
  for (int k = 0; k < 3; ++k) s.expand.push_back(wordsFor(kTile, 8));
  return s;
}

std::byte* EltwiseProgram::slotPtr(const Frame& f, int root, int64_t t0, int64_t begin, Scratch& s, int redirect,
                                   std::byte* dst) const {
  size_t es = dtypeSize(slots_[static_cast<size_t>(root)].dtype);
  if (root == redirect) return dst + static_cast<size_t>(t0 - begin) * es;
  std::byte* home = f.home[static_cast<size_t>(root)];
  if (home != nullptr) return home + static_cast<size_t>(t0) * es;
  return reinterpret_cast<std::byte*>(s.reg[static_cast<size_t>(root)].data());
}

Status EltwiseProgram::runInstr(const Frame& f, size_t i, int64_t t0, int64_t n, int64_t begin, Scratch& s,
                                int redirect, std::byte* dst) const {
  const Instr& ins = instrs_[i];
  TileIn in[3];
  for (size_t k = 0; k < f.access[i].size(); ++k) {
    const Access& a = f.access[i][k];
    int slot = ins.in[k], root = rootOf(slot);
    if (a.mode == Access::kDirect) {
      in[k].p = slotPtr(f, root, t0, begin, s, redirect, dst);
    } else if (a.mode == Access::kScalar || a.mode == Access::kRow) {
      in[k] = TileIn{f.home[static_cast<size_t>(root)], a.mode == Access::kScalar};
    } else {
      std::byte* tile = reinterpret_cast<std::byte*>(s.expand[k].data());
      copyStrided(f.home[static_cast<size_t>(root)], dtypeSize(slots_[static_cast<size_t>(slot)].dtype), a.layout, t0,
                  n, tile);
      in[k].p = tile;
    }
  }
  std::byte* y = slotPtr(f, ins.out, t0, begin, s, redirect, dst);
  const Slot& out = slots_[static_cast<size_t>(ins.out)];
  if (ins.op.op == OpKind::kBatchNorm) {
    const std::vector<int64_t>& xs = f.shape[static_cast<size_t>(ins.in[0])];
    int64_t channels = xs[1], inner = ref::product(xs, 2);
    const double* p = f.bn[i].data();
    batchNormTile(out.dtype, in[0].p, y, n, t0, channels, inner, p, p + channels, p + 2 * channels);
  } else {
    CAGR_RETURN_IF_ERROR(runRows(ins, f.access[i], in, y, t0, n));
  }
  if (out.storage != Precision::kF32) roundTile(reinterpret_cast<float*>(y), n, out.storage);
  return Status::ok();
}

// Runs the tile in pieces that do not cross a row of any kRow operand, so
// that operand is the contiguous run row[c0, c0 + len) (one piece without one).
Status EltwiseProgram::runRows(const Instr& ins, const std::vector<Access>& access, const TileIn* in, std::byte* y,
                               int64_t t0, int64_t n) const {
  TileIn piece[3];
  for (int64_t j = 0; j < n;) {
    int64_t len = n - j;
    for (const Access& a : access) {
      if (a.mode == Access::kRow) len = std::min(len, a.row - (t0 + j) % a.row);
    }
    for (size_t k = 0; k < access.size(); ++k) {
      const Access& a = access[k];
      size_t es = dtypeSize(slots_[static_cast<size_t>(ins.in[k])].dtype);
      int64_t at = a.mode == Access::kRow ? (t0 + j) % a.row : a.mode == Access::kScalar ? 0 : j;
      piece[k] = TileIn{static_cast<const std::byte*>(in[k].p) + static_cast<size_t>(at) * es, in[k].scalar};
    }
    if (!runTile(ins.op, piece, y + static_cast<size_t>(j) * dtypeSize(ins.op.out), len)) {
      return invalidArgument("integer division by zero").withContext(ins.where);
    }
    j += len;
  }
  return Status::ok();
}

Status EltwiseProgram::evalRange(const Frame& f, int64_t begin, int64_t end, Scratch& s, ValueId redirect,
                                 std::byte* dst) const {
  int target = redirect == kNoValue ? -1 : rootOf(slotOf(redirect));
  for (int64_t t0 = begin; t0 < end; t0 += kTile) {
    int64_t n = std::min(kTile, end - t0);
    for (size_t i = 0; i < instrs_.size(); ++i) {
      if (f.full[i]) CAGR_RETURN_IF_ERROR(runInstr(f, i, t0, n, begin, s, target, dst));
    }
  }
  return Status::ok();
}

Status EltwiseProgram::run(const RunContext& ctx) const {
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Frame> f, prepare(ctx));
  if (!computesInRange(*f)) return Status::ok();
  int64_t passes = std::count(f->full.begin(), f->full.end(), 1);
  return parallelChunks(f->total, threadsFor(f->total * passes, ctx.threads()), [&](int64_t lo, int64_t hi) {
    Scratch s = makeScratch(*f);
    return evalRange(*f, lo, hi, s);
  });
}

const std::vector<int64_t>& EltwiseProgram::shapeOf(const Frame& f, ValueId v) const {
  return f.shape[static_cast<size_t>(slotOf(v))];
}

const std::byte* EltwiseProgram::dataOf(const Frame& f, ValueId v) const {
  return f.home[static_cast<size_t>(rootOf(slotOf(v)))];
}

int64_t EltwiseProgram::spaceSize(const Frame& f) const {
  return f.total;
}

bool EltwiseProgram::productOfStored(const Frame& f, ValueId v, const float*& a, const float*& b) const {
  if (instrs_.size() != 1 || !f.full[0]) return false;
  const Instr& ins = instrs_[0];
  const Slot& out = slots_[static_cast<size_t>(ins.out)];
  if (ins.op.op != OpKind::kMul || ins.op.out != DType::kF32 || out.value != v || out.sink ||
      out.storage != Precision::kF32 || f.access[0].size() != 2) {
    return false;
  }
  const std::byte* in[2];
  for (size_t k = 0; k < 2; ++k) {
    in[k] = f.home[static_cast<size_t>(rootOf(ins.in[k]))];
    if (f.access[0][k].mode != Access::kDirect || in[k] == nullptr) return false;
  }
  a = reinterpret_cast<const float*>(in[0]);
  b = reinterpret_cast<const float*>(in[1]);
  return true;
}

bool EltwiseProgram::computesInRange(const Frame& f) const {
  return std::find(f.full.begin(), f.full.end(), 1) != f.full.end();
}

}  // namespace cagr::cpu
