// The CUDA backend's arena plan for one batch size (see cuda_program.h):
// buffer shapes from the symbol bindings, and offsets where two buffers
// share bytes only if every access of one happens before the other's write
// in the step order the CUDA graph enforces (its stream order and event
// waits), so reuse stays safe when steps on different streams overlap.
// Steps' scratch (library workspaces) lives in the same arena, as buffers
// only their step touches.
#include <algorithm>
#include <cstddef>

#include "backends/cuda/cuda_program.h"
#include "backends/plan_memory.h"
#include "ir/graph_queries.h"
#include "lower/op_sets.h"

namespace cagr::cuda {
namespace {

size_t alignUp(size_t n) {
  return (n + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
}

// Accesses of each buffer by step index; -1 is the upload of the inputs
// before the graph, `steps` the download of the outputs after it.
struct Accesses {
  std::vector<int> writer;              // value -> writing step (-1: a graph input)
  std::vector<std::vector<int>> users;  // value -> every step touching its bytes
};

Accesses accessesOf(const Graph& g, const Program& p) {
  const int steps = static_cast<int>(p.steps.size());
  Accesses a;
  a.writer.assign(g.numValues(), -1);
  a.users.assign(g.numValues(), {});
  for (ValueId v : g.inputs()) a.users[static_cast<size_t>(v)].push_back(-1);
  for (int s = 0; s < steps; ++s) {
    for (ValueId v : p.steps[static_cast<size_t>(s)].writes) {
      a.writer[static_cast<size_t>(v)] = s;
      a.users[static_cast<size_t>(v)].push_back(s);
    }
    for (ValueId v : p.steps[static_cast<size_t>(s)].reads) a.users[static_cast<size_t>(p.root(v))].push_back(s);
  }
  for (ValueId v : g.outputs()) a.users[static_cast<size_t>(p.root(v))].push_back(steps);
  return a;
}

// Step x happens before step y (-1: before everything; steps: after everything).
bool happensBefore(const Program& p, int x, int y) {
  const int steps = static_cast<int>(p.steps.size());
  if (x == y || y == -1 || x == steps) return false;
  if (x == -1 || y == steps) return true;
  return p.after[static_cast<size_t>(y)][static_cast<size_t>(x)] != 0;
}

// In place: the buffer an elementwise step may write its output into, the
// bytes of an operand it reads at the same indices (same shape and size)
// whose every other access happens before it; -1 when none. Each thread of
// a generated elementwise kernel reads its elements before it writes them,
// so the operand's bytes are free for the output (DCN-v2's cross layers:
// x0 * (W x + b) + x writes where W x + b was).
ValueId inPlaceOperand(const Graph& g, const Program& p, const Accesses& acc, const ArenaPlan& a, int s) {
  const ProgramStep& st = p.steps[static_cast<size_t>(s)];
  if (st.kind != StepKind::kGenerated || st.writes.size() != 1) return -1;
  for (NodeId n : st.nodes) {
    if (!ops::in(ops::kEltwise, g.node(n).op)) return -1;
  }
  const ValueId out = st.writes[0];
  const auto& outputs = g.outputs();
  if (std::find(outputs.begin(), outputs.end(), out) != outputs.end()) return -1;
  for (ValueId v : st.reads) {
    const ValueId r = p.root(v);
    if (!a.inArena[static_cast<size_t>(r)] || acc.writer[static_cast<size_t>(r)] < 0) continue;
    if (a.shape[static_cast<size_t>(v)] != a.shape[static_cast<size_t>(out)] ||
        a.bytes[static_cast<size_t>(r)] != a.bytes[static_cast<size_t>(out)] ||
        g.type(v).dtype != g.type(out).dtype ||
        g.value(v).mir.storage != g.value(out).mir.storage) {
      continue;
    }
    if (std::find(outputs.begin(), outputs.end(), r) != outputs.end()) continue;
    const auto& users = acc.users[static_cast<size_t>(r)];
    if (std::all_of(users.begin(), users.end(), [&](int x) { return x == s || happensBefore(p, x, s); })) return r;
  }
  return -1;
}

}  // namespace

size_t deviceElementBytes(const Graph& g, ValueId v) {
  DType t = g.type(v).dtype;
  const Precision s = g.value(v).mir.storage;
  if (t == DType::kF32 && !g.isConstant(v) && (s == Precision::kBF16 || s == Precision::kF16)) return 2;
  return t == DType::kF32 ? 4 : t == DType::kI64 ? 8 : dtypeSize(t);
}

StatusOr<ArenaPlan> arenaShapes(const Graph& g, const Program& p, const SymbolBindings& b) {
  const size_t nv = g.numValues();
  ArenaPlan a;
  a.shape.assign(nv, {});
  a.inArena.assign(nv, 0);
  a.bytes.assign(nv, 0);
  a.offset.assign(nv, 0);
  Accesses acc = accessesOf(g, p);
  for (size_t v = 0; v < nv; ++v) {
    auto id = static_cast<ValueId>(v);
    if (const Tensor* c = g.constant(id)) {
      a.shape[v] = c->shape();
      continue;
    }
    bool own = acc.writer[v] >= 0 || std::find(g.inputs().begin(), g.inputs().end(), id) != g.inputs().end();
    if (!own && p.aliasOf[v] == kNoValue) continue;  // inside a fused kernel: no bytes
    CAGR_ASSIGN_OR_RETURN(a.shape[v], b.resolve(g.type(id).dims));
    if (!own) continue;
    int64_t numel = 1;
    for (int64_t d : a.shape[v]) numel *= d;
    a.inArena[v] = 1;
    a.bytes[v] = static_cast<size_t>(numel) * deviceElementBytes(g, id);
  }
  return a;
}

void placeArena(const Graph& g, const Program& p, const std::vector<size_t>& stepScratch, ArenaPlan& a) {
  const size_t nv = g.numValues();
  Accesses acc = accessesOf(g, p);
  // Buffers 0..nv-1 are values; nv + s is step s's scratch, written and
  // used by step s alone.
  std::vector<size_t> size(nv + stepScratch.size(), 0);
  for (size_t v = 0; v < nv; ++v) {
    if (a.inArena[v]) size[v] = alignUp(std::max<size_t>(a.bytes[v], 1));
  }
  // Outputs written in place take their operand's bytes: one buffer with
  // both values' accesses (chains follow: a later step may write over it).
  std::vector<ValueId> sharesWith(nv, -1);
  for (int s = 0; s < static_cast<int>(p.steps.size()); ++s) {
    ValueId r = inPlaceOperand(g, p, acc, a, s);
    if (r < 0) continue;
    while (sharesWith[static_cast<size_t>(r)] >= 0) r = sharesWith[static_cast<size_t>(r)];
    const auto out = static_cast<size_t>(p.steps[static_cast<size_t>(s)].writes[0]);
    sharesWith[out] = r;
    size[out] = 0;
    auto& users = acc.users[static_cast<size_t>(r)];
    users.insert(users.end(), acc.users[out].begin(), acc.users[out].end());
  }
  acc.writer.resize(size.size(), -1);
  acc.users.resize(size.size());
  for (size_t s = 0; s < stepScratch.size(); ++s) {
    if (stepScratch[s] == 0) continue;
    size[nv + s] = alignUp(stepScratch[s]);
    acc.writer[nv + s] = static_cast<int>(s);
    acc.users[nv + s] = {static_cast<int>(s)};
  }
  // u precedes v when every access of u happens before v is written. A
  // graph input never does: it is uploaded once and read again by every
  // replay of the captured graph (and by the warm-up run before it).
  auto precedes = [&](size_t u, size_t v) {
    if (acc.writer[u] == -1) return false;
    return std::all_of(acc.users[u].begin(), acc.users[u].end(),
                       [&](int x) { return happensBefore(p, x, acc.writer[v]); });
  };
  std::vector<size_t> offset;
  a.size = planOffsets(
      size, [&](size_t u, size_t v) { return !precedes(u, v) && !precedes(v, u); }, offset);
  a.offset.assign(offset.begin(), offset.begin() + static_cast<std::ptrdiff_t>(nv));
  for (size_t v = 0; v < nv; ++v) {
    if (sharesWith[v] >= 0) a.offset[v] = a.offset[static_cast<size_t>(sharesWith[v])];
  }
  a.stepOffset.assign(offset.begin() + static_cast<std::ptrdiff_t>(nv), offset.end());
}

StatusOr<ArenaPlan> planArena(const Graph& g, const Program& p, const SymbolBindings& b) {
  CAGR_ASSIGN_OR_RETURN(ArenaPlan a, arenaShapes(g, p, b));
  placeArena(g, p, {}, a);
  return a;
}

}  // namespace cagr::cuda
