// Shape rules for elementwise, linear-algebra and data-movement ops (the
// recommendation ops are in shape_rules_rec.cc). Each rule reads its
// operands' types and attributes and produces the output types, reporting
// what is inconsistent; symbolic dims flow through (see ir/dims.h).
#include <algorithm>
#include <map>

#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"

namespace cagr {

std::string dimsString(const Graph& g, const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + g.dimString(dims[i]);
  return s + "]";
}

StatusOr<std::vector<Dim>> broadcastDims(const Graph& g, const std::vector<Dim>& a, const std::vector<Dim>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<Dim> out(r);
  for (size_t i = 0; i < r; ++i) {
    Dim da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    Dim db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (g.sameDim(da, db) || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return invalidArgument("shapes " + dimsString(g, a) + " and " + dimsString(g, b) + " do not broadcast");
    }
  }
  return out;
}

Status shapeUnary(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  outs = {g.type(n.inputs[0])};
  return Status::ok();
}

Status shapeCast(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  CAGR_ASSIGN_OR_RETURN(DType to, parseDType(stringAttr(n, "to")));
  outs = {TensorType{to, g.type(n.inputs[0]).dims}};
  return Status::ok();
}

Status shapeBroadcast(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& a = g.type(n.inputs[0]);
  const TensorType& b = g.type(n.inputs[1]);
  if (a.dtype != b.dtype && n.op != OpKind::kPow) {
    return invalidArgument(std::string("operand types differ: ") + dtypeName(a.dtype) + " vs " + dtypeName(b.dtype));
  }
  CAGR_ASSIGN_OR_RETURN(auto dims, broadcastDims(g, a.dims, b.dims));
  outs = {TensorType{a.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeWhere(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& c = g.type(n.inputs[0]);
  const TensorType& a = g.type(n.inputs[1]);
  const TensorType& b = g.type(n.inputs[2]);
  if (c.dtype != DType::kBool) return invalidArgument("condition must be i1");
  if (a.dtype != b.dtype) return invalidArgument("value operand types differ");
  CAGR_ASSIGN_OR_RETURN(auto ab, broadcastDims(g, a.dims, b.dims));
  CAGR_ASSIGN_OR_RETURN(auto dims, broadcastDims(g, c.dims, ab));
  outs = {TensorType{a.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeMatMul(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  TensorType a = g.type(n.inputs[0]);
  TensorType b = g.type(n.inputs[1]);
  if (a.rank() == 0 || b.rank() == 0) return invalidArgument("matmul operands must have rank >= 1");
  bool aVec = a.rank() == 1, bVec = b.rank() == 1;
  if (aVec) a.dims.insert(a.dims.begin(), 1);
  if (bVec) b.dims.push_back(1);
  Dim k1 = a.dims.back(), k2 = b.dims[b.dims.size() - 2];
  if (k1 != k2) {
    return invalidArgument("contraction dims differ: " + dimsString(g, a.dims) + " x " + dimsString(g, b.dims));
  }
  std::vector<Dim> ba(a.dims.begin(), a.dims.end() - 2), bb(b.dims.begin(), b.dims.end() - 2);
  CAGR_ASSIGN_OR_RETURN(auto dims, broadcastDims(g, ba, bb));
  if (!aVec) dims.push_back(a.dims[a.dims.size() - 2]);
  if (!bVec) dims.push_back(b.dims.back());
  outs = {TensorType{a.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeGemm(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& a = g.type(n.inputs[0]);
  const TensorType& b = g.type(n.inputs[1]);
  if (a.rank() != 2 || b.rank() != 2) return invalidArgument("gemm operands must be 2-D");
  bool ta = intAttr(n, "transA") != 0, tb = intAttr(n, "transB") != 0;
  Dim m = a.dims[ta ? 1 : 0], ka = a.dims[ta ? 0 : 1];
  Dim kb = b.dims[tb ? 1 : 0], nn = b.dims[tb ? 0 : 1];
  if (ka != kb) {
    return invalidArgument("contraction dims differ: A " + dimsString(g, a.dims) + " B " + dimsString(g, b.dims));
  }
  std::vector<Dim> dims{m, nn};
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    CAGR_ASSIGN_OR_RETURN(auto bc, broadcastDims(g, dims, g.type(n.inputs[2]).dims));
    if (bc != dims) return invalidArgument("C " + dimsString(g, g.type(n.inputs[2]).dims) + " does not broadcast to the output");
  }
  outs = {TensorType{a.dtype, std::move(dims)}};
  return Status::ok();
}

StatusOr<EinsumSpec> parseEinsum(const std::string& eq, size_t numInputs) {
  EinsumSpec spec;
  size_t arrow = eq.find("->");
  if (arrow == std::string::npos) return unsupported("einsum '" + eq + "' needs an explicit '->' output");
  std::string lhs = eq.substr(0, arrow);
  spec.output = eq.substr(arrow + 2);
  std::string cur;
  for (char c : lhs + ",") {
    if (c == ' ') continue;
    if (c == ',') {
      spec.inputs.push_back(cur);
      cur.clear();
    } else if (c >= 'a' && c <= 'z') {
      cur += c;
    } else if (c >= 'A' && c <= 'Z') {
      cur += c;
    } else {
      return unsupported("einsum '" + eq + "': only letters are supported (no ellipsis)");
    }
  }
  std::erase(spec.output, ' ');
  if (spec.inputs.size() != numInputs) {
    return invalidArgument("einsum '" + eq + "' names " + std::to_string(spec.inputs.size()) + " operands, got " +
                           std::to_string(numInputs));
  }
  for (const auto& term : spec.inputs) {
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.find(term[i], i + 1) != std::string::npos) {
        return unsupported("einsum '" + eq + "': repeated index within an operand");
      }
    }
  }
  return spec;
}

Status shapeEinsum(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  CAGR_ASSIGN_OR_RETURN(EinsumSpec spec, parseEinsum(stringAttr(n, "equation"), n.inputs.size()));
  std::map<char, Dim> size;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const TensorType& t = g.type(n.inputs[i]);
    if (static_cast<size_t>(t.rank()) != spec.inputs[i].size()) {
      return invalidArgument("einsum operand " + std::to_string(i) + " has rank " + std::to_string(t.rank()) +
                             ", equation term '" + spec.inputs[i] + "'");
    }
    for (size_t k = 0; k < spec.inputs[i].size(); ++k) {
      char c = spec.inputs[i][k];
      auto [it, inserted] = size.emplace(c, t.dims[k]);
      if (!inserted && it->second != t.dims[k]) {
        if (it->second == 1) {
          it->second = t.dims[k];
        } else if (t.dims[k] != 1) {
          return invalidArgument(std::string("einsum index '") + c + "' has inconsistent sizes");
        }
      }
    }
  }
  std::vector<Dim> dims;
  for (char c : spec.output) {
    auto it = size.find(c);
    if (it == size.end()) return invalidArgument(std::string("einsum output index '") + c + "' is not an input index");
    dims.push_back(it->second);
  }
  outs = {TensorType{g.type(n.inputs[0]).dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeConcat(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& first = g.type(n.inputs[0]);
  auto axis = normAxis(intAttr(n, "axis"), first.rank());
  if (!axis) return invalidArgument("axis out of range");
  std::vector<Dim> dims = first.dims;
  SymSize total = sizeOf(first.dims[static_cast<size_t>(*axis)]);
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    const TensorType& t = g.type(n.inputs[i]);
    if (t.rank() != first.rank() || t.dtype != first.dtype) {
      return invalidArgument("operand " + std::to_string(i) + " " + g.typeString(t) + " does not match " +
                             g.typeString(first));
    }
    for (size_t k = 0; k < dims.size(); ++k) {
      if (static_cast<int64_t>(k) != *axis && !g.sameDim(t.dims[k], dims[k])) {
        return invalidArgument("operand " + std::to_string(i) + " " + g.typeString(t) + " differs from " +
                               g.typeString(first) + " off the concat axis");
      }
    }
    SymSize s = sizeOf(t.dims[static_cast<size_t>(*axis)]);
    if (s.sym != total.sym) return unsupported("concatenating symbolic and static sizes along the concat axis");
    total.coef += s.coef;
  }
  int64_t pad = n.attrs.getInt("pad", 0);
  if (pad < 0) return invalidArgument("pad " + std::to_string(pad) + " is negative");
  if (pad > 0 && total.sym != 0) return unsupported("zero padding along a symbolic concat axis");
  total.coef += pad;
  dims[static_cast<size_t>(*axis)] = total.toDim();
  outs = {TensorType{first.dtype, std::move(dims)}};
  return Status::ok();
}

StatusOr<std::vector<Dim>> reshapeDims(const Graph& g, const std::vector<Dim>& in, const std::vector<int64_t>& target) {
  auto total = productOf(in);
  if (!total) return unsupported("reshape of a tensor whose size mixes two symbols");
  std::vector<Dim> dims(target.size());
  int inferAt = -1;
  SymSize known{1, 0};
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t t = target[i];
    if (t == -1) {
      if (inferAt >= 0) return invalidArgument("reshape target has two -1 entries");
      inferAt = static_cast<int>(i);
      continue;
    }
    if (t == 0) {
      if (i >= in.size()) return invalidArgument("reshape target copies dim " + std::to_string(i) + " that the input lacks");
      dims[i] = in[i];
    } else if (t > 0 || t <= -kSymStride) {
      dims[i] = t;  // static, or a symbolic Dim (e.g. N when the batch is not at position i of the input)
    } else {
      return invalidArgument("reshape target has invalid entry " + std::to_string(t));
    }
    auto next = mulSize(known, sizeOf(dims[i]));
    if (!next) return unsupported("reshape target mixes two symbols");
    known = *next;
  }
  if (inferAt >= 0) {
    auto rest = divSize(*total, known);
    if (!rest) {
      return invalidArgument("cannot reshape " + dimsString(g, in) + " to " + dimsString(g, std::vector<Dim>(target)));
    }
    dims[static_cast<size_t>(inferAt)] = rest->toDim();
  } else if (known.coef != total->coef || known.sym != total->sym) {
    return invalidArgument("cannot reshape " + dimsString(g, in) + " to " + dimsString(g, std::vector<Dim>(target)));
  }
  return dims;
}

Status shapeReshape(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  CAGR_ASSIGN_OR_RETURN(auto dims, reshapeDims(g, in.dims, intsAttr(n, "shape")));
  outs = {TensorType{in.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeFlatten(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  int64_t axis = intAttr(n, "axis");
  if (axis < 0) axis += in.rank();
  if (axis < 0 || axis > in.rank()) return invalidArgument("axis out of range");
  auto lo = productOf(in.dims, 0, static_cast<size_t>(axis));
  auto hi = productOf(in.dims, static_cast<size_t>(axis));
  if (!lo || !hi) return unsupported("flatten of dims that mix two symbols");
  outs = {TensorType{in.dtype, {lo->toDim(), hi->toDim()}}};
  return Status::ok();
}

Status shapeTranspose(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  std::vector<int64_t> perm = intsAttr(n, "perm");
  if (perm.empty()) {
    for (int64_t i = in.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != in.rank()) return invalidArgument("perm length differs from the rank");
  std::vector<bool> seen(perm.size(), false);
  std::vector<Dim> dims;
  for (int64_t p : perm) {
    auto ax = normAxis(p, in.rank());
    if (!ax || seen[static_cast<size_t>(*ax)]) return invalidArgument("perm is not a permutation");
    seen[static_cast<size_t>(*ax)] = true;
    dims.push_back(in.dims[static_cast<size_t>(*ax)]);
  }
  outs = {TensorType{in.dtype, std::move(dims)}};
  return Status::ok();
}

}  // namespace cagr
