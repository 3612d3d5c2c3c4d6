// PrecisionOptions: the reduced precisions a plan may use (lossless unless
// asked) and how the CLI spells them. The environment offers a set_precision
// action only when these options allow it; optimize() measures the budget.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cagr/env.h"

namespace cagr {
namespace {

bool contains(const std::vector<Precision>& set, Precision p) {
  return std::find(set.begin(), set.end(), p) != set.end();
}

void addOnce(std::vector<Precision>& set, Precision p) {
  if (!contains(set, p)) set.push_back(p);
}

// The name a set_precision action's subject goes by in keepF32.
std::string subjectName(const Graph& g, const Action& a) {
  if (a.value != kNoValue) return g.value(a.value).name;
  return a.nodes.empty() ? std::string() : g.node(a.nodes.front()).name;
}

}  // namespace

bool PrecisionOptions::allows(const Graph& g, const Action& a) const {
  if (a.kind != ActionKind::kSetPrecision) return true;
  auto p = precisionOfChoice(a.choice);
  if (!p.isOk()) return false;
  if (*p == Precision::kF32) return true;  // going back to f32 is always within budget
  bool table = a.value != kNoValue;
  if (!contains(table ? storage : math, *p)) return false;
  std::string name = subjectName(g, a);
  return std::find(keepF32.begin(), keepF32.end(), name) == keepF32.end();
}

PrecisionOptions unrestrictedPrecision() {
  PrecisionOptions o;
  o.math = {Precision::kTF32, Precision::kBF16, Precision::kF16};
  o.storage = {Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise};
  o.maxError = INFINITY;
  o.spec = "unrestricted";
  return o;
}

StatusOr<PrecisionOptions> parsePrecisionOptions(const std::string& spec, double maxError, const Target& t,
                                                 const std::string& flag) {
  PrecisionOptions o;
  o.spec = spec.empty() ? "fp32" : spec;
  std::stringstream words(o.spec);
  std::string w;
  double stated = 0;
  while (std::getline(words, w, ',')) {
    if (w == "fp32") continue;
    std::vector<Precision> math, storage;
    if (w == "tf32") {
      math = {Precision::kTF32};
    } else if (w == "bf16") {
      math = storage = {Precision::kBF16};
    } else if (w == "fp16") {
      math = storage = {Precision::kF16};
    } else if (w == "int8-tables") {
      storage = {Precision::kInt8Rowwise};
    } else {
      return invalidArgument(flag + " " + o.spec + ": unknown precision '" + w +
                             "' (expected fp32, or a comma list of tf32, bf16, fp16, int8-tables)");
    }
    // A word that names math and tables (bf16, fp16) takes what the target
    // runs of the two; one it runs neither of is refused.
    bool any = false;
    for (Precision p : math) {
      if (!t.supportsMath(p)) continue;
      addOnce(o.math, p);
      stated = std::max(stated, statedErrorBound(p, false));
      any = true;
    }
    for (Precision p : storage) {
      if (!t.supportsStorage(p)) continue;
      addOnce(o.storage, p);
      stated = std::max(stated, statedErrorBound(p, true));
      any = true;
    }
    if (!any) {
      return invalidArgument(flag + " " + w + ": " + t.hw.name + " has no " + w + (math.empty() ? " tables" : " math"));
    }
  }
  if (std::isnan(maxError)) return invalidArgument("--max-error: not a number");
  if (maxError >= 0 && !o.lossless() && std::isinf(maxError)) {
    return invalidArgument("--max-error must be finite: the budget is measured");
  }
  o.maxError = maxError < 0 ? stated : maxError;
  return o;
}

}  // namespace cagr
