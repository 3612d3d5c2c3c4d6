// FLOP and compulsory-byte counts per op at concrete shapes: every input read
// once, every output written once (gathers read only the rows they touch;
// views move nothing). analysis/ and the cost model build on these.
#include <map>

#include "ir/op_table.h"
#include "ir/shape_util.h"

namespace cagr {
namespace {

double numel(const std::vector<int64_t>& s) { return numelOf(s); }

double bytesOf(const std::vector<int64_t>& s, DType t) { return numel(s) * static_cast<double>(dtypeSize(t)); }

double sumBytes(std::span<const std::vector<int64_t>> shapes, std::span<const DType> types) {
  double b = 0;
  for (size_t i = 0; i < shapes.size(); ++i) b += bytesOf(shapes[i], types[i]);
  return b;
}

// Reads every input, writes every output, `flopsPerOut` per output element.
OpCounts streaming(std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                   std::span<const std::vector<int64_t>> out, std::span<const DType> outT, double flops) {
  return {flops, sumBytes(in, inT), sumBytes(out, outT)};
}

}  // namespace

OpCounts costEltwise(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                     std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  double perElem = 1;
  switch (n.op) {
    case OpKind::kIdentity:
    case OpKind::kCast: perElem = 0; break;
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kGelu:
    case OpKind::kSoftplus:
    case OpKind::kErf: perElem = 4; break;
    default: break;
  }
  return streaming(in, inT, out, outT, perElem * numel(out[0]));
}

OpCounts costMatMul(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                    std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  int64_t k = in[0].back();
  return streaming(in, inT, out, outT, 2.0 * numel(out[0]) * static_cast<double>(k));
}

OpCounts costGemm(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                  std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  int64_t k = intAttr(n, "transA") != 0 ? in[0][0] : in[0][1];
  double mn = numel(out[0]);
  return streaming(in, inT, out, outT, 2.0 * mn * static_cast<double>(k) + (in.size() > 2 ? mn : 0));
}

OpCounts costEinsum(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                    std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  auto spec = parseEinsum(stringAttr(n, "equation"), in.size());
  if (!spec.isOk()) return streaming(in, inT, out, outT, numel(out[0]));
  std::map<char, int64_t> size;
  for (size_t i = 0; i < in.size(); ++i) {
    for (size_t k = 0; k < spec->inputs[i].size(); ++k) size[spec->inputs[i][k]] = std::max(size[spec->inputs[i][k]], in[i][k]);
  }
  double iters = 1;
  for (auto& [c, s] : size) iters *= static_cast<double>(s);
  // One multiply per extra operand and one add per term of the iteration space.
  return streaming(in, inT, out, outT, iters * static_cast<double>(in.size()));
}

OpCounts costConv1x1(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                     std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  return streaming(in, inT, out, outT, 2.0 * numel(out[0]) * static_cast<double>(in[0][1]));
}

OpCounts costConv(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                  std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  // Each output element is a dot product over C/group * KH * KW weights.
  double window = numel(in[1]) / static_cast<double>(in[1][0]);
  return streaming(in, inT, out, outT, 2.0 * numel(out[0]) * window);
}

OpCounts costSpMM(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                  std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  double nnz = numel(in[1]);
  double k = static_cast<double>(in[3][1]);
  double read = bytesOf(in[0], inT[0]) + bytesOf(in[1], inT[1]) + bytesOf(in[2], inT[2]) +
                nnz * k * static_cast<double>(dtypeSize(inT[3]));
  return {2.0 * nnz * k, read, sumBytes(out, outT)};
}

OpCounts costCopy(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                  std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  return streaming(in, inT, out, outT, 0);
}

OpCounts costView(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                  std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  return {};
}

OpCounts costGather(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                    std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  double outBytes = sumBytes(out, outT);
  return {0, bytesOf(in[1], inT[1]) + outBytes, outBytes};
}

OpCounts costReduce(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                    std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  return streaming(in, inT, out, outT, numel(in[0]));
}

OpCounts costNorm(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                  std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  return streaming(in, inT, out, outT, 5.0 * numel(in[0]));
}

OpCounts costEmbeddingBag(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                          std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  double ids = numel(in[1]);
  double dim = static_cast<double>(in[0][1]);
  double read = ids * dim * static_cast<double>(dtypeSize(inT[0]));
  for (size_t i = 1; i < in.size(); ++i) read += bytesOf(in[i], inT[i]);
  return {ids * dim, read, sumBytes(out, outT)};
}

// Every table reads its rows once per id of its slot.
OpCounts costEmbeddingBags(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                           std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  size_t tables = static_cast<size_t>(intAttr(n, "num_tables"));
  const std::vector<int64_t>& idx = in[tables];
  bool fixed = in.size() == tables + 1;
  double slots = static_cast<double>(fixed ? idx[1] : idx[0]);
  double idsPerSlot = slots > 0 ? numel(idx) / slots : 0;
  double flops = 0, read = 0;
  for (size_t t = 0; t < tables; ++t) {
    double dim = static_cast<double>(in[t][1]);
    flops += idsPerSlot * dim;
    read += idsPerSlot * dim * static_cast<double>(dtypeSize(inT[t]));
  }
  for (size_t i = tables; i < in.size(); ++i) read += bytesOf(in[i], inT[i]);
  return {flops, read, sumBytes(out, outT)};
}

OpCounts costInteraction(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                         std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  return streaming(in, inT, out, outT, 2.0 * numel(out[0]) * static_cast<double>(in[0][2]));
}

OpCounts costFM(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  return streaming(in, inT, out, outT, 3.0 * numel(in[0]) + 2.0 * static_cast<double>(in[0][0] * in[0][2]));
}

OpCounts costCIN(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT,
                 std::span<const std::vector<int64_t>> out, std::span<const DType> outT) {
  double b = static_cast<double>(in[0][0]), h = static_cast<double>(in[0][1]), f = static_cast<double>(in[1][1]),
         d = static_cast<double>(in[0][2]), o = static_cast<double>(in[2][0]);
  // Outer products (b*h*f*d multiplies) then the [o x h*f] contraction.
  return streaming(in, inT, out, outT, b * h * f * d + 2.0 * b * o * h * f * d);
}

}  // namespace cagr
