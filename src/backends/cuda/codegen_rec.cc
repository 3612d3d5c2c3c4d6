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
#include <optional>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "lower/op_sets.h"

namespace cagr::cuda::gen {
namespace {

// A piece of one sample's flattened row: `len` elements starting at column
// `col` of an external value's row, of a lookup's row (table, sub-row), of
// the interaction / FM result, or zeros (a Concat's `pad`).
struct Segment {
  enum Kind { kExternal, kLookup, kRec, kZero } kind = kExternal;
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
    if (int64_t pad = n.attrs.getInt("pad", 0); pad > 0) {
      if (outer->coef != 1) return unsupportedAt(g, p, "pads a concat of several rows per sample");
      r.push_back(Segment{Segment::kZero, kNoValue, -1, 0, 0, 0, pad});
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
  int64_t dim4 = 0, rows = 0;  // d padded to a multiple of 4; rows of xs (fields padded to a multiple of 4)
  Row x;                       // the rec input's row, in X order
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

// The code of one lookup segment's bag in the staged fill: `bounds` sets
// lo[g], hi[g] (the bag's positions in the ids buffer), `first` rid[g] (its
// first id, -1 when out of range or the bag is empty), `rows` pools the bag
// into a[g][ch] as cagr_pool does (first id, the rest in order, then mean /
// empty), so the offsets, the first ids and the rows of every round the warp
// stages are each one memory latency.
struct BagCode {
  std::string bounds, first, rows;
};

BagCode emitBag(KernelBuilder& k, const LookupInfo& li, int t, int vec, const std::string& row, const std::string& c) {
  const Graph& g = k.g();
  ValueId table = li.tables[static_cast<size_t>(t)];
  std::string tab = g.value(table).mir.storage == Precision::kInt8Rowwise ? "cagr_i8{tab}" : "tab";
  std::string ids = k.in(li.ids), D = std::to_string(li.dims[static_cast<size_t>(t)]) + "LL", V = std::to_string(vec);
  bool bags = g.node(li.node).op == OpKind::kEmbeddingBags, w = li.weights != kNoValue;
  std::string ind = "          ";
  BagCode out;
  if (li.gather) {
    out.bounds = ind + "lo[g] = " + row + "; hi[g] = lo[g] + 1;\n";
  } else if (li.offsets == kNoValue) {
    std::string P = std::to_string(li.pooling) + "LL";
    std::string base =
        bags ? "(" + row + " * " + std::to_string(li.numSlots) + "LL + tab_slot) * " + P : row + " * " + P;
    out.bounds = ind + "lo[g] = " + base + "; hi[g] = lo[g] + " + P + ";\n";
  } else {
    std::string len = bags ? k.dim(g.type(li.ids).dims.back()) : k.dims(li.ids);
    std::string oc = k.dim(g.type(li.offsets).dims.back()), rows = k.size(li.rows), off = k.in(li.offsets);
    std::string ob = bags ? "tab_slot * " + oc + " + " : "", idBase = bags ? "tab_slot * " + len : "0LL";
    std::string last = li.includeLast ? "true" : "(" + row + " + 1 < " + rows + ")";
    out.bounds = ind + "const long long b0 = (long long)" + off + "[" + ob + row + "];\n" + ind +
                 "const long long b1 = " + last + " ? (long long)" + off + "[" + ob + row + " + 1] : " + len + ";\n" +
                 ind + "lo[g] = " + idBase + " + b0; hi[g] = b1 > b0 ? " + idBase + " + b1 : lo[g];\n";
  }
  std::string wrap = li.gather ? " if (id < 0) id += tab_rows;" : "";
  out.first = ind + "long long id = lo[g] < hi[g] ? (long long)" + ids + "[lo[g]] : -1LL;" + wrap + "\n" + ind +
              "rid[g] = (unsigned long long)id < (unsigned long long)tab_rows ? id : -1LL;\n";
  std::string comb = li.mode == 2 ? "cagr_max(a[g][ch][q], v[q])"
                     : w          ? "fmaf(sw, v[q], a[g][ch][q])"
                                  : "a[g][ch][q] + v[q]";
  std::string wp = w ? k.in(li.weights) : "";
  auto add = [&](const std::string& id, const std::string& pos) {
    return ind + "  float v[" + V + "];\n" + ind + "  cagr_row<" + V + ">(" + tab + ", " + D + ", " + id + ", " + c +
           ", v);\n" + ind + "  const float sw = " + (w ? "__ldg(" + wp + " + " + pos + ")" : "1.f") + ";\n" + ind +
           "  (void)sw;\n" + ind + "  for (int q = 0; q < " + V + "; ++q) a[g][ch][q] = " + comb + ";\n";
  };
  out.rows = ind + "for (int q = 0; q < " + V + "; ++q) a[g][ch][q] = " + (li.mode == 2 ? "-CAGR_INF" : "0.f") + ";\n" +
             ind + "if (rid[g] >= 0) {\n" + add("rid[g]", "lo[g]") + ind + "}\n" + ind +
             "for (long long p = lo[g] + 1; p < hi[g]; ++p) {\n" + ind + "  long long id = (long long)" + ids + "[p];" +
             wrap + "\n" + ind + "  if ((unsigned long long)id >= (unsigned long long)tab_rows) continue;\n" +
             add("id", "p") + ind + "}\n" + ind + "{\n" + ind + "  const long long n = hi[g] - lo[g];\n" + ind +
             "  for (int q = 0; q < " + V +
             "; ++q) a[g][ch][q] = n == 0 ? 0.f : " + (li.mode == 1 ? "a[g][ch][q] / (float)n" : "a[g][ch][q]") +
             ";\n" + ind + "}\n";
  return out;
}

// Emits the loops that assemble X (shared memory `xs`) for sample `b`: the
// warp's segments in rounds of 32 / lanes, `group` rounds at a time staged
// in registers — bag bounds, first ids, rows, then the shared-memory stores
// — so the loads of one step of every staged round are in flight together.
// A lane finds its segment's table in block-shared arrays indexed by the
// segment (filled once, `prologue`), not by a switch its warp would take
// divergently for every segment it holds.
// `lookups`: only the lookup segments (true), only the others (false), or
// all (nullopt).
std::string emitFill(KernelBuilder& k, const RecPlan& p, RowBuilder& rb, std::string& prologue,
                     std::optional<bool> lookups = std::nullopt) {
  const Graph& g = k.g();
  std::string tabs;  // the segments' tables, filled into block-shared arrays once (appended to `prologue`)
  const int perRound = 32 / p.lanes;
  int64_t longest = 1;
  for (const Segment& seg : p.x) longest = std::max(longest, seg.len);
  const int64_t chunks = (longest + p.lanes * p.vec - 1) / (p.lanes * p.vec);
  const int64_t rounds = (static_cast<int64_t>(p.x.size()) + perRound - 1) / perRound;
  const int64_t group = std::clamp<int64_t>(16 / (chunks * p.vec), 1, rounds);
  std::string V = std::to_string(p.vec), L = std::to_string(p.lanes), G = std::to_string(group),
              CH = std::to_string(chunks), D = std::to_string(p.dim), Pt = std::to_string(p.pitch);
  std::string bounds, first, rows, stores;
  for (const Unit& u : fillUnits(g, p, rb)) {
    const Segment& seg = p.x[u.first];
    if (lookups && *lookups != (seg.kind == Segment::kLookup)) continue;
    std::string len = std::to_string(seg.len), a = std::to_string(u.first), b = std::to_string(u.first + u.count);
    std::string in = "s >= " + a + " && s < " + b;
    std::string fetch;
    if (seg.kind == Segment::kLookup) {
      const LookupInfo& li = rb.lookups.at(seg.node);
      for (size_t i = u.first; i < u.first + u.count; ++i) {
        ValueId t = li.tables[static_cast<size_t>(p.x[i].table)];
        std::string at = "[" + std::to_string(i) + "] = ";
        tabs += "    cagr_seg_tab" + at + k.in(t) + ";\n    cagr_seg_rows" + at + k.extent(t, 0) +
                    ";\n    cagr_seg_slot" + at + std::to_string(li.slots[static_cast<size_t>(p.x[i].table)]) +
                    "LL;\n    cagr_seg_sub" + at + std::to_string(p.x[i].sub) + "LL;\n";
      }
      std::string select =
          "          [[maybe_unused]] const " + storageType(g, li.tables[static_cast<size_t>(seg.table)]) +
          "* tab = (const " + storageType(g, li.tables[static_cast<size_t>(seg.table)]) +
          "*)cagr_seg_tab[s];\n          [[maybe_unused]] const long long tab_rows = cagr_seg_rows[s], tab_slot = "
          "cagr_seg_slot[s], gsub = cagr_seg_sub[s];\n";
      // A Gather with [B, S] ids reads row b * S + s for the sample's s-th id.
      auto perSample = productOf(g.type(li.ids).dims, 1);
      std::string row =
          li.gather && perSample && perSample->coef > 1 ? "b * " + std::to_string(perSample->coef) + "LL + gsub" : "b";
      BagCode bag = emitBag(k, li, seg.table, p.vec, row, std::to_string(seg.col) + " + c");
      bounds += "        if (" + in + ") {\n" + select + bag.bounds + "        }\n";
      first += "        if (" + in + ") {\n" + select + bag.first + "        }\n";
      fetch = select + bag.rows;
    } else {
      std::string src = k.in(seg.value), w = std::to_string(*rb.width(seg.value)) + "LL";
      fetch = "          for (int q = 0; q < " + V + "; ++q) a[g][ch][q] = c + q < " + len + " ? cagr_ld(" + src +
              ", b * " + w + " + " + std::to_string(seg.col) + " + c + q) : 0.f;\n";
    }
    rows += "        if (" + in + " && c < " + len + ") {\n" + fetch + "        }\n";
    stores += "        if (" + in + " && c < " + len + ") {\n          const int pos = " + std::to_string(u.pos) +
              " + (s - " + a + ") * " + len + " + c;\n          for (int q = 0; q < " + V + " && c + q < " + len +
              "; ++q) { const int e = pos + q; xs[e / " + D + " * " + Pt + " + e % " + D + "] = a[g][ch][q]; }\n" +
              "        }\n";
  }
  if (rows.empty()) return "";
  std::string round = "      const int s = lane / " + L + " + (r0 + g) * " + std::to_string(perRound) + ";\n";
  std::string loop = "#pragma unroll\n      for (int g = 0; g < " + G + "; ++g) {\n" + round;
  std::string chunk = "#pragma unroll\n      for (int ch = 0; ch < " + CH + "; ++ch) {\n        const int c = sl * " +
                      V + " + ch * " + std::to_string(p.lanes * p.vec) + ";\n";
  std::string code = "    for (int r0 = 0; r0 < " + std::to_string(rounds) + "; r0 += " + G + ") {\n      float a[" +
                     G + "][" + CH + "][" + V + "];\n";
  if (!bounds.empty()) {
    code += "      long long lo[" + G + "], hi[" + G + "], rid[" + G + "];\n" + loop +
            "        lo[g] = hi[g] = 0; rid[g] = -1LL;\n" + bounds + "      }\n" + loop + first + "      }\n";
  }
  code += loop + chunk + rows + "      }\n      }\n";
  code += loop + chunk + stores + "      }\n      }\n";
  if (!tabs.empty()) {
    std::string n = std::to_string(p.x.size());
    prologue += "  __shared__ const void* cagr_seg_tab[" + n + "];\n  __shared__ long long cagr_seg_rows[" + n +
                "], cagr_seg_slot[" + n + "], cagr_seg_sub[" + n + "];\n  if (threadIdx.x == 0) {\n" + tabs +
                "  }\n  __syncthreads();\n";
  }
  return code + "    }\n    __syncwarp();\n";
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
  // Pairwise dots: lane t takes a 4x4 tile of the Gram matrix, rows
  // ti + r * TN against rows tj + s * TN (tj <= ti, TN = ceil(F / 4)), reading
  // float4 chunks of d (rows padded with zeros to a multiple of 4; an odd
  // number of float4s per row keeps a quarter-warp's reads on distinct banks)
  // and summing over d in order; it writes the dots of the lower triangle.
  bool self = flag;
  const int64_t tn = (p.fields + 3) / 4, tiles = tn * (tn + 1) / 2;
  std::string TN = std::to_string(tn), idx = self ? "hi * (hi + 1) / 2 + lo" : "hi * (hi - 1) / 2 + lo";
  return "    for (int t = lane; t < " + std::to_string(tiles) + "; t += 32) {\n      int ti = 0;\n" +
         "      while ((ti + 1) * (ti + 2) / 2 <= t) ++ti;\n      const int tj = t - ti * (ti + 1) / 2;\n" +
         "      float acc[4][4] = {};\n#pragma unroll\n      for (int c = 0; c < " + std::to_string(p.dim4) +
         "; c += 4) {\n        float4 x[4];\n#pragma unroll\n        for (int r = 0; r < 4; ++r) x[r] = "
         "*reinterpret_cast<const float4*>(xs + (ti + r * " +
         TN + ") * " + Pt + " + c);\n#pragma unroll\n" +
         "        for (int s = 0; s < 4; ++s) {\n          const float4 y = *reinterpret_cast<const float4*>(xs + (tj "
         "+ "
         "s * " +
         TN + ") * " + Pt + " + c);\n#pragma unroll\n          for (int r = 0; r < 4; ++r) {\n" +
         "            acc[r][s] = fmaf(x[r].x, y.x, acc[r][s]);\n            acc[r][s] = fmaf(x[r].y, y.y, "
         "acc[r][s]);\n" +
         "            acc[r][s] = fmaf(x[r].z, y.z, acc[r][s]);\n            acc[r][s] = fmaf(x[r].w, y.w, "
         "acc[r][s]);\n" +
         "          }\n        }\n      }\n#pragma unroll\n      for (int r = 0; r < 4; ++r)\n#pragma unroll\n" +
         "        for (int s = 0; s < 4; ++s) {\n          const int u = ti + r * " + TN + ", v = tj + s * " + TN +
         ", hi = u > v ? u : v, lo = u > v ? v : u;\n          if (hi < " + F + (self ? "" : " && hi != lo") +
         " && (ti != tj || r >= s)) ys[" + idx + "] = acc[r][s];\n        }\n    }\n    __syncwarp();\n";
}

// Writes output `u`'s row of sample b: segments from X, the result or outside.
StatusOr<std::string> emitWrite(KernelBuilder& k, const RecPlan& p, RowBuilder& rb, ValueId u) {
  CAGR_ASSIGN_OR_RETURN(Row row, rb.row(u));
  CAGR_ASSIGN_OR_RETURN(int64_t w, rb.width(u));
  std::string code, y = k.out(u), W = std::to_string(w) + "LL";
  int64_t pos = 0;
  for (const Segment& s : row) {
    std::string src;
    if (s.kind == Segment::kZero) {
      src = "0.f";
    } else if (s.kind == Segment::kRec) {
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
  RecPlan p{};
  p.rec = rec;
  p.fm = n.op == OpKind::kFM;
  p.fields = xd[1];
  p.dim = xd[2];
  // Rows of X in shared memory: d padded to whole float4s, an odd number of
  // them per row; fields padded to whole 4-row tiles (zeros).
  p.dim4 = (p.dim + 3) / 4 * 4;
  p.pitch = p.dim4 / 4 % 2 == 0 ? p.dim4 + 4 : p.dim4;
  p.rows = (p.fields + 3) / 4 * 4;
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
  p.perWarp = p.rows * p.pitch + (p.recWidth + 3) / 4 * 4;
  p.warps = static_cast<int>(std::clamp<int64_t>(40000 / (p.perWarp * 4), 1, 4));
  if (p.perWarp * 4 > 48000) return unsupportedAt(g, rec, "one sample's rows do not fit in shared memory");
  std::string prologue, fill;
  // With lookups and rows another kernel writes (DLRM: the tables' rows
  // and the bottom MLP's output), after a generated kernel on its stream,
  // the lookups come first and the kernel waits for its predecessor only
  // after them (KernelBuilder::waitsLate), so they overlap the kernel before
  // it (cuda_program.cc lets that one launch this early). After a library
  // call, which cannot launch it early, the fill stays in one pass (split
  // in two it measured 14.8 -> 16.4 us there).
  // Measured on the H200: DLRM fp32 256 0.0414 ms against 0.0453 without;
  // 4096 unchanged. CAGR_CUDA_PDL_PREFETCH=0 turns it off.
  const bool lookups = !rb.lookups.empty();
  k.waitsLate = lookups && r.afterGenerated && envValue("CAGR_CUDA_PDL_PREFETCH") != "0";
  if (k.waitsLate) {
    fill = emitFill(k, p, rb, prologue, true) + "    CAGR_GRID_WAIT();\n" + emitFill(k, p, rb, prologue, false);
  } else {
    fill = emitFill(k, p, rb, prologue);
  }
  std::string compute = emitCompute(p, n.attrs.getInt(p.fm ? "reduce" : "self_interaction", p.fm ? 1 : 0) != 0),
              writes;
  for (ValueId u : r.outputs) {
    CAGR_ASSIGN_OR_RETURN(std::string w, emitWrite(k, p, rb, u));
    writes += w;
  }
  std::string W = std::to_string(p.warps), per = std::to_string(p.perWarp);
  // Zero once: the padding of X (columns past D, rows past F) stays zero.
  k.body += "  __shared__ __align__(16) float smem[" + W + "][" + per +
            "];\n  const int lane = threadIdx.x % 32, sl = lane % " + std::to_string(p.lanes) +
            ";\n  float* xs = smem[threadIdx.x / 32];\n  float* ys = xs + " + std::to_string(p.rows * p.pitch) +
            ";\n  for (int e = lane; e < " + per + "; e += 32) xs[e] = 0.f;\n  __syncwarp();\n" + prologue +
            "  const long long B = " + k.dim(xd[0]) + ";\n" +
            "  for (long long b = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; b < B; b += (long "
            "long)gridDim.x * blockDim.x / 32) {\n" +
            fill + compute + writes + "    __syncwarp();\n  }\n";
  LaunchRule rule;
  rule.work = {xd[0]};
  rule.threads = static_cast<unsigned>(32 * p.warps);
  rule.perBlock = p.warps;
  // 64 registers: 32 warps per SM, every sample of a 4096 batch resident at once on an H200.
  if (p.warps == 4) rule.minBlocksPerSm = 8;
  std::string name = std::string(p.fm ? "nvrtc.fm" : "nvrtc.interaction") + "[" + std::to_string(rb.lookups.size()) +
                     " lookups, F=" + std::to_string(p.fields) + ", D=" + std::to_string(p.dim) + "]";
  return k.finish(src, rule, name);
}

}  // namespace cagr::cuda::gen
