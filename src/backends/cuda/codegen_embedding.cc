// Lookups (Pattern::kGather, kernel nvrtc.embedding): Gather of table rows,
// EmbeddingBag and table-batched EmbeddingBags — one-hot, fixed pooling and
// multi-hot with offsets (include_last_offset), sum / mean / max, per-sample
// weights, shared id slots, f32 / bf16 / f16 / int8-rowwise tables — plus
// their elementwise tail and concats. One group of L lanes pools one
// (row, table) bag with V-wide row loads (float4 for f32 rows of 4k
// columns); tables of one storage type and width share one pooling loop
// (a switch picks the table); no atomics. Column slices of a lookup's
// output in its group are written straight into their own buffers.
// Other Gathers (selecting ids from
// integer data) run one element per thread through the same tail.
#include <algorithm>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"

namespace cagr::cuda::gen {
namespace {

int vecFor(Precision storage, int64_t d) {
  int widest = storage == Precision::kBF16 || storage == Precision::kF16 ? 8 : 4;
  if (storage == Precision::kInt8Rowwise) return d % 4 == 0 ? 4 : 1;
  int v = widest;
  while (v > 1 && d % v != 0) v /= 2;
  return v;
}

int modeOf(const std::string& m) {
  return m == "mean" ? 1 : m == "max" ? 2 : 0;
}

Status addTable(const Graph& g, NodeId n, ValueId table, LookupInfo& li) {
  const TensorType& t = g.type(table);
  if (t.dtype != DType::kF32) return unsupportedAt(g, n, "table rows are not f32");
  if (t.rank() < 2 || isSymbolic(t.dims[0])) return unsupportedAt(g, n, "the table is not a [rows, ...] tensor");
  auto width = productOf(t.dims, 1);
  if (!width || width->sym != 0) return unsupportedAt(g, n, "table rows have a symbolic width");
  if (g.value(table).mir.storage == Precision::kInt8Rowwise && t.rank() != 2) {
    return unsupportedAt(g, n, "int8 rows of a table with more than 2 dims");
  }
  li.tables.push_back(table);
  li.colOff.push_back(li.width);
  li.dims.push_back(width->coef);
  li.width += width->coef;
  return Status::ok();
}

Status fillIds(const Graph& g, const Node& n, size_t at, LookupInfo& li) {
  li.ids = n.inputs[at];
  if (n.inputs.size() > at + 1) li.offsets = n.inputs[at + 1];
  if (n.op == OpKind::kEmbeddingBag && n.inputs.size() > 3) li.weights = n.inputs[3];
  DType idt = g.type(li.ids).dtype;
  if (idt != DType::kI64 && idt != DType::kI32) return invalidArgument("ids are not integers");
  if (li.offsets != kNoValue) return Status::ok();
  const auto& d = g.type(li.ids).dims;
  size_t fixedRank = n.op == OpKind::kEmbeddingBags ? 3 : 2;
  if (n.op == OpKind::kEmbeddingBags && d.size() >= 2) li.numSlots = d[1];
  if (d.size() == fixedRank) li.pooling = d.back();
  if (isSymbolic(li.pooling) || isSymbolic(li.numSlots)) return invalidArgument("symbolic pooling");
  return Status::ok();
}

}  // namespace

StatusOr<LookupInfo> lookupInfo(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  LookupInfo li;
  li.node = id;
  const auto& out = g.type(n.outputs[0]).dims;
  if (n.op == OpKind::kGather) {
    if (n.attrs.getInt("axis", 0) != 0 && n.attrs.getInt("axis", 0) != -g.type(n.inputs[0]).rank()) {
      return unsupportedAt(g, id, "gathers along an inner axis");
    }
    CAGR_RETURN_IF_ERROR(addTable(g, id, n.inputs[0], li));
    li.ids = n.inputs[1];
    li.gather = true;
    li.rows = g.type(li.ids).dims;
    DType idt = g.type(li.ids).dtype;
    if (idt != DType::kI64 && idt != DType::kI32) return unsupportedAt(g, id, "ids are not integers");
  } else if (n.op == OpKind::kEmbeddingBag || n.op == OpKind::kEmbeddingBags) {
    bool bags = n.op == OpKind::kEmbeddingBags;
    int64_t tables = bags ? n.attrs.getInt("num_tables", 1) : 1;
    for (int64_t t = 0; t < tables; ++t) CAGR_RETURN_IF_ERROR(addTable(g, id, n.inputs[static_cast<size_t>(t)], li));
    Status st = fillIds(g, n, static_cast<size_t>(tables), li);
    if (!st.isOk()) return unsupportedAt(g, id, st.message());
    li.slots = bags ? n.attrs.getInts("slots") : std::vector<int64_t>{};
    li.mode = modeOf(n.attrs.getString("mode", "sum"));
    li.includeLast = n.attrs.getInt("include_last_offset", 0) != 0;
    li.rows = {out[0]};
  } else {
    return unsupportedAt(g, id, "is not a lookup");
  }
  if (li.slots.empty()) {
    for (size_t t = 0; t < li.tables.size(); ++t) li.slots.push_back(static_cast<int64_t>(t));
  }
  li.vec = 8;
  for (size_t t = 0; t < li.tables.size(); ++t) {
    li.vec = std::min(li.vec, vecFor(g.value(li.tables[t]).mir.storage, li.dims[t]));
  }
  return li;
}

std::string tableVars(const Graph& g, const LookupInfo& li, int t) {
  ValueId table = li.tables[static_cast<size_t>(t)];
  std::string type = storageType(g, table);
  return "[[maybe_unused]] const " + type + "* tab = nullptr; [[maybe_unused]] long long tab_rows = 0, tab_slot = 0, tab_col = 0;";
}

std::string tableCase(KernelBuilder& k, const LookupInfo& li, int t) {
  size_t i = static_cast<size_t>(t);
  return "tab = " + k.in(li.tables[i]) + "; tab_rows = " + k.extent(li.tables[i], 0) +
         "; tab_slot = " + std::to_string(li.slots[i]) + "LL; tab_col = " + std::to_string(li.colOff[i]) + "LL;";
}

bool sameTableKind(const Graph& g, const LookupInfo& li, int a, int b) {
  size_t x = static_cast<size_t>(a), y = static_cast<size_t>(b);
  return li.dims[x] == li.dims[y] && storageType(g, li.tables[x]) == storageType(g, li.tables[y]) &&
         g.value(li.tables[x]).mir.storage == g.value(li.tables[y]).mir.storage;
}

std::string emitPool(KernelBuilder& k, const LookupInfo& li, int t, int vec, const std::string& row,
                     const std::string& c, const std::string& acc) {
  const Graph& g = k.g();
  ValueId table = li.tables[static_cast<size_t>(t)];
  std::string tab = g.value(table).mir.storage == Precision::kInt8Rowwise ? "cagr_i8{tab}" : "tab";
  std::string ids = k.in(li.ids), D = std::to_string(li.dims[static_cast<size_t>(t)]) + "LL";
  bool w = li.weights != kNoValue;
  std::string targs = "<" + std::to_string(vec) + ", " + std::to_string(li.mode) + ", " + (w ? "true" : "false") + ">";
  std::string wp = w ? k.in(li.weights) : "(const float*)nullptr";
  std::string call = "cagr_pool" + targs + "(" + tab + ", tab_rows, " + D + ", ";
  if (li.gather) {
    return "        { long long id = (long long)" + ids + "[" + row + "]; if (id < 0) id += tab_rows;\n" +
           "          " + call + "&id, 1, nullptr, " + c + ", " + acc + "); }\n";
  }
  bool bags = g.node(li.node).op == OpKind::kEmbeddingBags;
  if (li.offsets == kNoValue) {
    std::string P = std::to_string(li.pooling) + "LL";
    std::string base =
        bags ? "(" + row + " * " + std::to_string(li.numSlots) + "LL + tab_slot) * " + P : row + " * " + P;
    return "        " + call + ids + " + " + base + ", " + P + ", " + (w ? wp + " + " + base : wp) + ", " + c + ", " +
           acc + ");\n";
  }
  std::string len = bags ? k.dim(g.type(li.ids).dims.back()) : k.dims(li.ids);
  std::string oc = k.dim(g.type(li.offsets).dims.back()), rows = k.size(li.rows), off = k.in(li.offsets);
  std::string ob = bags ? "tab_slot * " + oc + " + " : "", idBase = bags ? "tab_slot * " + len : "0LL";
  std::string last = li.includeLast ? "true" : "(" + row + " + 1 < " + rows + ")";
  return "        { const long long b0 = (long long)" + off + "[" + ob + row + "];\n" +
         "          const long long b1 = " + last + " ? (long long)" + off + "[" + ob + row + " + 1] : " + len + ";\n" +
         "          " + call + ids + " + " + idBase + " + b0, b1 > b0 ? b1 - b0 : 0LL, " + (w ? wp + " + b0" : wp) +
         ", " + c + ", " + acc + "); }\n";
}

namespace {

std::string describe(const Graph& g, const LookupInfo& li) {
  static const char* const kModes[] = {"sum", "mean", "max"};
  std::string s = std::to_string(li.tables.size()) + (li.tables.size() == 1 ? " table" : " tables");
  s += li.gather                ? ", one-hot"
       : li.offsets != kNoValue ? ", multi-hot"
       : li.pooling == 1        ? ", one-hot"
                                : ", fixed pooling";
  if (!li.gather) s += std::string(", ") + kModes[li.mode];
  Precision p = g.value(li.tables[0]).mir.storage;
  return s + ", " + precisionName(p);
}

// The columns [lo, hi) that tables of one kind fill, `vec` wide, and
// whether each table's first column is a multiple of vec.
struct KindColumns {
  int64_t lo = 0, hi = 0;
  int vec = 1;
  bool aligned = true;
};

// Stores of a[0..vec) at column `col` of a row of `width` columns of `y`
// (elements of `type`: float, or __nv_bfloat16 / __half for a slice stored
// so by cuda_storage.cc), which holds the lookup's columns [c0, c0 + width):
// none when the kind's columns miss the window, no bounds test when they lie
// inside it; float2 / float4 (two float4 for 8; 2-8 bf16 / f16 as one store)
// when the tables' columns, the window and the row start on a multiple of vec.
std::string storeColumns(const std::string& y, const std::string& type, int64_t c0, int64_t width,
                         const KindColumns& kc) {
  const int vec = kc.vec;
  std::string V = std::to_string(vec), W = std::to_string(width) + "LL";
  if (kc.hi <= c0 || kc.lo >= c0 + width) return "";
  bool aligned = kc.aligned && c0 % vec == 0 && width % vec == 0;
  bool whole = kc.lo >= c0 && kc.hi <= c0 + width;
  auto window = [&](const std::string& c) {
    return "if (" + c + " >= " + std::to_string(c0) + "LL && " + c + " < " + std::to_string(c0 + width) + "LL) ";
  };
  auto at = [&](const std::string& c) { return c0 == 0 ? c : "(" + c + " - " + std::to_string(c0) + "LL)"; };
  const std::string open = "        " + (whole ? "" : window("col"));
  if (aligned && (vec == 4 || vec == 2) && type == "float") {
    std::string vt = "float" + V;
    return open + "*reinterpret_cast<" + vt + "*>(" + y + " + row * " + W + " + " + at("col") + ") = make_" + vt +
           "(a[0], a[1]" + (vec == 4 ? ", a[2], a[3]" : "") + ");\n";
  }
  if (aligned && vec == 8 && type == "float") {  // 16-bit tables into f32 columns: two float4 stores, not eight
    // floats (DCN-v2 bf16 4096 on an H100: the lookup kernel 22 us -> 12; f32 tables 13)
    const std::string to = "reinterpret_cast<float4*>(" + y + " + row * " + W + " + " + at("col") + ")";
    return open + "{ float4* v = " + to + "; v[0] = make_float4(a[0], a[1], a[2], a[3]); " +
           "v[1] = make_float4(a[4], a[5], a[6], a[7]); }\n";
  }
  if (aligned && (vec == 8 || vec == 4 || vec == 2) && (type == "__nv_bfloat16" || type == "__half")) {
    const bool bf = type == "__nv_bfloat16";
    const std::string pt = bf ? "__nv_bfloat162" : "__half2", cvt = bf ? "__floats2bfloat162_rn" : "__floats2half2_rn";
    const std::string wide = vec == 8 ? "uint4" : vec == 4 ? "uint2" : "unsigned";
    std::string pairs;
    for (int i = 0; i < vec / 2; ++i) {
      pairs += (i ? ", " : "") + cvt + "(a[" + std::to_string(2 * i) + "], a[" + std::to_string(2 * i + 1) + "])";
    }
    const std::string to = y + " + row * " + W + " + " + at("col");
    return open + "{ alignas(16) const " + pt + " h[" + std::to_string(vec / 2) + "] = {" + pairs +
           "}; *reinterpret_cast<" + wide + "*>(" + to + ") = *reinterpret_cast<const " + wide + "*>(h); }\n";
  }
  return "        for (int q = 0; q < " + V + "; ++q) { const long long cq = col + q; " + (whole ? "" : window("cq")) +
         "cagr_st(" + y + ", row * " + W + " + " + at("cq") + ", a[q]); }\n";
}

// The lambda `sink` that stores `a` (vec pooled values at row `row`, column
// `col` of the lookup's output) for tables of one kind, into the output
// and the column slices, and runs the tail on them.
StatusOr<std::string> emitSink(KernelBuilder& k, const LookupInfo& li, const TailChain& tail,
                               const std::vector<NodeId>& slices, const KindColumns& kc) {
  const Graph& g = k.g();
  ValueId out = g.node(li.node).outputs[0];
  std::string V = std::to_string(kc.vec), W = std::to_string(li.width) + "LL";
  std::string inner;
  if (k.isOutput(out)) inner += storeColumns(k.out(out), storageType(g, out), 0, li.width, kc);
  for (NodeId s : slices) {
    auto r = columnSlice(g, s);
    if (!r) return unsupportedAt(g, s, "is not a column slice of the lookup's output");
    const ValueId y = g.node(s).outputs[0];
    inner += storeColumns(k.out(y), storageType(g, y), r->begin, r->end - r->begin, kc);
  }
  if (!tail.empty()) {
    std::string t;
    CAGR_RETURN_IF_ERROR(tail.emit(k, "a[q]", "l", t, "          ", true));
    inner += "#pragma unroll\n        for (int q = 0; q < " + V + "; ++q) {\n          const long long l = row * " + W +
             " + col + q;\n" + t + "        }\n";
  }
  return "      auto sink = [&](long long row, long long col, const float* a) {\n" + inner + "      };\n";
}

StatusOr<GeneratedKernel> tableLookup(KernelBuilder& k, const LookupInfo& li, const TailChain& tail,
                                      const std::vector<NodeId>& slices, std::string& src) {
  const Graph& g = k.g();
  // Each kind of table (storage, width) loads rows `vec` wide, the widest
  // that divides its width; a lookup has the lanes its longest row needs.
  std::vector<int> vec(li.tables.size());
  int64_t lanes = 1, longest = 1;
  for (size_t t = 0; t < li.tables.size(); ++t) {
    vec[t] = vecFor(g.value(li.tables[t]).mir.storage, li.dims[t]);
    longest = std::max(longest, (li.dims[t] + vec[t] - 1) / vec[t]);
  }
  while (lanes < 32 && lanes < longest) lanes *= 2;
  std::string L = std::to_string(lanes), T = std::to_string(li.tables.size()) + "LL";
  // One pooling loop per kind of table; a switch picks the table.
  // Fixed pooling: items row-major, so a warp reads consecutive ids and writes
  // one contiguous stretch of the output; offsets: table-major, so it reads
  // consecutive offsets of one slot.
  std::string loop = li.offsets == kNoValue ? "    const long long row = g / " + T + ", t = g - row * " + T + ";\n"
                                            : "    const long long t = g / rows, row = g - t * rows;\n";
  std::vector<char> done(li.tables.size(), 0);
  for (size_t t = 0; t < li.tables.size(); ++t) {
    if (done[t]) continue;
    std::string cases;
    KindColumns kc{li.colOff[t], li.colOff[t] + li.dims[t], vec[t], true};
    for (size_t u = t; u < li.tables.size(); ++u) {
      if (done[u] || !sameTableKind(g, li, static_cast<int>(t), static_cast<int>(u))) continue;
      done[u] = 1;
      kc.lo = std::min(kc.lo, li.colOff[u]);
      kc.hi = std::max(kc.hi, li.colOff[u] + li.dims[u]);
      kc.aligned = kc.aligned && li.colOff[u] % vec[t] == 0;
      cases += "      case " + std::to_string(u) + ": " + tableCase(k, li, static_cast<int>(u)) + " break;\n";
    }
    CAGR_ASSIGN_OR_RETURN(std::string sink, emitSink(k, li, tail, slices, kc));
    std::string D = std::to_string(li.dims[t]), V = std::to_string(vec[t]);
    loop += "    {\n      " + tableVars(g, li, static_cast<int>(t)) + "\n      switch (t) {\n" + cases +
            "      default: break;\n      }\n" + sink + "      if (tab != nullptr) for (int c = sl * " + V + "; c < " +
            D + "; c += " + L + " * " + V + ") {\n        float a[" + V + "];\n" +
            emitPool(k, li, static_cast<int>(t), vec[t], "row", "c", "a") +
            "        sink(row, tab_col + c, a);\n      }\n    }\n";
  }
  k.body += "  const long long rows = " + k.size(li.rows) + ";\n  const int sl = threadIdx.x % " + L + ";\n" +
            gridStride("g", "rows * " + T, loop, L);
  CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
  LaunchRule rule;
  rule.work = li.rows;
  rule.work.push_back(static_cast<Dim>(li.tables.size()));
  rule.perBlock = 256 / lanes;
  std::string cut = slices.empty() ? "" : "+" + std::to_string(slices.size()) + " column slices";
  return k.finish(src, rule, "nvrtc.embedding[" + describe(g, li) + "]" + tail.suffix(g) + cut);
}

// A Gather that is no table lookup: one output element per thread.
StatusOr<GeneratedKernel> elementGather(KernelBuilder& k, NodeId a, const TailChain& tail, std::string& src) {
  const Graph& g = k.g();
  const Node& n = g.node(a);
  if (n.op != OpKind::kGather) return unsupportedAt(g, a, "no lookup kernel for it");
  if (g.value(n.inputs[0]).mir.storage == Precision::kInt8Rowwise)
    return unsupportedAt(g, a, "int8 rows gathered inside rows");
  std::string code;
  CAGR_ASSIGN_OR_RETURN(std::string from, gatherSource(k, a, "i", code, "    "));
  code += "    const " + computeType(g.type(n.outputs[0]).dtype) + " x = cagr_ld(" + k.in(n.inputs[0]) + ", " + from +
          ");\n";
  CAGR_RETURN_IF_ERROR(tail.emit(k, "x", "i", code, "    "));
  k.body += gridStride("i", k.dims(n.outputs[0]), code);
  CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
  LaunchRule rule;
  rule.work = g.type(n.outputs[0]).dims;
  rule.maxBlocks = 4096;
  return k.finish(src, rule, "nvrtc.gather" + tail.suffix(g));
}

}  // namespace

StatusOr<GeneratedKernel> generateLookup(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  NodeId a = r.shape.anchor >= 0 ? r.shape.anchor : r.members.front();
  KernelBuilder k(r, "lookup", src);
  std::vector<NodeId> slices;
  for (NodeId m : r.members) {
    if (g.node(m).op == OpKind::kSlice && g.node(m).inputs[0] == g.node(a).outputs[0]) slices.push_back(m);
  }
  if (!slices.empty()) {  // the group is the lookup and its column slices
    if (slices.size() + 1 != r.members.size()) return unsupportedAt(g, a, "column slices and a tail in one group");
    auto li = lookupInfo(g, a);
    if (!li.isOk()) return li.status();
    if (g.type(g.node(a).outputs[0]).rank() != 2) return unsupportedAt(g, a, "column slices of a rank-3 output");
    return tableLookup(k, *li, TailChain(), slices, src);
  }
  CAGR_ASSIGN_OR_RETURN(TailChain tail, TailChain::plan(k, a));
  auto li = lookupInfo(g, a);
  if (!li.isOk()) {
    if (li.status().code() != ErrorCode::kUnsupported) return li.status();
    return elementGather(k, a, tail, src);
  }
  return tableLookup(k, *li, tail, {}, src);
}

}  // namespace cagr::cuda::gen

namespace cagr::cuda {

std::optional<ColumnRange> columnSlice(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (node.op != OpKind::kSlice) return std::nullopt;
  const auto& in = g.type(node.inputs[0]).dims;
  auto sp = sliceParams(node);
  if (!sp.isOk() || in.size() != 2 || isSymbolic(in[1])) return std::nullopt;
  ColumnRange r{0, in[1]};
  for (size_t i = 0; i < sp->axes.size(); ++i) {
    auto ax = normAxis(sp->axes[i], 2);
    if (!ax) return std::nullopt;
    if (*ax == 0) {
      if (!isFullSlice(sp->starts[i], sp->ends[i], sp->steps[i])) return std::nullopt;
      continue;
    }
    SliceRange c = normalizeSlice(sp->starts[i], sp->ends[i], sp->steps[i], in[1]);
    if (c.step != 1 || c.count <= 0) return std::nullopt;
    r = {c.start, c.start + c.count};
  }
  return r;
}

}  // namespace cagr::cuda
