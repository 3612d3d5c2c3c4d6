// Elementwise groups (Pattern::kEltwise, kernel nvrtc.eltwise, and the
// epilogue members the runtime's cuBLASLt call cannot take): one
// grid-stride loop over the largest output (four elements per thread with
// float4 loads and stores where no output broadcasts, then the last
// count % 4 elements one by one), every value computed in
// registers at the element's index (NumPy broadcasting as index arithmetic,
// views as the identity on linear indices). Smaller outputs that broadcast
// into it are written by the first element that maps to each of theirs;
// outputs of another layout get a loop of their own.
#include <algorithm>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "ir/op_table.h"
#include "lower/op_sets.h"

namespace cagr::cuda::gen {
namespace {

// Element count with every symbol bound to a large value: orders outputs by size.
double sizeAt(const std::vector<Dim>& dims) {
  double n = 1;
  for (Dim d : dims) n *= isSymbolic(d) ? 4096.0 * static_cast<double>(dimCoef(d)) : static_cast<double>(d);
  return n;
}

std::string opList(const Graph& g, const std::vector<NodeId>& members) {
  std::string s;
  for (NodeId m : members) {
    OpKind op = g.node(m).op;
    if (ops::in(ops::kViews, op) && members.size() > 1) continue;
    s += (s.empty() ? "" : "+") + std::string(opInfo(op).mnemonic);
  }
  return s;
}

// One loop over `shape`: outputs written at the loop index, and outputs
// that broadcast into the shape, written by the guard's element.
struct Loop {
  std::vector<Dim> shape;
  std::vector<ValueId> direct, guarded;
};

std::vector<Loop> planLoops(const Graph& g, const std::vector<ValueId>& outputs) {
  ValueId root = *std::max_element(outputs.begin(), outputs.end(), [&](ValueId a, ValueId b) {
    return sizeAt(g.type(a).dims) < sizeAt(g.type(b).dims);
  });
  std::vector<Loop> loops{{g.type(root).dims, {}, {}}};
  for (ValueId u : outputs) {
    const auto& d = g.type(u).dims;
    bool layout = broadcastsInto(d, loops[0].shape);
    if (layout && sameSize(d, loops[0].shape)) {
      loops[0].direct.push_back(u);
    } else if (layout) {
      loops[0].guarded.push_back(u);
    } else {
      auto same = std::find_if(loops.begin() + 1, loops.end(), [&](const Loop& l) { return l.shape == d; });
      if (same == loops.end()) {
        loops.push_back({d, {u}, {}});
      } else {
        same->direct.push_back(u);
      }
    }
  }
  return loops;
}


// Four elements per thread over the first count / 4 * 4 elements of loop
// `l` (no broadcast outputs): the f32 values it reads at the loop index
// (`direct`, found by the scalar loop) as float4 loads, f32 outputs as
// float4 stores (buffers start 16-byte aligned), everything else per element.
StatusOr<std::string> vectorLoop(KernelBuilder& k, const Loop& l, const std::vector<ValueId>& direct) {
  const Graph& g = k.g();
  static const char* const kLane[] = {".x", ".y", ".z", ".w"};
  std::string inner;
  ValueEmitter e(k, inner, "    ");
  auto at = [](int c) { return "(j * 4 + " + std::to_string(c) + ")"; };
  for (ValueId u : direct) {
    if (storageType(g, u) != "float") continue;
    std::string q = k.fresh("q");
    inner += "    const float4 " + q + " = cagr_ld4(" + k.in(u) + ", j);\n";
    for (int c = 0; c < 4; ++c) e.bind(u, at(c), q + kLane[c]);
  }
  for (ValueId u : l.direct) {
    std::string vars[4];
    for (int c = 0; c < 4; ++c) {
      CAGR_ASSIGN_OR_RETURN(vars[c], e.at(u, at(c)));
    }
    if (storageType(g, u) == "float") {
      inner += "    cagr_st4(" + k.out(u) + ", j, make_float4(" + vars[0] + ", " + vars[1] + ", " + vars[2] + ", " +
               vars[3] + "));\n";
    } else {
      for (int c = 0; c < 4; ++c) e.store(u, at(c), vars[c]);
    }
  }
  return gridStride("j", "(" + k.size(l.shape) + ") / 4", inner);
}

}  // namespace

StatusOr<GeneratedKernel> generateEltwise(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  for (NodeId m : r.members) {
    if (!ops::in(ops::kEltwise | ops::kViews, g.node(m).op)) {
      return unsupportedAt(g, m, "is not elementwise (an elementwise kernel was asked for)");
    }
  }
  if (r.outputs.empty()) return unsupportedAt(g, r.members.front(), "the group writes nothing");
  KernelBuilder k(r, "eltwise", src);
  std::vector<Loop> loops = planLoops(g, r.outputs);
  bool vector = loops[0].guarded.empty();
  for (size_t li = 0; li < loops.size(); ++li) {
    const Loop& l = loops[li];
    std::string inner;
    ValueEmitter e(k, inner, "    ");
    for (ValueId u : l.direct) {
      CAGR_ASSIGN_OR_RETURN(std::string v, e.at(u, "i"));
      e.store(u, "i", v);
    }
    for (ValueId u : l.guarded) {
      std::string idx = broadcastIndex(k, l.shape, "i", g.type(u).dims);
      CAGR_ASSIGN_OR_RETURN(std::string v, e.at(u, idx));
      inner += "    if (" + broadcastGuard(k, l.shape, "i", g.type(u).dims) + ") cagr_st(" + k.out(u) + ", " + idx +
               ", " + v + ");\n";
    }
    if (li == 0 && vector) {
      CAGR_ASSIGN_OR_RETURN(std::string quads, vectorLoop(k, l, e.loadedAt("i")));
      k.body += quads;
      k.body += gridStride("i", k.size(l.shape), inner, "1", "(" + k.size(l.shape) + ") / 4 * 4");
    } else {
      k.body += gridStride("i", k.size(l.shape), inner);
    }
  }
  LaunchRule rule;
  rule.work = loops[0].shape;
  rule.perBlock = vector ? 4 * 256 : 256;
  rule.maxBlocks = 4096;
  return k.finish(src, rule, "nvrtc.eltwise[" + opList(g, r.members) + "]");
}

}  // namespace cagr::cuda::gen
