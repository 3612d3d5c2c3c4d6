// Interaction and FM kernels (Pattern::kInteraction / kFM, kernels
// nvrtc.interaction / nvrtc.fm), alone or fused with the lookups, views and
// concats that feed them and the concat that joins the result with the
// dense part. One warp per sample: it assembles the sample's [F, D] row in
// shared memory straight from the tables (pooled with the lookup kernel's
// row loads) and the dense inputs, computes the pairwise dots (DLRM order)
// or the FM term there, and writes each output row segment by segment, so
// the concatenated embeddings never exist in device memory.
#include <algorithm>
#include <map>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "lower/op_sets.h"

namespace cagr::cuda::gen {
namespace {

// A piece of one sample's flattened row: `len` elements starting at column
// `col` of an external value's row, of a lookup's row (table, sub-row) or of
// the interaction / FM result.
struct Segment {
  enum Kind { kExternal, kLookup, kRec } kind = kExternal;
  ValueId value = kNoValue;  // kExternal
  NodeId node = -1;          // kLookup / kRec
  int table = 0;
  int64_t sub = 0;  // Gather with [B, S] ids: the id column
  int64_t col = 0, len = 0;
  bool same(const Segment& o) const {
    return kind == o.kind && value == o.value && node == o.node && table == o.table && sub == o.sub;
  }
};
using Row = std::vector<Segment>;

Row sliceRow(const Row& row, int64_t start, int64_t len) {
  Row out;
  int64_t pos = 0;
  for (const Segment& s : row) {
    int64_t b = std::max(start, pos), e = std::min(start + len, pos + s.len);
    if (b < e) {
      Segment p = s;
      p.col += b - pos;
      p.len = e - b;
      out.push_back(p);
    }
    pos += s.len;
  }
  return out;
}

class RowBuilder {
 public:
  RowBuilder(KernelBuilder& k, Dim batch, NodeId rec) : k_(k), batch_(batch), rec_(rec) {}

  StatusOr<Row> row(ValueId v) {
    auto hit = rows_.find(v);
    if (hit != rows_.end()) return hit->second;
    CAGR_ASSIGN_OR_RETURN(Row r, build(v));
    rows_[v] = r;
    return r;
  }
  StatusOr<int64_t> width(ValueId v) const {
    const auto& d = k_.g().type(v).dims;
    auto w = productOf(d, 1);
    if (d.empty() || d[0] != batch_ || !w || w->sym != 0) {
      return unsupportedAt(k_.g(), k_.req().members.front(),
                           "value '" + k_.g().value(v).name + "' is not batch-major with static trailing dims");
    }
    return w->coef;
  }
  std::map<NodeId, LookupInfo> lookups;

 private:
  StatusOr<Row> build(ValueId v) {
    const Graph& g = k_.g();
    CAGR_ASSIGN_OR_RETURN(int64_t w, width(v));
    if (!k_.isMemberValue(v)) return Row{Segment{Segment::kExternal, v, -1, 0, 0, 0, w}};
    NodeId p = g.value(v).producer;
    const Node& n = g.node(p);
    if (p == rec_) return Row{Segment{Segment::kRec, kNoValue, p, 0, 0, 0, w}};
    if (ops::in(ops::kViews, n.op)) return row(n.inputs[0]);
    if (n.op == OpKind::kConcat) return concatRow(p);
    if (!ops::in(ops::kLookups, n.op)) return unsupportedAt(g, p, "cannot feed a fused interaction / FM");
    CAGR_ASSIGN_OR_RETURN(LookupInfo li, lookupInfo(g, p));
    Row r;
    int64_t subs = li.gather ? w / li.width : 1;
    for (int64_t s = 0; s < subs; ++s) {
      for (size_t t = 0; t < li.tables.size(); ++t)
        r.push_back({Segment::kLookup, kNoValue, p, static_cast<int>(t), s, 0, li.dims[t]});
    }
    lookups[p] = li;
    return r;
  }

  StatusOr<Row> concatRow(NodeId p) {
    const Graph& g = k_.g();
    const Node& n = g.node(p);
    const auto& od = g.type(n.outputs[0]).dims;
    int64_t a = *normAxis(n.attrs.getInt("axis", 0), static_cast<int64_t>(od.size()));
    if (a == 0) return unsupportedAt(g, p, "concatenates along the batch axis");
    auto outer = productOf(od, 1, static_cast<size_t>(a));
    if (!outer || outer->sym != 0) return unsupportedAt(g, p, "symbolic concat dims");
    Row r;
    for (int64_t o = 0; o < outer->coef; ++o) {
      for (ValueId in : n.inputs) {
        CAGR_ASSIGN_OR_RETURN(Row ir, row(in));
        CAGR_ASSIGN_OR_RETURN(int64_t iw, width(in));
        int64_t chunk = iw / outer->coef;
        Row piece = sliceRow(ir, o * chunk, chunk);
        r.insert(r.end(), piece.begin(), piece.end());
      }
    }
    return r;
  }

  KernelBuilder& k_;
  Dim batch_;
  NodeId rec_;
  std::map<ValueId, Row> rows_;
};

struct RecPlan {
  NodeId rec;
  bool fm;
  int64_t fields, dim, pitch, recWidth;
  Row x;  // the rec input's row, in X order
  int vec = 1, lanes = 1;
  int64_t perWarp = 0;  // floats of shared memory per warp
  int warps = 4;
};

// Fill units: a run of lookup segments of one lookup node whose tables
// share a pooling loop (a switch picks the table), or one other segment.
struct Unit {
  size_t first = 0, count = 1;
  int64_t pos = 0;  // X position of the first segment
};

std::vector<Unit> fillUnits(const Graph& g, const RecPlan& p, RowBuilder& rb) {
  std::vector<Unit> units;
  int64_t pos = 0;
  for (size_t s = 0; s < p.x.size(); pos += p.x[s].len, ++s) {
    const Segment& seg = p.x[s];
    if (!units.empty() && seg.kind == Segment::kLookup) {
      Unit& u = units.back();
      const Segment& head = p.x[u.first];
      bool joins = head.kind == Segment::kLookup && head.node == seg.node && head.len == seg.len && head.col == 0 &&
                   seg.col == 0 && sameTableKind(g, rb.lookups.at(seg.node), head.table, seg.table);
      if (joins) {
        ++u.count;
        continue;
      }
    }
    units.push_back({s, 1, pos});
  }
  return units;
}

// Emits the loop that assembles X (shared memory `xs`) for sample `b`.
std::string emitFill(KernelBuilder& k, const RecPlan& p, RowBuilder& rb) {
  const Graph& g = k.g();
  std::string V = std::to_string(p.vec), L = std::to_string(p.lanes), code;
  for (const Unit& u : fillUnits(g, p, rb)) {
    const Segment& seg = p.x[u.first];
    std::string len = std::to_string(seg.len), a = std::to_string(u.first), b = std::to_string(u.first + u.count);
    std::string head = "      if (s >= " + a + " && s < " + b + ") {\n", fetch;
    if (seg.kind == Segment::kLookup) {
      const LookupInfo& li = rb.lookups.at(seg.node);
      std::string cases;
      for (size_t i = u.first; i < u.first + u.count; ++i) {
        cases += "          case " + std::to_string(i) + ": " + tableCase(k, li, p.x[i].table) +
                 " gsub = " + std::to_string(p.x[i].sub) + "LL; break;\n";
      }
      head += "        " + tableVars(g, li, seg.table) +
              " [[maybe_unused]] long long gsub = 0;\n        switch (s) {\n" + cases +
              "          default: break;\n        }\n";
      // A Gather with [B, S] ids reads row b * S + s for the sample's s-th id.
      auto perSample = productOf(g.type(li.ids).dims, 1);
      std::string row =
          li.gather && perSample && perSample->coef > 1 ? "b * " + std::to_string(perSample->coef) + "LL + gsub" : "b";
      fetch = emitPool(k, li, seg.table, p.vec, row, std::to_string(seg.col) + " + c", "a");
    } else {
      std::string src = k.in(seg.value), w = std::to_string(*rb.width(seg.value)) + "LL";
      fetch = "        for (int q = 0; q < " + V + "; ++q) a[q] = c + q < " + len + " ? cagr_ld(" + src + ", b * " + w +
              " + " + std::to_string(seg.col) + " + c + q) : 0.f;\n";
    }
    std::string D = std::to_string(p.dim);
    code += head + "        const int pos = " + std::to_string(u.pos) + " + (s - " + a + ") * " + len + ";\n" +
            "        for (int c = sl * " + V + "; c < " + len + "; c += " + L + " * " + V + ") {\n        float a[" +
            V + "];\n" + fetch + "        for (int q = 0; q < " + V + " && c + q < " + len +
            "; ++q) { const int e = pos + c + q; xs[e / " + D + " * " + std::to_string(p.pitch) + " + e % " + D +
            "] = a[q]; }\n        }\n      }\n";
  }
  return "    for (int s = lane / " + L + "; s < " + std::to_string(p.x.size()) +
         "; s += " + std::to_string(32 / p.lanes) + ") {\n" + code + "    }\n    __syncwarp();\n";
}

// The pairwise dots (DLRM order; `flag` = self_interaction) or the FM term
// (`flag` = reduce over d) of the sample in xs, into ys.
std::string emitCompute(const RecPlan& p, bool flag) {
  std::string F = std::to_string(p.fields), D = std::to_string(p.dim), Pt = std::to_string(p.pitch);
  if (p.fm) {
    bool reduce = flag;
    std::string s = std::string(reduce ? "    float tot = 0.f;\n" : "") + "    for (int d = lane; d < " + D +
                    "; d += 32) {\n" + "      float s = 0.f, q = 0.f;\n      for (int f = 0; f < " + F +
                    "; ++f) { const float v = xs[f * " + Pt +
                    " + d]; s += v; q += v * v; }\n      const float term = 0.5f * (s * s - q);\n";
    s += reduce ? "      tot += term;\n    }\n    tot = cagr_wsum<32>(tot);\n    if (lane == 0) ys[0] = tot;\n"
                : "      ys[d] = term;\n    }\n";
    return s + "    __syncwarp();\n";
  }
  bool self = flag;
  std::string lim = self ? "i + 1" : "i";
  return "    {\n      int i = " + std::string(self ? "0" : "1") + ", j = lane;\n      while (i < " + F +
         " && j >= " + lim + ") { j -= " + lim + "; ++i; }\n      for (int p = lane; p < " +
         std::to_string(p.recWidth) + "; p += 32) {\n        float acc = 0.f;\n        for (int d = 0; d < " + D +
         "; ++d) acc += xs[i * " + Pt + " + d] * xs[j * " + Pt +
         " + d];\n        ys[p] = acc;\n        j += 32;\n        while (i < " + F + " && j >= " + lim +
         ") { j -= " + lim + "; ++i; }\n      }\n    }\n    __syncwarp();\n";
}

// Writes output `u`'s row of sample b: segments from X, the result or outside.
StatusOr<std::string> emitWrite(KernelBuilder& k, const RecPlan& p, RowBuilder& rb, ValueId u) {
  CAGR_ASSIGN_OR_RETURN(Row row, rb.row(u));
  CAGR_ASSIGN_OR_RETURN(int64_t w, rb.width(u));
  std::string code, y = k.out(u), W = std::to_string(w) + "LL";
  int64_t pos = 0;
  for (const Segment& s : row) {
    std::string src;
    if (s.kind == Segment::kRec) {
      src = "ys[" + std::to_string(s.col) + " + j]";
    } else if (s.kind == Segment::kExternal) {
      src = "cagr_ld(" + k.in(s.value) + ", b * " + std::to_string(*rb.width(s.value)) + "LL + " +
            std::to_string(s.col) + " + j)";
    } else {
      int64_t xpos = 0;
      bool found = false;
      for (const Segment& x : p.x) {
        if (x.same(s) && s.col >= x.col && s.col + s.len <= x.col + x.len) {
          xpos += s.col - x.col;
          found = true;
          break;
        }
        xpos += x.len;
      }
      if (!found) return unsupportedAt(k.g(), s.node, "a lookup row written but not interacted");
      std::string e = "(" + std::to_string(xpos) + " + j)";
      src = "xs[" + e + " / " + std::to_string(p.dim) + " * " + std::to_string(p.pitch) + " + " + e + " % " +
            std::to_string(p.dim) + "]";
    }
    code += "    for (int j = lane; j < " + std::to_string(s.len) + "; j += 32) " + y + "[b * " + W + " + " +
            std::to_string(pos) + " + j] = " + src + ";\n";
    pos += s.len;
  }
  return code;
}

}  // namespace

StatusOr<GeneratedKernel> generateRec(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  NodeId rec = r.shape.anchor;
  const Node& n = g.node(rec);
  if (n.op != OpKind::kInteraction && n.op != OpKind::kFM) return unsupportedAt(g, rec, "no interaction or FM anchor");
  KernelBuilder k(r, n.op == OpKind::kFM ? "fm" : "interaction", src);
  ValueId xv = n.inputs[0];
  const auto& xd = g.type(xv).dims;
  if (xd.size() != 3 || isSymbolic(xd[1]) || isSymbolic(xd[2])) return unsupportedAt(g, rec, "input is not [B, F, D]");
  if (g.type(xv).dtype != DType::kF32) return unsupportedAt(g, rec, "input is not f32");
  RowBuilder rb(k, xd[0], rec);
  RecPlan p{rec, n.op == OpKind::kFM, xd[1], xd[2], xd[2] % 2 == 0 ? xd[2] + 1 : xd[2], 0, {}};
  CAGR_ASSIGN_OR_RETURN(p.recWidth, rb.width(n.outputs[0]));
  CAGR_ASSIGN_OR_RETURN(p.x, rb.row(xv));
  // Lookup rows load `vec` aligned columns at once; other segments load
  // elementwise (guarded), so only lookups bound the width.
  p.vec = 4;
  int64_t longest = 1;
  for (const Segment& s : p.x) {
    longest = std::max(longest, s.len);
    if (s.kind != Segment::kLookup) continue;
    int v = rb.lookups.at(s.node).vec;
    while (v > 1 && (s.col % v != 0 || s.len % v != 0)) v /= 2;
    p.vec = std::min(p.vec, v);
  }
  while (p.lanes < 32 && p.lanes * p.vec < longest) p.lanes *= 2;
  p.perWarp = p.fields * p.pitch + p.recWidth;
  p.warps = static_cast<int>(std::clamp<int64_t>(40000 / (p.perWarp * 4), 1, 8));
  if (p.perWarp * 4 > 48000) return unsupportedAt(g, rec, "one sample's rows do not fit in shared memory");
  std::string fill = emitFill(k, p, rb),
              compute = emitCompute(p, n.attrs.getInt(p.fm ? "reduce" : "self_interaction", p.fm ? 1 : 0) != 0), writes;
  for (ValueId u : r.outputs) {
    CAGR_ASSIGN_OR_RETURN(std::string w, emitWrite(k, p, rb, u));
    writes += w;
  }
  std::string W = std::to_string(p.warps), per = std::to_string(p.perWarp);
  k.body += "  __shared__ float smem[" + W + "][" + per + "];\n  const int lane = threadIdx.x % 32, sl = lane % " +
            std::to_string(p.lanes) + ";\n  float* xs = smem[threadIdx.x / 32];\n  float* ys = xs + " +
            std::to_string(p.fields * p.pitch) + ";\n  const long long B = " + k.dim(xd[0]) + ";\n" +
            "  for (long long b = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; b < B; b += (long "
            "long)gridDim.x * "
            "blockDim.x / 32) {\n" +
            fill + compute + writes + "    __syncwarp();\n  }\n";
  LaunchRule rule;
  rule.work = {xd[0]};
  rule.threads = static_cast<unsigned>(32 * p.warps);
  rule.perBlock = p.warps;
  std::string name = std::string(p.fm ? "nvrtc.fm" : "nvrtc.interaction") + "[" + std::to_string(rb.lookups.size()) +
                     " lookups, F=" + std::to_string(p.fields) + ", D=" + std::to_string(p.dim) + "]";
  return k.finish(src, rule, name);
}

}  // namespace cagr::cuda::gen
