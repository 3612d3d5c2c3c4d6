// The reference executor: checks the inputs against the graph's signature,
// binds symbols, then runs the nodes in order with the reference kernels,
// freeing each intermediate after its last use; a plan's precision decisions
// go through ref::PrecisionEmulator. Also compareTensors.
#include <array>
#include <cmath>
#include <map>
#include <optional>

#include "cagr/reference.h"
#include "ir/op_table.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/kernels.h"
#include "runtime/reference/precision.h"

namespace cagr {
namespace {

// Indexed by OpKind; an op of ops.def without a kernel leaves ref<Op> undefined (link error).
constexpr std::array<ref::RefKernel, kNumOpKinds> kKernels = {{
#define CAGR_OP(Enum, ...) &ref::ref##Enum,
#include "cagr/ops.def"
#undef CAGR_OP
}};

}  // namespace

Status ref::runKernel(const Node& n, std::span<const Tensor* const> in, std::span<Tensor> out) {
  return kKernels[static_cast<size_t>(n.op)](n, in, out);
}

namespace {

std::string expectedInputs(const Graph& g) {
  std::string s;
  for (ValueId v : g.inputs()) s += (s.empty() ? "'" : ", '") + g.value(v).name + "' " + g.typeString(g.type(v));
  return s;
}

// Matches named inputs to g.inputs() (widening i32 to i64 where declared).
StatusOr<std::vector<Tensor>> matchInputs(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  std::map<std::string, const Tensor*> byName;
  for (const auto& [name, t] : inputs) {
    if (!byName.emplace(name, &t).second) return invalidArgument("input '" + name + "' is given twice");
  }
  std::vector<Tensor> matched;
  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    auto it = byName.find(val.name);
    if (it == byName.end()) {
      return notFound("missing input '" + val.name + "'; the graph expects " + expectedInputs(g));
    }
    const Tensor& t = *it->second;
    DType want = val.type.dtype;
    if (t.dtype() == DType::kI32 && want == DType::kI64) {
      matched.push_back(t.cast(DType::kI64));
    } else if (t.dtype() != want) {
      return invalidArgument("input '" + val.name + "': expected element type " + dtypeName(want) + ", got " +
                             dtypeName(t.dtype()));
    } else {
      matched.push_back(t);
    }
    byName.erase(it);
  }
  if (!byName.empty()) {
    return invalidArgument("unknown input '" + byName.begin()->first + "'; the graph expects " + expectedInputs(g));
  }
  return matched;
}

std::string nodeWhere(const Node& n) { return "node '" + n.name + "' (" + opInfo(n.op).name + ")"; }

// Executes the nodes of `g` over `slots` (one tensor per value; inputs and
// constants already placed) and frees intermediates after their last use.
// `emu` (null for an all-f32 graph) applies reduced math and storage.
Status runNodes(const Graph& g, const SymbolBindings& bindings, std::vector<Tensor>& slots,
                ref::PrecisionEmulator* emu) {
  std::vector<int> uses = g.useCounts();
  std::vector<const Tensor*> operands;
  std::vector<Tensor> results;
  for (const Node& n : g.nodes()) {
    operands.clear();
    for (ValueId v : n.inputs) operands.push_back(v == kNoValue ? nullptr : &slots[static_cast<size_t>(v)]);
    if (emu != nullptr && n.mir.math != Precision::kF32) {
      CAGR_RETURN_IF_ERROR(emu->roundOperands(n, operands).withContext(nodeWhere(n)));
    }
    results.clear();
    for (ValueId v : n.outputs) {
      const TensorType& t = g.type(v);
      auto shape = bindings.resolve(t.dims);
      if (!shape.isOk()) return shape.status().withContext(nodeWhere(n) + ": output " + g.typeString(t));
      results.emplace_back(t.dtype, std::move(shape).value());
    }
    Status st = kKernels[static_cast<size_t>(n.op)](n, operands, results);
    if (!st.isOk()) return st.withContext(nodeWhere(n));
    for (size_t i = 0; i < results.size(); ++i) {
      const TensorType& t = g.type(n.outputs[i]);
      if (results[i].dtype() != t.dtype || results[i].shape() != *bindings.resolve(t.dims)) {
        return internalError(nodeWhere(n) + ": kernel produced " + results[i].typeString() + " for " + g.typeString(t));
      }
      if (emu != nullptr) CAGR_RETURN_IF_ERROR(emu->store(n.outputs[i], results[i]).withContext(nodeWhere(n)));
      slots[static_cast<size_t>(n.outputs[i])] = std::move(results[i]);
    }
    for (ValueId v : n.outputs) {
      if (uses[static_cast<size_t>(v)] == 0) slots[static_cast<size_t>(v)] = Tensor();
    }
    for (ValueId v : n.inputs) {
      if (v != kNoValue && --uses[static_cast<size_t>(v)] == 0) slots[static_cast<size_t>(v)] = Tensor();
    }
  }
  return Status::ok();
}

}  // namespace

StatusOr<std::vector<Tensor>> matchGraphInputs(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  return matchInputs(g, inputs);
}

StatusOr<std::vector<Tensor>> runReference(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  CAGR_RETURN_IF_ERROR(g.verify().withContext("reference executor: invalid graph"));
  CAGR_ASSIGN_OR_RETURN(std::vector<Tensor> given, matchInputs(g, inputs));
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor& t : given) shapes.push_back(t.shape());
  CAGR_ASSIGN_OR_RETURN(SymbolBindings bindings, g.bindSymbols(shapes));

  std::vector<Tensor> slots(g.numValues());
  for (size_t i = 0; i < given.size(); ++i) slots[static_cast<size_t>(g.inputs()[i])] = std::move(given[i]);
  for (size_t v = 0; v < g.numValues(); ++v) {
    if (const Tensor* c = g.constant(static_cast<ValueId>(v))) slots[v] = *c;  // shares storage, read-only
  }
  std::optional<ref::PrecisionEmulator> emu;
  if (ref::hasPrecisionDecisions(g)) {
    emu.emplace(g);
    CAGR_RETURN_IF_ERROR(emu->storeSources(slots));  // constants converted once per run
  }
  CAGR_RETURN_IF_ERROR(runNodes(g, bindings, slots, emu ? &*emu : nullptr));

  std::vector<Tensor> results;
  for (ValueId v : g.outputs()) {
    // A graph output may be a constant or an input: hand out a private copy.
    const Tensor& t = slots[static_cast<size_t>(v)];
    results.push_back(g.value(v).producer < 0 ? t.clone() : t);
  }
  return results;
}

TensorComparison compareTensors(const Tensor& got, const Tensor& want, double atol, double rtol) {
  TensorComparison r;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    r.message = "got " + got.typeString() + ", want " + want.typeString();
    return r;
  }
  int64_t worst = -1, bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.getF64(i), b = want.getF64(i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) {
        ++bad;
        if (worst < 0) worst = i;
        r.maxAbsError = INFINITY;
      }
      continue;
    }
    double err = a == b ? 0.0 : std::fabs(a - b);  // a == b also covers equal infinities
    if (err > r.maxAbsError) r.maxAbsError = err;
    if (err > atol + rtol * std::fabs(b) && ++bad == 1) worst = i;
  }
  r.close = bad == 0;
  if (!r.close) {
    r.message = std::to_string(bad) + " of " + std::to_string(got.numel()) + " elements differ; first at flat index " +
                std::to_string(worst) + ": got " + std::to_string(got.getF64(worst)) + ", want " +
                std::to_string(want.getF64(worst)) + " (max abs error " + std::to_string(r.maxAbsError) + ")";
  }
  return r;
}

namespace {

double maxAbs(const Tensor& t) {
  double m = 0;
  if (t.dtype() != DType::kF32) return m;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(static_cast<double>(t.data<float>()[i])));
  return m;
}

}  // namespace

StatusOr<double> relativeOutputError(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) return internalError("plan and model differ in their number of outputs");
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].dtype() != want[i].dtype() || got[i].shape() != want[i].shape()) {
      return internalError("output #" + std::to_string(i) + " differs in shape or dtype between plan and model");
    }
    if (want[i].dtype() != DType::kF32) continue;
    double scale = std::max(maxAbs(want[i]), 1e-30), diff = 0;
    for (int64_t k = 0; k < want[i].numel(); ++k) {
      float a = got[i].data<float>()[k], b = want[i].data<float>()[k];
      if (std::isnan(a) != std::isnan(b)) return INFINITY;
      if (!std::isnan(a)) diff = std::max(diff, std::fabs(static_cast<double>(a) - b));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

}  // namespace cagr
