// The GEMM epilogue program (see gemm_epilogue.h): built once per group,
// bound to buffers per run, run over cache-sized segments; each op runs on
// the elementwise steps' tile kernels (eltwise_kernels.h), so both kinds of
// step compute every op the same way, as the reference kernels do.
#include "backends/cpu/gemm_epilogue.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/precision.h"

namespace cagr::cpu {
namespace {

constexpr int64_t kSeg = 512;  // elements per register slot: 2 KiB, L1-resident

// Element count of symbolic dims as (static factor, sorted symbols).
std::pair<int64_t, std::vector<int>> symbolicCount(const std::vector<Dim>& dims) {
  std::pair<int64_t, std::vector<int>> c{1, {}};
  for (Dim d : dims) {
    c.first *= isSymbolic(d) ? dimCoef(d) : d;
    if (isSymbolic(d)) c.second.push_back(dimSymbol(d));
  }
  std::sort(c.second.begin(), c.second.end());
  return c;
}

// Elements [i0, i0 + len) of an operand read through `pat`: a pointer into
// `data` when they are contiguous there, else gathered into `tmp`.
const float* patternSegment(const float* data, FlatPattern pat, int64_t i0, int64_t len, float* tmp) {
  if (pat.p == 1) {
    std::fill(tmp, tmp + len, data[0]);
    return tmp;
  }
  if (pat.q == 1) {
    int64_t at = i0 % pat.p;
    if (at + len <= pat.p) return data + at;
    for (int64_t t = 0; t < len; at = 0) {
      const int64_t n = std::min(len - t, pat.p - at);
      std::copy(data + at, data + at + n, tmp + t);
      t += n;
    }
    return tmp;
  }
  int64_t run = i0 / pat.q, inRun = i0 % pat.q;
  for (int64_t t = 0; t < len; inRun = 0, ++run) {
    const int64_t n = std::min(len - t, pat.q - inRun);
    std::fill(tmp + t, tmp + t + n, data[run % pat.p]);
    t += n;
  }
  return tmp;
}

EpiSrc regSrc(int r) {
  return {EpiSrc::kReg, r, 0.0f};
}
EpiSrc immSrc(double v) {
  return {EpiSrc::kImm, 0, static_cast<float>(v)};
}
EltOp eltOp(OpKind k) {
  EltOp e;
  e.op = k;
  return e;
}

}  // namespace

StatusOr<std::shared_ptr<const Tensor>> storedConstant(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.type.dtype != DType::kF32) return unsupported("constant %" + val.name + " is not f32");
  if (val.mir.storage == Precision::kF32) return g.constants()[static_cast<size_t>(val.constant)];
  CAGR_ASSIGN_OR_RETURN(Tensor t, ref::storedAs(*g.constant(v), val.mir.storage));
  return std::shared_ptr<const Tensor>(std::make_shared<Tensor>(std::move(t)));
}

std::vector<int64_t> resolveDims(const std::vector<Dim>& dims, const Symbols& s) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (Dim d : dims) out.push_back(isSymbolic(d) ? dimCoef(d) * s[static_cast<size_t>(dimSymbol(d))] : d);
  return out;
}

bool flatPattern(const std::vector<int64_t>& operand, const std::vector<int64_t>& out, bool onChannels,
                 FlatPattern& pat) {
  const int64_t count = ref::product(operand);
  if (count == 1) {
    pat = {1, 1};
    return true;
  }
  if (onChannels) {
    if (out.size() < 2 || count != out[1]) return false;
    pat = {ref::product(out, 2), count};
    return true;
  }
  if (operand.size() > out.size()) return false;
  const size_t off = out.size() - operand.size();
  int first = -1, last = -1;
  bool gap = false;
  for (size_t j = 0; j < out.size(); ++j) {
    const int64_t s = j < off ? 1 : operand[j - off];
    if (out[j] == 1) continue;
    if (s == out[j]) {
      if (gap) return false;
      if (first < 0) first = static_cast<int>(j);
      last = static_cast<int>(j);
    } else if (s == 1) {
      gap = first >= 0;
    } else {
      return false;
    }
  }
  pat = {ref::product(out, static_cast<size_t>(last) + 1),
         ref::product(out, static_cast<size_t>(first), static_cast<size_t>(last) + 1)};
  return true;
}

StatusOr<Epilogue> Epilogue::build(const Graph& g, const GemmAnchor& anchor, const std::vector<NodeId>& members,
                                   const std::vector<ValueId>& outputs) {
  Epilogue e;
  e.memberOps_.assign(members.size(), "");
  for (size_t i = 0; i < members.size(); ++i) e.memberOps_[i] = opInfo(g.node(members[i]).op).mnemonic;
  CAGR_RETURN_IF_ERROR(e.addAnchor(g, anchor));
  for (size_t i = 1; i < members.size(); ++i) CAGR_RETURN_IF_ERROR(e.addMember(g, members[i], static_cast<int>(i)));
  for (ValueId v : outputs) {
    int r = e.regFor(v);
    if (r < 0) return unsupported("group output %" + g.value(v).name + " is a view of a value from outside");
    e.outputs_.emplace_back(v, r);
  }
  return e;
}

Status Epilogue::addAnchor(const Graph& g, const GemmAnchor& a) {
  ValueId y = g.node(a.node).outputs[0];
  anchorDims_ = g.type(y).dims;
  if (g.value(y).mir.storage != Precision::kF32) return unsupported("the GEMM output has a reduced storage precision");
  int reg = 0;
  if (a.alpha != 1.0) reg = push({eltOp(OpKind::kMul), regSrc(reg), immSrc(a.alpha)});
  if (a.c != kNoValue) {
    EpiSrc c;
    if (g.isConstant(a.c)) {
      CAGR_ASSIGN_OR_RETURN(std::shared_ptr<const Tensor> data, storedConstant(g, a.c));
      if (a.beta != 1.0) {  // fold beta into the constant once
        auto scaled = std::make_shared<Tensor>(data->clone());
        for (int64_t i = 0; i < scaled->numel(); ++i) scaled->data<float>()[i] *= static_cast<float>(a.beta);
        data = scaled;
      }
      CAGR_ASSIGN_OR_RETURN(c, operand(g, a.c, anchorDims_, a.cOnChannels, data));
    } else {
      CAGR_ASSIGN_OR_RETURN(c, operand(g, a.c, anchorDims_, a.cOnChannels));
      if (a.beta != 1.0) c = regSrc(push({eltOp(OpKind::kMul), c, immSrc(a.beta)}));
    }
    reg = push({eltOp(OpKind::kAdd), regSrc(reg), c});
  }
  regOf_.emplace_back(y, reg);
  return Status::ok();
}

Status Epilogue::addMember(const Graph& g, NodeId id, int member) {
  const Node& n = g.node(id);
  const ValueId y = n.outputs[0];
  const Value& out = g.value(y);
  if (out.type.dtype != DType::kF32 || out.mir.storage != Precision::kF32) {
    return unsupported(nodeWhere(g, id) + " produces a non-f32 value");
  }
  if (symbolicCount(out.type.dims) != symbolicCount(anchorDims_)) {
    return unsupported(nodeWhere(g, id) + " changes the element count of the GEMM output");
  }
  if (ops::in(ops::kViews, n.op)) {
    if (int r = regFor(n.inputs[0]); r >= 0) {
      regOf_.emplace_back(y, r);
    } else {
      auto it = std::find_if(aliases_.begin(), aliases_.end(), [&](const auto& p) { return p.first == n.inputs[0]; });
      aliases_.emplace_back(y, it != aliases_.end() ? it->second : n.inputs[0]);
    }
    return Status::ok();
  }
  if (n.op == OpKind::kBatchNorm) return addBatchNorm(g, n, member);
  EpiInstr in{eltOp(n.op), {}, {}, -1, member};
  in.op.a = n.op == OpKind::kLeakyRelu ? n.attrs.getFloat("alpha", 0.01) : n.attrs.getFloat("min", -INFINITY);
  in.op.b = n.attrs.getFloat("max", INFINITY);
  in.op.tanhGelu = n.attrs.getString("approximate", "none") == "tanh";
  if (std::string why = eltOpSupport(in.op); !why.empty() || n.inputs.size() > 2 || n.op == OpKind::kCast) {
    return unsupported(nodeWhere(g, id) + " has no epilogue implementation" + (why.empty() ? "" : ": " + why));
  }
  CAGR_ASSIGN_OR_RETURN(in.a, operand(g, n.inputs[0], out.type.dims));
  if (n.inputs.size() > 1) {
    CAGR_ASSIGN_OR_RETURN(in.b, operand(g, n.inputs[1], out.type.dims));
  }
  regOf_.emplace_back(y, push(in));
  return Status::ok();
}

// Inference BatchNorm with its per-channel vectors folded once (in double,
// as the reference computes them).
Status Epilogue::addBatchNorm(const Graph& g, const Node& n, int member) {
  const std::vector<Dim>& dims = g.type(n.outputs[0]).dims;
  if (dims.size() < 2 || isSymbolic(dims[1])) {
    return unsupported("batch_norm '" + n.name + "' has no static channel count");
  }
  const auto channels = static_cast<size_t>(dims[1]);
  std::vector<std::shared_ptr<const Tensor>> p;
  for (size_t i = 1; i < 5; ++i) {
    if (!g.isConstant(n.inputs[i])) return unsupported("batch_norm '" + n.name + "' has non-constant parameters");
    CAGR_ASSIGN_OR_RETURN(auto t, storedConstant(g, n.inputs[i]));
    if (t->numel() != 1 && t->numel() != static_cast<int64_t>(channels)) {
      return unsupported("batch_norm '" + n.name + "' parameter shape");
    }
    p.push_back(std::move(t));
  }
  const double eps = n.attrs.getFloat("epsilon", 1e-5);
  EpiBatchNorm bn{std::vector<double>(channels), std::vector<double>(channels), std::vector<double>(channels), dims};
  for (size_t c = 0; c < channels; ++c) {
    auto at = [&](size_t i) { return p[i]->getF64(p[i]->numel() == 1 ? 0 : static_cast<int64_t>(c)); };
    bn.mul[c] = at(0) / std::sqrt(at(3) + eps);
    bn.bias[c] = at(1);
    bn.mean[c] = at(2);
  }
  batchNorms_.push_back(std::move(bn));
  CAGR_ASSIGN_OR_RETURN(EpiSrc x, operand(g, n.inputs[0], dims));
  EpiInstr in{eltOp(OpKind::kBatchNorm), x, {}, static_cast<int>(batchNorms_.size()) - 1, member};
  regOf_.emplace_back(n.outputs[0], push(in));
  return Status::ok();
}

StatusOr<EpiSrc> Epilogue::operand(const Graph& g, ValueId v, const std::vector<Dim>& space, bool onChannels,
                                   std::shared_ptr<const Tensor> fixed) {
  if (int r = regFor(v); r >= 0) return regSrc(r);
  EpiInput in{v, g.type(v), std::move(fixed), space, onChannels};
  auto alias = std::find_if(aliases_.begin(), aliases_.end(), [&](const auto& p) { return p.first == v; });
  if (alias != aliases_.end()) in.value = alias->second;
  if (in.type.dtype != DType::kF32) return unsupported("%" + g.value(v).name + " is not f32");
  if (in.fixed == nullptr && g.isConstant(in.value)) {
    CAGR_ASSIGN_OR_RETURN(in.fixed, storedConstant(g, in.value));
  }
  if (in.fixed == nullptr) {
    if (g.value(in.value).mir.storage != Precision::kF32) {
      return unsupported("%" + g.value(v).name + " is stored reduced");
    }
    reads_.emplace_back(in.value, g.type(in.value));
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const EpiInput& e = inputs_[i];
    if (e.value == in.value && e.fixed == in.fixed && e.type == in.type && e.space == space &&
        e.onChannels == onChannels) {
      return EpiSrc{EpiSrc::kInput, static_cast<int>(i), 0.0f};
    }
  }
  inputs_.push_back(std::move(in));
  return EpiSrc{EpiSrc::kInput, static_cast<int>(inputs_.size()) - 1, 0.0f};
}

int Epilogue::push(EpiInstr in) {
  instrs_.push_back(in);
  return static_cast<int>(instrs_.size());
}

int Epilogue::regFor(ValueId v) const {
  for (const auto& [value, r] : regOf_) {
    if (value == v) return r;
  }
  return -1;
}

bool Epilogue::isOutput(int r) const {
  return std::any_of(outputs_.begin(), outputs_.end(), [r](const auto& o) { return o.second == r; });
}

bool Epilogue::readLater(int r, int after) const {
  for (size_t i = static_cast<size_t>(after) + 1; i < instrs_.size(); ++i) {
    const EpiInstr& in = instrs_[i];
    if ((in.a.kind == EpiSrc::kReg && in.a.index == r) || (in.b.kind == EpiSrc::kReg && in.b.index == r)) return true;
  }
  return false;
}

std::vector<std::string> Epilogue::memberNames(int from, int to) const {
  std::vector<int> last(memberOps_.size(), -1);  // each member's last instruction
  for (size_t i = 0; i < instrs_.size(); ++i) {
    if (instrs_[i].member >= 0) last[static_cast<size_t>(instrs_[i].member)] = static_cast<int>(i);
  }
  std::vector<std::string> out;
  for (size_t m = 1; m < memberOps_.size(); ++m) {
    if (last[m] >= from && last[m] < to) out.push_back(memberOps_[m]);
  }
  return out;
}

std::vector<FlatPattern> Epilogue::patterns(const Symbols& s, std::vector<char>* fits) const {
  std::vector<FlatPattern> out(inputs_.size());
  if (fits != nullptr) fits->assign(inputs_.size(), 1);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const EpiInput& in = inputs_[i];
    bool ok = flatPattern(resolveDims(in.type.dims, s), resolveDims(in.space, s), in.onChannels, out[i]);
    if (fits != nullptr) (*fits)[i] = ok;
  }
  return out;
}

StatusOr<EpiBinding> Epilogue::bind(const RunContext& ctx, const Symbols& s, int64_t numel) const {
  EpiBinding b;
  b.numel = numel;
  std::vector<char> fits;
  b.pattern = patterns(s, &fits);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const EpiInput& in = inputs_[i];
    const float* data = in.fixed != nullptr ? in.fixed->data<float>() : ctx.buffer(in.value).as<float>();
    if (!fits[i]) {  // broadcast no flat pattern describes: expand it in full
      std::vector<int64_t> dims = resolveDims(in.type.dims, s), space = resolveDims(in.space, s);
      Tensor full(DType::kF32, space);
      Tensor src = Tensor::wrap(DType::kF32, dims, reinterpret_cast<std::byte*>(const_cast<float*>(data)));
      ref::stridedCopy(src, 0, ref::broadcastStrides(dims, space), full);
      data = full.data<float>();
      b.pattern[i] = {1, full.numel()};
      b.expanded.push_back(std::move(full));
    }
    b.input.push_back(data);
  }
  for (const EpiBatchNorm& bn : batchNorms_) b.bnInner.push_back(ref::product(resolveDims(bn.dims, s), 2));
  b.primary.assign(static_cast<size_t>(numRegs()), nullptr);
  for (const auto& [v, r] : outputs_) {
    const Buffer& buf = ctx.buffer(v);
    if (buf.numel() != numel) return internalError("output buffer of the GEMM group has the wrong size");
    if (b.primary[static_cast<size_t>(r)] == nullptr) {
      b.primary[static_cast<size_t>(r)] = buf.as<float>();
    } else {
      b.copies.emplace_back(r, buf.as<float>());
    }
  }
  return b;
}

float* Epilogue::target(const EpiBinding& b, int base, bool& copyBase) const {
  copyBase = false;
  if (b.primary[static_cast<size_t>(base)] != nullptr) return b.primary[static_cast<size_t>(base)];
  int last = -1;
  for (int r = base + 1; r < numRegs(); ++r) {
    if (b.primary[static_cast<size_t>(r)] != nullptr) last = r;
  }
  if (last < 0) return nullptr;
  copyBase = readLater(base, last - 1);  // instruction last-1 writes register `last`
  return b.primary[static_cast<size_t>(last)];
}

void Epilogue::runSegment(const EpiBinding& b, int base, bool copyBase, float* dst, int64_t i0, int64_t len) const {
  const size_t regs = static_cast<size_t>(numRegs());
  thread_local std::vector<float> scratch;
  thread_local std::vector<const float*> reg;
  if (scratch.size() < (regs + 2) * kSeg) scratch.resize((regs + 2) * kSeg);
  reg.assign(regs, nullptr);
  auto slot = [&](size_t r) { return scratch.data() + r * kSeg; };
  for (int64_t s0 = 0; s0 < len; s0 += kSeg) {
    const int64_t n = std::min(kSeg, len - s0), at = i0 + s0;
    reg[static_cast<size_t>(base)] = dst + at;
    if (copyBase) {
      std::copy(dst + at, dst + at + n, slot(static_cast<size_t>(base)));
      reg[static_cast<size_t>(base)] = slot(static_cast<size_t>(base));
    }
    // An operand as a tile input: a register, a scalar, or the segment of
    // an input (gathered into `tmp` unless contiguous).
    auto fetch = [&](const EpiSrc& src, float* tmp) -> TileIn {
      if (src.kind == EpiSrc::kReg) return {reg[static_cast<size_t>(src.index)], false};
      if (src.kind == EpiSrc::kImm) return {&src.imm, true};
      if (src.kind == EpiSrc::kNone) return {};
      const auto i = static_cast<size_t>(src.index);
      if (b.pattern[i].p == 1) return {b.input[i], true};
      return {patternSegment(b.input[i], b.pattern[i], at, n, tmp), false};
    };
    for (size_t i = static_cast<size_t>(base); i < instrs_.size(); ++i) {
      const EpiInstr& in = instrs_[i];
      float* out = b.primary[i + 1] != nullptr ? b.primary[i + 1] + at : slot(i + 1);
      const TileIn args[2] = {fetch(in.a, slot(regs)), fetch(in.b, slot(regs + 1))};
      if (in.bn >= 0) {
        const EpiBatchNorm& bn = batchNorms_[static_cast<size_t>(in.bn)];
        const float* x = static_cast<const float*>(args[0].p);
        if (args[0].scalar) x = std::fill_n(slot(regs), n, *x) - n;
        batchNormTile(DType::kF32, x, out, n, at, static_cast<int64_t>(bn.mean.size()),
                      b.bnInner[static_cast<size_t>(in.bn)], bn.mean.data(), bn.mul.data(), bn.bias.data());
      } else {
        runTile(in.op, args, out, n);
      }
      reg[i + 1] = out;
    }
    for (const auto& [r, buf] : b.copies) {
      if (r >= base) std::copy(reg[static_cast<size_t>(r)], reg[static_cast<size_t>(r)] + n, buf + at);
    }
  }
}

void Epilogue::runAll(const EpiBinding& b, int base) const {
  bool work = static_cast<size_t>(base) < instrs_.size();
  for (const auto& c : b.copies) work = work || c.first >= base;
  if (!work) return;
  bool copyBase = false;
  float* dst = target(b, base, copyBase);
  const int64_t chunks = (b.numel + kSeg - 1) / kSeg;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) runSegment(b, base, copyBase, dst, c * kSeg, std::min(kSeg, b.numel - c * kSeg));
}

}  // namespace cagr::cpu
