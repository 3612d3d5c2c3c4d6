// The kernel builder: parameters in the runtime's order (reads, then
// writes), dims as C expressions over the run-time extents (a symbolic dim
// coef * S reads S from the first parameter dim that holds it), the entry
// point's signature, and the launch function the runtime calls.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>

#include "backends/cuda/codegen_kernel.h"
#include "ir/graph_queries.h"

namespace cagr::cuda::gen {

Status unsupportedAt(const Graph& g, NodeId n, const std::string& why) {
  return unsupported("nvrtc codegen: " + nodeWhere(g, n) + ": " + why);
}

std::string storageType(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  DType t = val.type.dtype;
  if (t == DType::kF32 && val.mir.storage == Precision::kInt8Rowwise) return "unsigned char";
  if (t == DType::kF32 && val.mir.storage == Precision::kBF16) t = DType::kBF16;
  if (t == DType::kF32 && val.mir.storage == Precision::kF16) t = DType::kF16;
  switch (t) {
    case DType::kF32: return "float";
    case DType::kF64: return "double";
    case DType::kF16: return "__half";
    case DType::kBF16: return "__nv_bfloat16";
    case DType::kI64: return "long long";
    case DType::kI32: return "int";
    case DType::kI8: return "signed char";
    case DType::kU8: return "unsigned char";
    case DType::kBool: return "bool";
  }
  return "float";
}

std::string computeType(DType t) {
  switch (t) {
    case DType::kF64:
      return "double";
    case DType::kI64:
      return "long long";
    case DType::kI32:
    case DType::kI8:
    case DType::kU8:
      return "int";
    case DType::kBool:
      return "bool";
    default:
      return "float";
  }
}

std::string literal(double v, DType t) {
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (t == DType::kF64 ? "CAGR_INF_D" : "CAGR_INF");
  if (std::isnan(v)) return "CAGR_NAN";
  std::string c = computeType(t);
  char buf[64];
  if (c == "float" || c == "double") {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return c == "float" ? s + "f" : s;
  }
  if (c == "bool") return v != 0 ? "true" : "false";
  std::snprintf(buf, sizeof buf, "%lldLL", static_cast<long long>(v));
  return c == "int" ? "((int)" + std::string(buf) + ")" : buf;
}

std::string envValue(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string gridStride(const std::string& var, const std::string& count, const std::string& inner,
                       const std::string& threadsPerItem, const std::string& first) {
  std::string per = threadsPerItem == "1" ? "" : " / " + threadsPerItem;
  std::string start = first.empty() ? "" : first + " + ";
  return "  for (long long " + var + " = " + start + "((long long)blockIdx.x * blockDim.x + threadIdx.x)" + per + "; " + var +
         " < " + count + "; " + var + " += (long long)gridDim.x * blockDim.x" + per + ") {\n" + inner + "  }\n";
}

KernelBuilder::KernelBuilder(const CodegenRequest& r, const std::string& kind, const std::string& moduleSource)
    : r_(r), memberValue_(r.g.numValues(), 0) {
  for (NodeId m : r.members) {
    for (ValueId v : r.g.node(m).outputs) memberValue_[static_cast<size_t>(v)] = 1;
  }
  std::string base = "cagr_" + kind + "_n" + std::to_string(r.members.empty() ? 0 : r.members.front());
  entry_ = base;
  for (int i = 2; moduleSource.find(" " + entry_ + "(") != std::string::npos; ++i)
    entry_ = base + "_" + std::to_string(i);
}

std::string KernelBuilder::in(ValueId v) {
  if (std::find(reads_.begin(), reads_.end(), v) == reads_.end()) reads_.push_back(v);
  return "v" + std::to_string(v);
}

std::string KernelBuilder::inTransposed(ValueId v) {
  if (std::find(transposed_.begin(), transposed_.end(), v) == transposed_.end()) transposed_.push_back(v);
  return in(v);
}

std::string KernelBuilder::inTransposedTf32(ValueId v) {
  if (std::find(tf32_.begin(), tf32_.end(), v) == tf32_.end()) tf32_.push_back(v);
  return inTransposed(v);
}

std::string KernelBuilder::inGrouped(ValueId v, int64_t group, int64_t pitch, bool split, bool swizzle128,
                                     Precision element) {
  grouped_.push_back({v, group, pitch, split, swizzle128, element});
  const bool tf32 = !split && element == Precision::kF32;
  if (tf32 && std::find(tf32_.begin(), tf32_.end(), v) == tf32_.end()) tf32_.push_back(v);
  return in(v);
}

std::string KernelBuilder::out(ValueId v) {
  if (std::find(writes_.begin(), writes_.end(), v) == writes_.end()) writes_.push_back(v);
  return "v" + std::to_string(v);
}

bool KernelBuilder::isMemberValue(ValueId v) const {
  return v >= 0 && memberValue_[static_cast<size_t>(v)] != 0;
}
bool KernelBuilder::isOutput(ValueId v) const {
  return std::find(r_.outputs.begin(), r_.outputs.end(), v) != r_.outputs.end();
}

std::string KernelBuilder::dim(Dim d) {
  if (!isSymbolic(d)) return std::to_string(d) + "LL";
  int s = dimSymbol(d);
  if (std::find(symbolsUsed_.begin(), symbolsUsed_.end(), s) == symbolsUsed_.end()) symbolsUsed_.push_back(s);
  int64_t c = dimCoef(d);
  return c == 1 ? "S" + std::to_string(s) : "(S" + std::to_string(s) + "*" + std::to_string(c) + "LL)";
}

std::string KernelBuilder::size(const std::vector<Dim>& dims, size_t begin, size_t end) {
  int64_t fixed = 1;
  std::string sym;
  for (size_t i = begin; i < std::min(end, dims.size()); ++i) {
    if (isSymbolic(dims[i])) {
      sym += (sym.empty() ? "" : "*") + dim(dims[i]);
    } else {
      fixed *= dims[i];
    }
  }
  if (sym.empty()) return std::to_string(fixed) + "LL";
  return fixed == 1 ? sym : "(" + sym + "*" + std::to_string(fixed) + "LL)";
}

std::string KernelBuilder::extent(ValueId v, int dim) {
  auto key = std::make_pair(v, dim);
  auto it = std::find(explicitExtents_.begin(), explicitExtents_.end(), key);
  size_t i = static_cast<size_t>(it - explicitExtents_.begin());
  if (it == explicitExtents_.end()) explicitExtents_.push_back(key);
  in(v);
  return "X" + std::to_string(i);
}

// `code` with every buffer name v<id> replaced by its parameter name arg<i>.
std::string KernelBuilder::canonical(const std::string& code) const {
  std::string out;
  out.reserve(code.size());
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < code.size();) {
    if (!ident(code[i])) {
      out += code[i++];
      continue;
    }
    size_t j = i;
    while (j < code.size() && ident(code[j])) ++j;
    std::string tok = code.substr(i, j - i);
    if (tok.size() > 1 && tok[0] == 'v' && std::all_of(tok.begin() + 1, tok.end(), ::isdigit)) {
      ValueId v = std::stoi(tok.substr(1));
      auto r = std::find(reads_.begin(), reads_.end(), v);
      auto w = std::find(writes_.begin(), writes_.end(), v);
      if (r != reads_.end()) {
        tok = "arg" + std::to_string(r - reads_.begin());
      } else if (w != writes_.end()) {
        tok = "arg" + std::to_string(reads_.size() + static_cast<size_t>(w - writes_.begin()));
      }
    }
    out += tok;
    i = j;
  }
  return out;
}

std::string KernelBuilder::fresh(const std::string& prefix) {
  return prefix + std::to_string(counter_++);
}

StatusOr<std::vector<KernelBuilder::SymbolSource>> KernelBuilder::resolveSymbols(
    const LaunchRule& rule, std::vector<ExtentRef>& extents) const {
  std::vector<int> needed = symbolsUsed_;
  for (Dim d : rule.work) {
    if (isSymbolic(d) && std::find(needed.begin(), needed.end(), dimSymbol(d)) == needed.end()) {
      needed.push_back(dimSymbol(d));
    }
  }
  std::vector<ValueId> params = reads_;
  params.insert(params.end(), writes_.begin(), writes_.end());
  std::vector<SymbolSource> out;
  for (int s : needed) {
    bool found = false;
    for (size_t p = 0; p < params.size() && !found; ++p) {
      const auto& dims = g().type(params[p]).dims;
      for (size_t d = 0; d < dims.size() && !found; ++d) {
        if (isSymbolic(dims[d]) && dimSymbol(dims[d]) == s) {
          out.push_back({s, static_cast<int>(extents.size()), dimCoef(dims[d])});
          extents.push_back({static_cast<int>(p), static_cast<int>(d)});
          found = true;
        }
      }
    }
    if (!found) {
      std::string sym = static_cast<size_t>(s) < g().symbols().size() ? g().symbols()[static_cast<size_t>(s)] : "?";
      return unsupportedAt(g(), r_.members.front(), "no buffer of the kernel carries the size of symbol " + sym);
    }
  }
  return out;
}

StatusOr<GeneratedKernel> KernelBuilder::finish(std::string& moduleSource, const LaunchRule& rule, std::string name,
                                                const std::string& prefix, const std::string& guard) {
  GeneratedKernel k;
  k.entry = entry_;
  k.name = std::move(name);
  CAGR_ASSIGN_OR_RETURN(std::vector<SymbolSource> syms, resolveSymbols(rule, k.extents));
  k.params = reads_;
  k.params.insert(k.params.end(), writes_.begin(), writes_.end());
  k.numOutputs = static_cast<int>(writes_.size());
  k.gridDeps = true;
  k.waitsLate = waitsLate;
  k.transposed = transposed_;
  k.tf32 = tf32_;
  k.grouped = grouped_;
  std::string sig;
  for (ValueId v : reads_) sig += "const " + storageType(g(), v) + "* __restrict__ v" + std::to_string(v) + ", ";
  for (ValueId v : writes_) sig += storageType(g(), v) + "* __restrict__ v" + std::to_string(v) + ", ";
  std::string pre;
  for (const SymbolSource& s : syms) {
    pre += "  const long long S" + std::to_string(s.symbol) + " = e" + std::to_string(s.extent) + " / " +
           std::to_string(s.coef) + "LL;\n";
  }
  for (size_t x = 0; x < explicitExtents_.size(); ++x) {
    auto [v, d] = explicitExtents_[x];
    auto p = std::find(k.params.begin(), k.params.end(), v) - k.params.begin();
    pre += "  const long long X" + std::to_string(x) + " = e" + std::to_string(k.extents.size()) + ";\n";
    k.extents.push_back({static_cast<int>(p), d});
  }
  for (size_t e = 0; e < k.extents.size(); ++e) sig += "long long e" + std::to_string(e) + ", ";
  if (!sig.empty()) sig.resize(sig.size() - 2);
  if (!guard.empty() && moduleSource.find("#define " + guard + "\n") == std::string::npos) {
    moduleSource += "#ifndef " + guard + "\n#define " + guard + "\n" + prefix + "#endif\n";
  } else if (guard.empty()) {
    moduleSource += prefix;
  }
  std::string code = canonical("(" + sig + ") {\n" + (waitsLate ? "" : "  CAGR_GRID_DEPS();\n") + pre + body + "}\n");
  std::string bounds = "__launch_bounds__(" + std::to_string(rule.threads) +
                       (rule.minBlocksPerSm > 0 ? ", " + std::to_string(rule.minBlocksPerSm) : "") + ")";
  std::string tag = std::to_string(std::hash<std::string>{}(bounds + code)) + "." + std::to_string(code.size());
  std::string marker = "// cagr-kernel " + tag + " ";
  size_t at = moduleSource.find(marker);
  if (at != std::string::npos) {  // the same code is in the module already: launch that entry
    size_t b = at + marker.size();
    k.entry = moduleSource.substr(b, moduleSource.find('\n', b) - b);
  } else {
    moduleSource += marker + entry_ + "\nextern \"C\" __global__ void " + bounds + " " + entry_ + code + "\n";
  }
  k.launch = [syms, rule](const std::vector<int64_t>& extents) {
    std::vector<int64_t> value(kSymStride, 1);
    for (const SymbolSource& s : syms) {
      int64_t e = static_cast<size_t>(s.extent) < extents.size() ? extents[static_cast<size_t>(s.extent)] : 0;
      value[static_cast<size_t>(s.symbol)] = e / s.coef;
    }
    int64_t work = 1;
    for (size_t i = 0; i < rule.work.size(); ++i) {
      Dim d = rule.work[i];
      int64_t w = isSymbolic(d) ? dimCoef(d) * value[static_cast<size_t>(dimSymbol(d))] : d;
      int64_t r = i < rule.roundTo.size() ? std::max<int64_t>(rule.roundTo[i], 1) : 1;
      work *= (w + r - 1) / r * r;
    }
    int64_t blocks = std::clamp<int64_t>((work + rule.perBlock - 1) / rule.perBlock, 1, rule.maxBlocks);
    Launch l;
    l.grid[0] = static_cast<unsigned>(blocks);
    l.grid[1] = rule.gridY;
    if (rule.splitY > 1 && blocks < rule.splitBelow) l.grid[1] = l.clusterY = rule.splitY;
    l.block[0] = rule.threads;
    l.sharedBytes = rule.sharedBytes;
    return l;
  };
  return k;
}

}  // namespace cagr::cuda::gen
