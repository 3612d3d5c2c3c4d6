#include "import/patterns/region.h"

#include <algorithm>
#include <random>

#include "cagr/reference.h"

namespace cagr::import {

std::optional<Region> regionBetween(const Graph& g, const std::vector<ValueId>& ins, ValueId out) {
  const auto& nodes = g.nodes();
  std::vector<char> fromIn(g.numValues(), 0), toOut(g.numValues(), 0);
  for (ValueId v : ins) fromIn[static_cast<size_t>(v)] = 1;
  for (const Node& n : nodes) {
    bool reached = false;
    for (ValueId v : n.inputs) reached = reached || (v != kNoValue && fromIn[static_cast<size_t>(v)]);
    for (ValueId v : n.outputs) fromIn[static_cast<size_t>(v)] = reached ? 1 : fromIn[static_cast<size_t>(v)];
  }
  toOut[static_cast<size_t>(out)] = 1;
  Region r{ins, out, {}};
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& n = nodes[i];
    bool feeds = false;
    for (ValueId v : n.outputs) feeds = feeds || toOut[static_cast<size_t>(v)];
    bool isIn = false;
    for (ValueId v : n.outputs) isIn = isIn || std::find(ins.begin(), ins.end(), v) != ins.end();
    if (!feeds || isIn || !fromIn[static_cast<size_t>(n.outputs[0])]) continue;
    r.nodes.insert(r.nodes.begin(), static_cast<NodeId>(i));
    for (ValueId v : n.inputs) {
      if (v != kNoValue) toOut[static_cast<size_t>(v)] = 1;
    }
  }
  if (r.nodes.empty()) return std::nullopt;
  // Closure: operands come from ins, constants or the region; inner values stay inside.
  std::vector<char> inside(g.numValues(), 0);
  for (NodeId id : r.nodes) {
    for (ValueId v : nodes[static_cast<size_t>(id)].outputs) inside[static_cast<size_t>(v)] = 1;
  }
  for (NodeId id : r.nodes) {
    for (ValueId v : nodes[static_cast<size_t>(id)].inputs) {
      if (v == kNoValue || inside[static_cast<size_t>(v)] || g.isConstant(v)) continue;
      if (std::find(ins.begin(), ins.end(), v) == ins.end()) return std::nullopt;
    }
  }
  auto uses = g.useCounts();
  std::vector<int> innerUses(g.numValues(), 0);
  for (NodeId id : r.nodes) {
    for (ValueId v : nodes[static_cast<size_t>(id)].inputs) {
      if (v != kNoValue) ++innerUses[static_cast<size_t>(v)];
    }
  }
  for (NodeId id : r.nodes) {
    for (ValueId v : nodes[static_cast<size_t>(id)].outputs) {
      if (v != out && uses[static_cast<size_t>(v)] != innerUses[static_cast<size_t>(v)]) return std::nullopt;
    }
  }
  return r;
}

Tensor probeTensor(const Graph& g, ValueId v, int64_t batch, uint32_t seed) {
  const TensorType& t = g.type(v);
  std::vector<int64_t> shape;
  for (Dim d : t.dims) shape.push_back(isSymbolic(d) ? dimCoef(d) * (dimSymbol(d) == kBatchSymbol ? batch : 2) : d);
  Tensor out(DType::kF32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = dist(rng);
  return out.dtype() == t.dtype ? out : out.cast(t.dtype);
}

StatusOr<Tensor> evalRegion(const Graph& g, const Region& r, const std::vector<Tensor>& probe) {
  Graph mini;
  std::vector<ValueId> map(g.numValues(), kNoValue);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < r.ins.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    map[static_cast<size_t>(r.ins[i])] = mini.addInput(name, g.type(r.ins[i]));
    feeds.emplace_back(name, probe[i]);
  }
  for (NodeId id : r.nodes) {
    const Node& n = g.node(id);
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) {
      if (v != kNoValue && map[static_cast<size_t>(v)] == kNoValue && g.isConstant(v)) {
        map[static_cast<size_t>(v)] = mini.addConstant(g.value(v).name, g.constants()[static_cast<size_t>(g.value(v).constant)]);
      }
      ins.push_back(v == kNoValue ? kNoValue : map[static_cast<size_t>(v)]);
    }
    CAGR_ASSIGN_OR_RETURN(auto outs, mini.addNode(n.op, ins, n.attrs, n.name, static_cast<int>(n.outputs.size())));
    for (size_t k = 0; k < outs.size(); ++k) map[static_cast<size_t>(n.outputs[k])] = outs[k];
  }
  mini.addOutput(map[static_cast<size_t>(r.out)]);
  CAGR_ASSIGN_OR_RETURN(auto results, runReference(mini, feeds));
  return std::move(results[0]);
}

bool sameFunction(const Graph& g, const Region& r, OpKind candidate, const std::vector<ValueId>& operands,
                  const Attrs& attrs) {
  for (uint32_t trial = 0; trial < 2; ++trial) {
    std::vector<Tensor> probe;
    for (size_t i = 0; i < r.ins.size(); ++i) probe.push_back(probeTensor(g, r.ins[i], 3 + trial, 17 + 31 * trial + i));
    auto want = evalRegion(g, r, probe);
    if (!want.isOk()) return false;
    // The candidate over the same inputs (region inputs by position, others constant).
    Graph cand;
    std::vector<ValueId> ops;
    std::vector<ValueId> inputOf(r.ins.size(), kNoValue);
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (ValueId v : operands) {
      auto it = std::find(r.ins.begin(), r.ins.end(), v);
      if (it != r.ins.end()) {
        size_t k = static_cast<size_t>(it - r.ins.begin());
        if (inputOf[k] == kNoValue) {
          std::string name = "in" + std::to_string(k);
          inputOf[k] = cand.addInput(name, g.type(v));
          feeds.emplace_back(name, probe[k]);
        }
        ops.push_back(inputOf[k]);
      } else {
        ops.push_back(cand.addConstant(g.value(v).name, g.constants()[static_cast<size_t>(g.value(v).constant)]));
      }
    }
    auto out = cand.add(candidate, ops, attrs);
    if (!out.isOk()) return false;
    cand.addOutput(*out);
    auto got = runReference(cand, feeds);
    if (!got.isOk()) return false;
    if (!compareTensors((*got)[0], *want, 1e-5, 1e-4).close) return false;
  }
  return true;
}

std::vector<ValueId> downstreamValues(const Graph& g, ValueId from, size_t maxNodes) {
  std::vector<char> reached(g.numValues(), 0);
  reached[static_cast<size_t>(from)] = 1;
  std::vector<ValueId> out;
  size_t seen = 0;
  for (const Node& n : g.nodes()) {
    bool hit = false;
    for (ValueId v : n.inputs) hit = hit || (v != kNoValue && reached[static_cast<size_t>(v)]);
    if (!hit) continue;
    for (ValueId v : n.outputs) {
      reached[static_cast<size_t>(v)] = 1;
      out.push_back(v);
    }
    if (++seen >= maxNodes) break;
  }
  return out;
}

Status replaceRegion(Graph& g, const Region& r, OpKind op, const std::vector<ValueId>& operands, const Attrs& attrs,
                     const std::string& name) {
  CAGR_ASSIGN_OR_RETURN(ValueId v, g.add(op, operands, attrs, name));
  if (g.type(v) != g.type(r.out)) return internalError("recognised " + name + " changes the value's type");
  std::string keep = g.value(r.out).name;
  g.replaceAllUses(r.out, v);
  g.mutableValue(v).name = keep;
  g.eraseDeadNodes();
  return g.topoSort();
}

}  // namespace cagr::import
