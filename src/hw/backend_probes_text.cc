// IR text helpers of the backend probes (see backend_probes_text.h).
#include "hw/backend_probes_text.h"

#include <cstdio>
#include <random>

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
