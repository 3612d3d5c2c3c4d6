// Data movement (single nodes and in-place concats): Transpose, Slice,
// Expand, Gather (any axis, ids wrapped like ONNX), GatherND, Concat and
// Split. Each output element is one thread's load and store in a
// grid-stride loop (writes coalesced; the source index is mixed-radix
// arithmetic over static dims, divisions by constants). A kConcatInPlace
// group is a plain concat here: the runtime gives the producers no strided
// views of the concat buffer, so the copy stays.
#include <algorithm>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"

namespace cagr::cuda::gen {
namespace {

// Coordinate j of linear index `idx` in `dims`.
std::string coordinate(KernelBuilder& k, const std::vector<Dim>& dims, size_t j, const std::string& idx) {
  std::string c = "(" + idx + ")";
  if (j + 1 < dims.size()) c = "(" + c + " / " + k.size(dims, j + 1) + ")";
  if (j > 0) c = "(" + c + " % " + k.dim(dims[j]) + ")";
  return c;
}

StatusOr<std::string> transposeSource(KernelBuilder& k, const Node& n, const std::string& idx) {
  const auto& in = k.g().type(n.inputs[0]).dims;
  const auto& out = k.g().type(n.outputs[0]).dims;
  std::vector<int64_t> perm = n.attrs.getInts("perm");
  if (perm.empty()) {
    for (size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  std::string sum;
  for (size_t j = 0; j < out.size(); ++j) {
    auto ax = normAxis(perm[j], static_cast<int64_t>(in.size()));
    if (!ax) return invalidArgument("bad perm");
    if (out[j] == 1) continue;
    std::string term = coordinate(k, out, j, idx);
    size_t a = static_cast<size_t>(*ax);
    if (a + 1 < in.size()) term += " * " + k.size(in, a + 1);
    sum += (sum.empty() ? "" : " + ") + term;
  }
  return sum.empty() ? "0LL" : "(" + sum + ")";
}

StatusOr<std::string> sliceSource(KernelBuilder& k, NodeId id, const std::string& idx) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  const auto& in = g.type(n.inputs[0]).dims;
  const auto& out = g.type(n.outputs[0]).dims;
  CAGR_ASSIGN_OR_RETURN(SliceParams sp, sliceParams(n));
  std::vector<int64_t> start(in.size(), 0), step(in.size(), 1);
  for (size_t i = 0; i < sp.axes.size(); ++i) {
    auto ax = normAxis(sp.axes[i], static_cast<int64_t>(in.size()));
    if (!ax) return unsupportedAt(g, id, "slice axis out of range");
    size_t a = static_cast<size_t>(*ax);
    if (isSymbolic(in[a])) {
      if (!isFullSlice(sp.starts[i], sp.ends[i], sp.steps[i])) return unsupportedAt(g, id, "slices a symbolic axis");
      continue;
    }
    SliceRange r = normalizeSlice(sp.starts[i], sp.ends[i], sp.steps[i], in[a]);
    start[a] = r.start;
    step[a] = r.step;
  }
  std::string sum;
  for (size_t j = 0; j < out.size(); ++j) {
    std::string c = out[j] == 1 ? "0LL" : coordinate(k, out, j, idx);
    std::string term = "(" + std::to_string(start[j]) + "LL + " + c + " * " + std::to_string(step[j]) + "LL)";
    if (j + 1 < in.size()) term += " * " + k.size(in, j + 1);
    sum += (sum.empty() ? "" : " + ") + term;
  }
  return sum.empty() ? "0LL" : "(" + sum + ")";
}

// Data index of GatherND output element `idx` (statements into `code`).
StatusOr<std::string> gatherNdSource(KernelBuilder& k, NodeId id, const std::string& idx, std::string& code) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  const auto& data = g.type(n.inputs[0]).dims;
  const auto& ind = g.type(n.inputs[1]).dims;
  size_t b = static_cast<size_t>(n.attrs.getInt("batch_dims", 0));
  Dim depthDim = ind.back();
  if (isSymbolic(depthDim) || b + static_cast<size_t>(depthDim) > data.size()) {
    return unsupportedAt(g, id, "index depth is not static");
  }
  size_t depth = static_cast<size_t>(depthDim);
  std::string ids = k.in(n.inputs[1]);
  std::string block = k.size(data, b + depth), tuples = k.size(ind, b, ind.size() - 1);
  code += "    const long long row = (" + idx + ") / " + block + ";\n";
  std::string batch = b == 0 ? "" : "(row / " + tuples + ") * " + k.size(data, b) + " + ";
  code += "    long long src = " + batch + "(" + idx + ") % " + block + ";\n";
  for (size_t j = 0; j < depth; ++j) {
    std::string d = k.dim(data[b + j]);
    code += "    { long long v = (long long)" + ids + "[row * " + std::to_string(depth) + "LL + " + std::to_string(j) +
            "]; if (v < 0) v += " + d + "; src += v * " + k.size(data, b + j + 1) + "; }\n";
  }
  return std::string("src");
}

Status emitSplit(KernelBuilder& k, NodeId id, std::string& code) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  const auto& in = g.type(n.inputs[0]).dims;
  size_t a = static_cast<size_t>(*normAxis(n.attrs.getInt("axis", 0), static_cast<int64_t>(in.size())));
  std::string off;
  for (ValueId piece : n.outputs) {
    if (k.isOutput(piece)) {
      std::string from = blockIndex(k, g.type(piece).dims, in, a, off, "i");
      code += gridStride("i", k.dims(piece),
                         "    cagr_st(" + k.out(piece) + ", i, cagr_ld(" + k.in(n.inputs[0]) + ", " + from + "));\n");
    }
    off += " + " + k.size(g.type(piece).dims, a);
  }
  return Status::ok();
}

}  // namespace

StatusOr<std::string> gatherSource(KernelBuilder& k, NodeId id, const std::string& idx, std::string& code,
                                   const std::string& indent) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  const auto& data = g.type(n.inputs[0]).dims;
  const auto& ind = g.type(n.inputs[1]).dims;
  auto ax = normAxis(n.attrs.getInt("axis", 0), static_cast<int64_t>(data.size()));
  if (!ax) return unsupportedAt(g, id, "axis out of range");
  size_t a = static_cast<size_t>(*ax);
  std::string inner = k.size(data, a + 1), count = k.size(ind), dim = k.dim(data[a]);
  std::string o = k.fresh("o"), v = k.fresh("id"), s = k.fresh("src");
  code += indent + "const long long " + o + " = (" + idx + ") / " + inner + ";\n";
  code += indent + "long long " + v + " = (long long)" + k.in(n.inputs[1]) + "[" + o + " % " + count + "];\n";
  code += indent + "if (" + v + " < 0) " + v + " += " + dim + ";\n";
  code += indent + "const long long " + s + " = ((" + o + " / " + count + ") * " + dim + " + " + v + ") * " + inner +
          " + (" + idx + ") % " + inner + ";\n";
  return s;
}

// A Concat's `pad` (ops.def; lower/pad_gemm_dims.h sets it): zeros in the
// columns after the last operand.
Status emitConcatZeroTail(KernelBuilder& k, NodeId id, std::string& code) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  const auto& od = g.type(n.outputs[0]).dims;
  auto axis = normAxis(n.attrs.getInt("axis", 0), static_cast<int64_t>(od.size()));
  if (!axis) return unsupportedAt(g, id, "axis out of range");
  size_t a = static_cast<size_t>(*axis);
  int64_t used = 0;
  for (ValueId u : n.inputs) {
    Dim d = g.type(u).dims[a];
    if (isSymbolic(d)) return Status::ok();  // a batch-axis concat is never padded
    used += d;
  }
  if (isSymbolic(od[a]) || od[a] <= used) return Status::ok();
  std::vector<Dim> tail = od;
  tail[a] = od[a] - used;
  std::string inner = k.size(od, a + 1), chunk = "(" + std::to_string(tail[a]) + "LL * " + inner + ")";
  code += gridStride("i", k.size(tail), "    cagr_st(" + k.out(n.outputs[0]) + ", (i) / " + chunk + " * (" +
                                            std::to_string(od[a]) + "LL * " + inner + ") + " + std::to_string(used) +
                                            "LL * " + inner + " + (i) % " + chunk + ", 0.f);\n");
  return Status::ok();
}

StatusOr<GeneratedKernel> generateMovement(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  if (r.members.size() != 1) return unsupportedAt(g, r.members.front(), "data movement runs one node per kernel");
  NodeId id = r.members.front();
  const Node& n = g.node(id);
  KernelBuilder k(r, "move", src);
  LaunchRule rule;
  rule.maxBlocks = 4096;
  std::string name = std::string("nvrtc.") + opInfo(n.op).mnemonic;
  if (r.shape.pattern == Pattern::kConcatInPlace) name = "nvrtc.concat_inplace(copy)";
  if (n.op == OpKind::kConcat) {
    for (size_t i = 0; i < n.inputs.size(); ++i)
      CAGR_RETURN_IF_ERROR(emitConcatCopy(k, id, i, k.out(n.outputs[0]), k.body));
    CAGR_RETURN_IF_ERROR(emitConcatZeroTail(k, id, k.body));
    rule.work = g.type(n.outputs[0]).dims;
    return k.finish(src, rule, name);
  }
  if (n.op == OpKind::kSplit) {
    CAGR_RETURN_IF_ERROR(emitSplit(k, id, k.body));
    rule.work = g.type(n.inputs[0]).dims;
    return k.finish(src, rule, name);
  }
  std::string code, from;
  switch (n.op) {
    case OpKind::kTranspose: {
      CAGR_ASSIGN_OR_RETURN(from, transposeSource(k, n, "i"));
      break;
    }
    case OpKind::kSlice: {
      CAGR_ASSIGN_OR_RETURN(from, sliceSource(k, id, "i"));
      break;
    }
    case OpKind::kExpand:
      from = broadcastIndex(k, g.type(n.outputs[0]).dims, "i", g.type(n.inputs[0]).dims);
      break;
    case OpKind::kGather: {
      CAGR_ASSIGN_OR_RETURN(from, gatherSource(k, id, "i", code, "    "));
      break;
    }
    case OpKind::kGatherND: {
      CAGR_ASSIGN_OR_RETURN(from, gatherNdSource(k, id, "i", code));
      break;
    }
    default:
      return unsupportedAt(g, id, "no data-movement kernel for this op");
  }
  if (g.value(n.inputs[0]).mir.storage == Precision::kInt8Rowwise) return unsupportedAt(g, id, "reads int8 rows");
  code += "    cagr_st(" + k.out(n.outputs[0]) + ", i, cagr_ld(" + k.in(n.inputs[0]) + ", " + from + "));\n";
  k.body += gridStride("i", k.dims(n.outputs[0]), code);
  rule.work = g.type(n.outputs[0]).dims;
  return k.finish(src, rule, name);
}

}  // namespace cagr::cuda::gen
