// Graph::verify and Graph::inferTypes: the checks every pass may rely on.
#include <string>

#include "cagr/graph.h"
#include "ir/op_table.h"
#include "support/sizes.h"

namespace cagr {
namespace {

std::string nodeWhere(const Node& n) { return "node '" + n.name + "' (" + opInfo(n.op).name + ")"; }

// A value's size with every symbol at 1 must be representable (the runtime
// checks the bound sizes again).
Status checkSize(const Graph& g, const TensorType& t, const std::string& what) {
  std::vector<int64_t> dims;
  for (Dim d : t.dims) dims.push_back(isSymbolic(d) ? dimCoef(d) : d);
  return checkedTensorBytes(t.dtype, dims, what + " " + g.typeString(t)).status();
}

// Recomputes `n`'s output types; with `compare`, checks they equal the stored ones.
Status checkNode(Graph& g, const Node& n, bool compare) {
  const OpInfo& info = opInfo(n.op);
  int nIn = static_cast<int>(n.inputs.size());
  if (nIn < info.minInputs || nIn > info.maxInputs) return invalidArgument(nodeWhere(n) + ": wrong number of inputs");
  CAGR_RETURN_IF_ERROR(checkAttrs(n.op, n.attrs).withContext(nodeWhere(n)));
  std::vector<TensorType> outs;
  CAGR_RETURN_IF_ERROR(info.inferShape(g, n, outs).withContext(nodeWhere(n)));
  if (outs.size() != n.outputs.size()) return invalidArgument(nodeWhere(n) + ": wrong number of outputs");
  for (size_t i = 0; i < outs.size(); ++i) {
    Value& v = g.mutableValue(n.outputs[i]);
    if (compare && v.type != outs[i]) {
      return invalidArgument(nodeWhere(n) + ": output " + std::to_string(i) + " is " + g.typeString(v.type) +
                             " but its inputs give " + g.typeString(outs[i]));
    }
    CAGR_RETURN_IF_ERROR(checkSize(g, outs[i], nodeWhere(n) + ": output " + std::to_string(i)));
    v.type = outs[i];
  }
  return Status::ok();
}

Status walk(Graph& g, bool compare) {
  std::vector<bool> defined(g.numValues(), false);
  for (ValueId v : g.inputs()) {
    defined[static_cast<size_t>(v)] = true;
    CAGR_RETURN_IF_ERROR(checkSize(g, g.type(v), "input '" + g.value(v).name + "'"));
  }
  for (size_t v = 0; v < g.numValues(); ++v) {
    if (g.isConstant(static_cast<ValueId>(v))) defined[v] = true;
  }
  for (const Node& n : g.nodes()) {
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      if (v < 0 || static_cast<size_t>(v) >= g.numValues() || !defined[static_cast<size_t>(v)]) {
        return invalidArgument(nodeWhere(n) + ": operand %" + std::to_string(v) + " is used before it is defined");
      }
    }
    CAGR_RETURN_IF_ERROR(checkNode(g, n, compare));
    for (ValueId v : n.outputs) {
      if (defined[static_cast<size_t>(v)]) return invalidArgument(nodeWhere(n) + ": value defined twice");
      defined[static_cast<size_t>(v)] = true;
    }
  }
  for (ValueId v : g.outputs()) {
    if (v < 0 || static_cast<size_t>(v) >= g.numValues() || !defined[static_cast<size_t>(v)]) {
      return invalidArgument("graph output %" + std::to_string(v) + " is undefined");
    }
  }
  return Status::ok();
}

}  // namespace

Status Graph::verify() const {
  // checkNode writes the types it recomputes; on a copy, so verify stays const.
  Graph copy = *this;
  return walk(copy, /*compare=*/true);
}

Status Graph::inferTypes() { return walk(*this, /*compare=*/false); }

}  // namespace cagr
