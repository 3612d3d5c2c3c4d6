// SpMM with a CSR matrix (graph models such as NGCF): out[r, :] =
// sum_p values[p] * dense[col_idx[p], :] over row r's entries. One group of
// L lanes per row, V-wide row loads of the dense operand, no atomics (each
// output row has one writer). Entries with a column outside [0, C) are
// skipped (the reference executor rejects them).
#include "backends/cuda/codegen_kernel.h"

namespace cagr::cuda::gen {

StatusOr<GeneratedKernel> generateSpmm(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  NodeId id = r.members.front();
  const Node& n = g.node(id);
  if (n.op != OpKind::kSpMM || r.members.size() != 1) return unsupportedAt(g, id, "an SpMM kernel runs one SpMM node");
  ValueId rowPtr = n.inputs[0], col = n.inputs[1], val = n.inputs[2], dense = n.inputs[3];
  const auto& dd = g.type(dense).dims;
  if (dd.size() != 2 || isSymbolic(dd[1]) || g.type(dense).dtype != DType::kF32 || g.type(val).dtype != DType::kF32 ||
      g.value(dense).mir.storage != Precision::kF32 || g.value(val).mir.storage != Precision::kF32) {
    return unsupportedAt(g, id, "operands are not f32 values and an f32 [C, K] matrix with static K");
  }
  int64_t K = dd[1];
  int vec = K % 4 == 0 ? 4 : K % 2 == 0 ? 2 : 1, lanes = 1;
  while (lanes < 32 && lanes * vec < K) lanes *= 2;
  KernelBuilder k(r, "spmm", src);
  std::string V = std::to_string(vec), L = std::to_string(lanes), Ks = std::to_string(K) + "LL";
  std::string y = k.out(n.outputs[0]), x = k.in(dense), rows = k.dim(g.type(n.outputs[0]).dims[0]);
  std::string inner = "    for (int c = sub * " + V + "; c < " + Ks + "; c += " + L + " * " + V + ") {\n" +
                      "      float acc[" + V + "] = {};\n" + "      const long long p1 = (long long)" + k.in(rowPtr) +
                      "[row + 1];\n" + "      for (long long p = (long long)" + k.in(rowPtr) +
                      "[row]; p < p1; ++p) {\n" + "        const long long cc = (long long)" + k.in(col) + "[p];\n" +
                      "        if ((unsigned long long)cc >= (unsigned long long)" + k.dim(dd[0]) + ") continue;\n" +
                      "        const float v = __ldg(" + k.in(val) + " + p);\n        float d[" + V + "];\n" +
                      "        cagr_row<" + V + ">(" + x + ", " + Ks + ", cc, c, d);\n" +
                      "        for (int q = 0; q < " + V + "; ++q) acc[q] = fmaf(v, d[q], acc[q]);\n      }\n" +
                      "      for (int q = 0; q < " + V + "; ++q) " + y + "[row * " + Ks +
                      " + c + q] = acc[q];\n    }\n";
  k.body += "  const int sub = threadIdx.x % " + L + ";\n" + gridStride("row", rows, inner, L);
  LaunchRule rule;
  rule.work = {g.type(n.outputs[0]).dims[0]};
  rule.perBlock = 256 / lanes;
  return k.finish(src, rule, "nvrtc.spmm[" + std::to_string(K) + " columns]");
}

}  // namespace cagr::cuda::gen
