// Which kernel implementation and shape class prices a node on a platform,
// and the effective rates (measured efficiencies or trait-based defaults).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cagr/analysis.h"
#include "cagr/hw.h"

namespace cagr {

struct Efficiency {
  double flopsPerS = 0, bytesPerS = 0, overheadS = 0;
  bool measured = false;
};

/// (kernel, shape class) for node `n`: e.g. ("cublas.sgemm", "gemm.small"),
/// ("own.gather", "gather.zipf"), ("view", "") for metadata-only ops.
std::pair<std::string, std::string> classifyKernel(const HardwareProfile& hw, const Graph& g, const Node& n,
                                                   const NodeStats& stats);

/// The fastest kernel the profile lists for `shapeClass` whose name says it
/// computes in `precision` ("fp32", "tf32", "bf16", "fp16": "cublas.sgemm_tf32",
/// "cublaslt.bf16"), or `fallback` when it lists none.
std::string fastestKernel(const HardwareProfile& hw, const std::string& shapeClass, const std::string& precision,
                          const std::string& fallback);

/// The precision a kernel implementation computes in, from its name
/// ("cublas.sgemm_tf32" -> "tf32", "cublaslt.bf16" -> "bf16"); plain names are "fp32".
std::string kernelPrecision(const std::string& kernel);

/// Slow-down of a GEMM on the matrix unit (`precision` tf32 / bf16 / fp16)
/// whose leading dimensions N or K are not multiples of the unit's alignment
/// (the profile's alignElements for 16-bit types, half of it for tf32): the
/// H200 measured TF32/BF16 GEMMs with N = 367 or K = 479 2-4.5x slower than
/// aligned ones of the same FLOPs (bench/results/hw/h200-validate.json).
/// 1 for fp32 or aligned shapes.
double misalignmentPenalty(const HardwareProfile& hw, const std::string& precision, double n, double k);

/// GEMM shape class from M, N, K: gemm.tiny / small / medium / large / skinny.
std::string gemmShapeClass(double m, double n, double k);

/// Rates for (kernel, class): the profile's entry when it has one, else a
/// fraction of peak / bandwidth from the platform traits. For a GEMM class
/// whose entry carries a rate curve and a call of `flopsPerCall` > 0 FLOPs,
/// the FLOP rate is read off the curve (KernelEfficiency::rateAt) instead of
/// the class-wide flops_per_s.
Efficiency effectiveRates(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass,
                          double flopsPerCall = 0);

/// Bandwidth of the smallest cache level (not device memory) that holds
/// `workingSetBytes`, or 0 when none does.
double cacheBandwidthFor(const HardwareProfile& hw, double workingSetBytes);

/// Bytes written by group members and read only inside the group.
double internalTraffic(const Graph& g, const GraphStats& stats, const std::vector<char>& member);
/// Number of reductions inside a group (each adds a synchronisation).
int reductionsInside(const Graph& g, const std::vector<NodeId>& group);

}  // namespace cagr
