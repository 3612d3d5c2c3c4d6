// IR text helpers of the backend probes (see backend_probes_text.h).
#include "hw/backend_probes_text.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "hw/microbench.h"
#include "ir/text_format.h"

namespace cagr::hw::probe {

std::string tensorType(const std::vector<int64_t>& tail, const char* dtype) {
  std::string t = "tensor<?";
  for (int64_t d : tail) t += "x" + std::to_string(d);
  return t + "x" + dtype + ">";
}

std::string fixedType(const std::vector<int64_t>& dims) {
  std::string t = "tensor<";
  for (int64_t d : dims) t += std::to_string(d) + "x";
  return t + "f32>";
}

std::string Input::type() const {
  if (idBound > 0) return tensorType(dims, "i64");
  if (!table) return tensorType(dims);
  return fixedType(dims);
}

std::string Input::dimsText() const {
  std::string d = table ? "" : "N";
  for (int64_t x : dims) d += (d.empty() ? "" : ",") + std::to_string(x);
  return d;
}

std::string graphText(const std::vector<Input>& inputs, const std::string& body, const std::string& outType) {
  std::string args, names, dims;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string sep = i == 0 ? "" : ", ";
    args += sep + "%arg" + std::to_string(i) + ": " + inputs[i].type();
    names += sep + "\"in" + std::to_string(i) + "\"";
    dims += sep + "\"" + inputs[i].dimsText() + "\"";
  }
  return "\"builtin.module\"() ({\n  \"cagr.graph\"() ({\n  ^bb0(" + args + "):\n" + body +
         "    \"cagr.return\"(%out) : (" + outType + ") -> ()\n  }) {sym_name = \"main\", input_names = [" + names +
         "], input_dims = [" + dims + "], output_names = [\"out\"], symbols = [\"N\"]} : () -> ()\n}) : () -> ()\n";
}

std::string opLine(const std::string& res, const std::string& op, const std::string& args, const std::string& attrs,
                   const std::string& inTypes, const std::string& outType) {
  return "    " + res + " = \"cagr." + op + "\"(" + args + ") {name = \"" + res.substr(1) + "\"" +
         (attrs.empty() ? "" : ", " + attrs) + "} : (" + inTypes + ") -> " + outType + "\n";
}

std::string constantLine(const std::string& res, const std::vector<int64_t>& dims, double value) {
  char v[32];
  std::snprintf(v, sizeof v, "%.6e", value);
  return "    " + res + " = \"cagr.constant\"() {name = \"" + res.substr(1) + "\", value = dense<" + v +
         "> : " + fixedType(dims) + "} : () -> " + fixedType(dims) + "\n";
}

std::string tensorConstantLine(const std::string& res, const Tensor& t) {
  std::string type = text::tensorTypeString(TensorType{t.dtype(), t.shape()});
  return "    " + res + " = \"cagr.constant\"() {name = \"" + res.substr(1) + "\", value = " + text::denseLiteral(t) +
         " : " + type + "} : () -> " + type + "\n";
}

CsrPlan spmmCsrPlan(int64_t rows, int64_t perRow, int64_t k, bool skewed) {
  std::vector<int64_t> len(static_cast<size_t>(rows), perRow);
  if (skewed) {
    int64_t shortLen = std::max<int64_t>(1, (perRow * 100 - 32 * perRow) / 99);
    for (int64_t r = 0; r < rows; ++r) len[static_cast<size_t>(r)] = r % 100 == 0 ? 32 * perRow : shortLen;
  }
  Tensor rowPtr(DType::kI64, {rows + 1});
  int64_t nnz = 0;
  for (int64_t r = 0; r < rows; ++r) {
    rowPtr.data<int64_t>()[r] = nnz;
    nnz += len[static_cast<size_t>(r)];
  }
  rowPtr.data<int64_t>()[rows] = nnz;
  Tensor col(DType::kI64, {nnz});
  std::mt19937_64 rng(11);
  for (int64_t p = 0; p < nnz; ++p) col.data<int64_t>()[p] = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows));
  CsrPlan plan;
  plan.body = tensorConstantLine("%rp", rowPtr) + tensorConstantLine("%ci", col) + constantLine("%v", {nnz}, 0.05) +
              constantLine("%x", {rows, k}, 0.01);
  plan.outType = fixedType({rows, k});
  plan.body += opLine(
      "%out", "spmm", "%rp, %ci, %v, %x",
      fmt("rows = %lld : i64, cols = %lld : i64", static_cast<long long>(rows), static_cast<long long>(rows)),
      fmt("tensor<%lldxi64>, tensor<%lldxi64>, ", static_cast<long long>(rows + 1), static_cast<long long>(nnz)) +
          fixedType({nnz}) + ", " + fixedType({rows, k}),
      plan.outType);
  plan.label = fmt("spmm %s [%lld,%lld] (%lld entries) x [%lld,%lld]", skewed ? "skewed" : "uniform",
                   static_cast<long long>(rows), static_cast<long long>(rows), static_cast<long long>(nnz),
                   static_cast<long long>(rows), static_cast<long long>(k));
  return plan;
}

std::vector<std::pair<std::string, Tensor>> randomInputs(const std::vector<Input>& inputs, int64_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.1f, 1.0f);
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    std::vector<int64_t> shape;
    if (!in.table) shape.push_back(n);
    shape.insert(shape.end(), in.dims.begin(), in.dims.end());
    Tensor t(in.idBound > 0 ? DType::kI64 : DType::kF32, shape);
    for (int64_t j = 0; j < t.numel(); ++j) {
      if (in.idBound > 0)
        t.data<int64_t>()[j] = std::uniform_int_distribution<int64_t>(0, in.idBound - 1)(rng);
      else
        t.data<float>()[j] = u(rng);
    }
    out.emplace_back("in" + std::to_string(i), std::move(t));
  }
  return out;
}

}  // namespace cagr::hw::probe
