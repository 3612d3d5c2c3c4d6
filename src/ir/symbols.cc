// Symbol unification: the importer gives every dynamic input axis its own
// symbol (exporters name unrelated axes alike: facebookresearch/dlrm calls
// both the batch and every bag's id count "batch_size"); ops that need two
// dims equal prove the symbols equal, and canonicalizeSymbols() rewrites the
// graph to one symbol per class.
#include <map>
#include <numeric>
#include <set>

#include "cagr/graph.h"

namespace cagr {
namespace {

int findRoot(std::vector<int>& parent, int s) {
  while (parent[static_cast<size_t>(s)] != s) {
    parent[static_cast<size_t>(s)] = parent[static_cast<size_t>(parent[static_cast<size_t>(s)])];
    s = parent[static_cast<size_t>(s)];
  }
  return s;
}

// Attributes that hold Dims: Reshape / Expand shapes and Range's count.
bool holdsDims(OpKind op) { return op == OpKind::kReshape || op == OpKind::kExpand || op == OpKind::kRange; }

template <typename F>
void forEachAttrDim(Node& n, F&& f) {
  if (!holdsDims(n.op)) return;
  const char* key = n.op == OpKind::kRange ? "count" : "shape";
  if (n.op == OpKind::kRange) {
    Dim d = n.attrs.getInt(key);
    if (d > -kSymStride) return;
    f(d);
    n.attrs.set(key, d);
    return;
  }
  std::vector<int64_t> dims = n.attrs.getInts(key);
  for (int64_t& d : dims) {
    if (d <= -kSymStride) f(d);
  }
  n.attrs.set(key, std::move(dims));
}

}  // namespace

// Symbols declared since the last call join the union-find as singletons.
static void growUnionFind(std::vector<int>& parent, size_t symbols) {
  if (parent.size() >= symbols) return;
  size_t old = parent.size();
  parent.resize(symbols);
  std::iota(parent.begin() + static_cast<std::ptrdiff_t>(old), parent.end(), static_cast<int>(old));
}

bool Graph::sameDim(Dim a, Dim b) const {
  if (a == b) return true;
  if (a > -kSymStride || b > -kSymStride || dimCoef(a) != dimCoef(b)) return false;  // not both symbols
  growUnionFind(symbolParent_, symbols_.size());
  int ra = findRoot(symbolParent_, dimSymbol(a)), rb = findRoot(symbolParent_, dimSymbol(b));
  if (ra == rb) return true;
  if (!unify_) return false;
  // The lower id wins, so a class holding the batch keeps N.
  symbolParent_[static_cast<size_t>(std::max(ra, rb))] = std::min(ra, rb);
  return true;
}

void Graph::canonicalizeSymbols() {
  growUnionFind(symbolParent_, symbols_.size());
  std::set<int> used;
  auto root = [&](Dim d) { return findRoot(symbolParent_, dimSymbol(d)); };
  for (const Value& v : values_) {
    for (Dim d : v.type.dims) {
      if (d <= -kSymStride) used.insert(root(d));
    }
  }
  for (Node& n : nodes_) forEachAttrDim(n, [&](Dim& d) { used.insert(root(d)); });
  std::vector<std::string> names{"", "N"};
  std::map<int, int> newId{{kBatchSymbol, kBatchSymbol}};
  std::set<std::string> taken{"N"};
  for (int s : used) {
    if (s == kBatchSymbol) continue;
    std::string name = symbols_[static_cast<size_t>(s)];
    for (int k = 2; !taken.insert(name).second; ++k) name = symbols_[static_cast<size_t>(s)] + "_" + std::to_string(k);
    newId[s] = static_cast<int>(names.size());
    names.push_back(name);
  }
  auto remap = [&](Dim& d) { d = symDim(newId.at(root(d)), dimCoef(d)); };
  for (Value& v : values_) {
    for (Dim& d : v.type.dims) {
      if (d <= -kSymStride) remap(d);
    }
  }
  for (Node& n : nodes_) forEachAttrDim(n, remap);
  symbols_ = std::move(names);
  symbolParent_.clear();
  unify_ = false;
}

int64_t Graph::fixedBatch() const {
  for (ValueId v : inputs_) {
    for (Dim d : value(v).type.dims) {
      if (isSymbolic(d) && dimSymbol(d) == kBatchSymbol) return 0;
    }
  }
  for (ValueId v : inputs_) {
    if (!value(v).type.dims.empty()) return value(v).type.dims[0];
  }
  return 0;
}

}  // namespace cagr
