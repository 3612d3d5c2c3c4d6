// Hardware profiles c_H (DESIGN §3): what a platform can do, from a vendor
// datasheet (modelled) or from `cagr profile` on the machine itself
// (measured). Every number carries where it came from.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "cagr/status.h"

namespace cagr {

/// A number and its provenance ("NVIDIA V100 datasheet, SXM2 16GB, 2018",
/// "measured: cagr profile, OpenBLAS sgemm 4096^3").
struct Sourced {
  double value = 0;
  std::string source;
  bool operator==(const Sourced&) const = default;
};

/// One memory level, fastest first (L1 ... DRAM/HBM).
struct MemoryLevel {
  std::string name;      // "L2", "HBM3e", "DRAM"
  Sourced sizeBytes;     // per device (caches: total over units)
  Sourced bandwidth;     // bytes/s
  bool operator==(const MemoryLevel&) const = default;
};

/// Matrix unit shape and the alignment that keeps it busy. m x k by k x n is
/// what one unit (one tensor core, one CU's matrix cores, one MXU, one FMA
/// port) does per clock at fp16/bf16 (fp32 on CPU): m*n*k = MACs per clock.
struct MatrixUnit {
  std::string name;      // "tensor core", "MFMA", "MXU", "AVX-512 FMA"
  int m = 1, n = 1, k = 1;
  int alignElements = 1;  // pad GEMM dims to a multiple of this (fp16/bf16)
  std::string source;
  bool operator==(const MatrixUnit&) const = default;
};

/// One point of a rate curve: a call of `flops` FLOPs ran at `flopsPerS`
/// FLOP/s, net of the kernel's fixed overhead (hw::netRate). On the curve of
/// a streaming (non-GEMM) class the two fields hold bytes per call and
/// bytes/s (KernelEfficiency::curve).
struct RatePoint {
  double flops = 0;
  double flopsPerS = 0;
  bool operator==(const RatePoint&) const = default;
};

/// Most points a rate curve may hold.
inline constexpr size_t kMaxCurvePoints = 64;

/// Measured (or defaulted) efficiency of one kernel implementation on one
/// shape class: achieved FLOP/s and bytes/s, and its fixed overhead.
struct KernelEfficiency {
  std::string kernel;       // "openblas.sgemm", "onednn.matmul", "own.gather", "cublas.sgemm", ...
  std::string shapeClass;   // "gemm.tiny" "gemm.small" "gemm.medium" "gemm.large" "gemm.skinny" "gather.uniform" ...
  double flopsPerS = 0;     // achieved, 0 when the class is memory-only
  double bytesPerS = 0;     // achieved
  double overheadS = 0;     // fixed cost per call (launch / dispatch)
  int samples = 0;          // measurements behind the fit (0: default from traits)
  std::string source;       // "measured ..." or "default: ..."
  /// Optional rate curve: measured (work per call, rate net of overheadS)
  /// points, strictly increasing in work, at most kMaxCurvePoints. Work is
  /// FLOPs for GEMM classes ("gemm.*": FLOP/s) and bytes for the streaming
  /// classes the CPU profiler's backend probes measure (bytes/s). When
  /// present the cost model reads the rate of a call off it (rateAt)
  /// instead of the class-wide flopsPerS / bytesPerS.
  std::vector<RatePoint> curve;
  bool operator==(const KernelEfficiency&) const = default;

  /// Net FLOP/s at `flopsPerCall` from `curve`: piecewise-linear in
  /// log(flops) -> log(rate) between the two nearest points, clamped to the
  /// end points outside them; flopsPerS when the curve is empty or
  /// flopsPerCall <= 0.
  double rateAt(double flopsPerCall) const;
};

/// Platform traits the cost model and the rewrite legality checks read.
struct PlatformTraits {
  int warpWidth = 1;              // 32 NVIDIA, 64 AMD wavefront, SIMD lanes (fp32) on CPU
  double registerFileBytesPerUnit = 0;
  double sharedMemBytesPerUnit = 0;
  double spillRisk = 0;           // 0..1: penalty weight for over-fused kernels (AMD high)
  double irregularGatherPenalty = 1;  // >= 1: slowdown of random-row gathers vs streaming (TPU high)
  int vectorWidthBits = 0;        // CPU: 256 (AVX2) / 512 (AVX-512)
  // Fusion benefit coefficients B_fuse = alpha*saved_mem_time - beta*sync - gamma*reg_pressure.
  double fuseAlpha = 1, fuseBeta = 1, fuseGamma = 1;
  double runToRunVariance = 0.02;  // V_H: relative std of repeated latency
  std::string source;
  bool operator==(const PlatformTraits&) const = default;
};

/// One platform.
struct HardwareProfile {
  int schemaVersion = 1;
  std::string name;        // "h200", "v100", "host-cpu"
  std::string kind;        // "cpu" | "gpu" | "tpu"
  std::string vendor;      // "nvidia" | "amd" | "google" | "intel" | "amd-cpu" | ...
  std::string provenance;  // "datasheet" (modelled) | "measured"
  std::string measuredOn;  // host / device, when measured
  std::string date;        // ISO date of measurement or datasheet
  std::map<std::string, std::string> libraries;  // name -> version (measured profiles)
  std::string notes;       // free text: caveats, which SKU a datasheet column is

  // dtype -> FLOP/s (dense). Keys: fp64 fp64_matrix fp32 fp32_matrix tf32 bf16
  // fp16 fp8 int8. "fp32" is the vector/CUDA-core rate; "fp32_matrix" the
  // matrix-unit rate where the hardware has one (AMD MFMA).
  std::map<std::string, Sourced> peakFlops;
  std::vector<MemoryLevel> memory;           // fastest first; last is device memory
  Sourced launchLatencyS;                    // kernel launch / dispatch
  Sourced parallelUnits;                     // SMs, CUs, TensorCores, cores
  MatrixUnit matrixUnit;
  PlatformTraits traits;
  std::vector<KernelEfficiency> efficiencies;

  bool isMeasured() const { return provenance == "measured"; }
  /// Device-memory bandwidth (last memory level), bytes/s; 0 without levels.
  double dramBandwidth() const;
  /// Peak FLOP/s for `dtype`, falling back to fp32 (0 if neither is known).
  double peak(const std::string& dtype = "fp32") const;
  /// Efficiency entry for (kernel, shapeClass): the exact match, else the
  /// first entry of the same kernel (any shape class), else nullptr.
  const KernelEfficiency* efficiency(const std::string& kernel, const std::string& shapeClass) const;

  bool operator==(const HardwareProfile&) const = default;
};

/// Version of the JSON schema this build reads and writes.
inline constexpr int kProfileSchemaVersion = 1;

/// Parses and validates a profile; errors name the file and the key path
/// ("v100.json: peak_flops.fp32.value: must be a positive number").
///
/// JSON schema, version 1 (a Sourced number is {"value": x, "source": "..."};
/// the source is required when provenance is "datasheet"):
///   schema_version: 1                                   required
///   name, kind ("cpu"|"gpu"|"tpu"), provenance ("datasheet"|"measured")   required
///   vendor, date, measured_on, notes: strings          optional
///   libraries: {name: version}                          optional
///   peak_flops: {dtype: Sourced}, fp32 required, dtypes as in peakFlops
///   memory: [{name, size_bytes: Sourced, bandwidth: Sourced}]  >= 1, fastest first
///   launch_latency_s: Sourced                           required
///   parallel_units: Sourced                             optional
///   matrix_unit: {name, m, n, k, align_elements, source}  optional
///   traits: {warp_width, register_file_bytes_per_unit, shared_mem_bytes_per_unit,
///            spill_risk (0..1), irregular_gather_penalty (>= 1), vector_width_bits,
///            fuse_alpha, fuse_beta, fuse_gamma, run_to_run_variance, source}  optional
///   efficiencies: [{kernel, shape_class, flops_per_s, bytes_per_s, overhead_s,
///                   samples, source, curve}]            optional
///     curve: [[work_per_call, net_rate], ...]          optional rate curve (FLOPs and
///            FLOP/s for gemm.* classes, bytes and bytes/s otherwise): 1..64
///            points, both numbers > 0, work strictly increasing; rates net of
///            overhead_s (see KernelEfficiency::curve)
/// Unknown keys are errors (they are usually typos). Every Sourced value is > 0.
StatusOr<HardwareProfile> parseProfile(const std::string& jsonText, const std::string& sourceName);
StatusOr<HardwareProfile> loadProfile(const std::string& path);
/// A valid rate curve from measured points (any order): sorted by FLOPs,
/// points of equal FLOPs merged (geometric mean of their rates), points with a
/// non-positive or non-finite value dropped, thinned evenly (ends kept) to at
/// most kMaxCurvePoints.
std::vector<RatePoint> makeRateCurve(std::vector<RatePoint> points);

/// Serialises (round-trips through parseProfile).
std::string profileToJson(const HardwareProfile& p);
/// Writes profileToJson(p) after checking that it parses back.
Status saveProfile(const HardwareProfile& p, const std::string& path);

/// Built-in profiles: v100 a100 h100 h200 mi100 mi250x tpu-v3 tpu-v4 x86-64
/// (src/hw/profiles/<name>.json, embedded at build time; listed sorted by name).
std::vector<std::string> builtinProfileNames();
StatusOr<HardwareProfile> builtinProfile(const std::string& name);
/// A name from builtinProfileNames() or a path to a JSON file.
StatusOr<HardwareProfile> resolveProfile(const std::string& nameOrPath);

/// The hardware context vector c_H fed to policies (fixed length). lg(x) is
/// log10(x) for x > 0 and 0 otherwise. Order:
///   0  lg peak("fp32")            FLOP/s
///   1  lg peak("bf16")            FLOP/s (falls back to fp32)
///   2  lg peak("int8")            OP/s   (falls back to fp32)
///   3  lg dramBandwidth()         bytes/s
///   4  lg last-level cache size   bytes (memory level before the last; 0 if none)
///   5  lg last-level cache BW     bytes/s
///   6  lg launchLatencyS          seconds (negative: -5.3 for 5 us)
///   7  lg parallelUnits
///   8  lg traits.warpWidth
///   9  lg matrixUnit m*n*k
///   10 lg ridge point             peak("fp32") / dramBandwidth(), FLOP/byte
///   11 traits.spillRisk           0..1, not log-scaled
///   12 lg traits.irregularGatherPenalty
///   13 kind == "cpu"              one-hot
///   14 kind == "gpu"
///   15 kind == "tpu"
std::vector<double> contextVector(const HardwareProfile& p);
size_t contextVectorSize();

}  // namespace cagr
