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
/// ("own.gather", "gather.zipf"), ("view", "") for metadata-only ops. Where
/// the profile has CUDA backend-probe entries (cagr profile --target cuda),
/// a node the CUDA backend runs as generated code is priced as that kernel
/// in its probed class: ("nvrtc.cin", "gemm.cin"), ("nvrtc.interaction",
/// "gemm.interaction"), ("nvrtc.fm", "reduce.fm"), nvrtc.embedding /
/// nvrtc.reduce / nvrtc.eltwise / nvrtc.movement in the default class
/// (softmax and layer norm as nvrtc.reduce in reduce.rows), and a GEMM no
/// plan gave a library as cublaslt.matmul (what the CUDA backend calls).
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

/// Element alignment a GEMM's N and K need on the matrix unit for
/// `precision`: the unit's alignElements for 16-bit types, half of it for
/// tf32 (same bytes); 1 for fp32 (CUDA cores / CPU vectors need none).
int matrixUnitAlignment(int alignElements, const std::string& precision);
/// True when N or K is not a multiple of `alignment`.
bool misalignedGemm(int alignment, double n, double k);

/// Profile shape class holding a tensor-core kernel's GEMMs whose N or K is
/// misaligned (cagr-profile-cuda measures them apart from the aligned
/// shapes that make the size-class curves).
inline constexpr const char* kMisalignedGemmClass = "gemm.misaligned";

/// Slow-down of a GEMM on the matrix unit (`precision` tf32 / bf16 / fp16)
/// whose N or K is misaligned (matrixUnitAlignment), for a call of `flops`
/// FLOPs priced as (`kernel`, `shapeClass`). Where the profile measured the
/// kernel's misaligned shapes (a kMisalignedGemmClass entry with a curve),
/// it is the aligned curve's rate over the misaligned curve's rate at
/// `flops` (>= 1; the skinny class is measured mostly misaligned, so 1);
/// otherwise the trait default 2 (the H200 ran TF32/BF16 GEMMs with
/// N = 367 or K = 479 2-4.5x slower than aligned ones of the same FLOPs).
/// 1 for fp32, non-GPU platforms or aligned shapes.
double misalignmentPenalty(const HardwareProfile& hw, const std::string& precision, const std::string& kernel,
                           const std::string& shapeClass, double n, double k, double flops);

/// GEMM shape class from M, N, K: gemm.tiny / small / medium / large / skinny.
std::string gemmShapeClass(double m, double n, double k);

/// Profile shape class of f32 cuBLASLt layers over a weight as CAGR's CUDA
/// backend runs them (backend probes, hw/cuda_probes.cc): a call of >= 1e8
/// FLOPs has its algorithm tuned on its first run and, on sm_90, also runs
/// on CAGR's own wgmma tile where that is faster (backends/cuda/cuda_blas.h).
/// Its curve is of those tuned calls, so it prices only calls within its
/// measured FLOP range (effectiveRates).
inline constexpr const char* kTunedGemmClass = "gemm.tuned";

/// Rates for (kernel, class): the profile's entry when it has one, else a
/// fraction of peak / bandwidth from the platform traits. For a GEMM class
/// whose entry carries a rate curve and a call of `flopsPerCall` > 0 FLOPs,
/// the FLOP rate is read off the curve (KernelEfficiency::rateAt) instead of
/// the class-wide flops_per_s. A cublaslt.matmul call of class gemm.small /
/// medium / large at or above the smallest call of the profile's
/// ("cublaslt.matmul", kTunedGemmClass) curve takes the faster of the two
/// rates: the backend runs it tuned (and on sm_90 maybe on its wgmma tile).
/// That curve is of layers over a constant weight; a product of two
/// activations that large in f32 is priced by it too (none in the zoo's
/// plans: AutoInt's are batched, gemm.batched).
Efficiency effectiveRates(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass,
                          double flopsPerCall = 0);

/// Memory rate of one call of (kernel, class) moving `bytesPerCall`: read
/// off the entry's byte curve where the profile measured one (backend
/// probes: curve points are (bytes per call, bytes/s) for non-GEMM
/// classes); GEMM classes keep `classRate`; else, for streaming classes (eltwise.stream, reduce.rows), the
/// larger of `classRate` and the bandwidth of the cache level that holds the
/// call; else `classRate`.
double streamingBandwidth(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass,
                          double bytesPerCall, double classRate);

/// Bandwidth of the smallest cache level (not device memory) that holds
/// `workingSetBytes`, or 0 when none does.
double cacheBandwidthFor(const HardwareProfile& hw, double workingSetBytes);

/// The form of the CUDA backend's generated GEMM (nvrtc.gemm_small) for
/// Gemm / MatMul node `n`, as a shape class its probes are filed under:
/// "gemm.narrow" (cagr_gemm_narrow: f32 math, no batch, N of 16 / 32 / 64,
/// a static K <= 256 in multiples of 4, A row-major, a 2-D B that is
/// [K][N] or a constant), "gemm.rows" (cagr_gemm_rowk: no batch, K <= 16,
/// N = 32 q <= 512 with at most 64 weights a thread), "gemm.skinny" (N <= 4:
/// a warp per row's dots) or "gemm.tiles" (the FFMA tiles at their largest,
/// 64 x 128 with 8 x 4 sums a thread: N >= 128, K > 64). The choice
/// mirrors backends/cuda/codegen_gemm.cc for sm_80+ (the probed GPUs);
/// CudaDlrmCodegen.GemmFormClassMatchesTheGeneratedKernel holds them equal.
/// Empty for other ops, symbolic N / K and smaller tiles (priced by their FLOP
/// class).
std::string generatedGemmFormClass(const Graph& g, const Node& n);

/// The CUDA-graph per-kernel floor the profile measured (the overhead_s of
/// its kGraphStepKernel / kGraphStepClass entry), or 0 when it has none.
/// Plans priced on such a profile charge it per kernel instead of the
/// kernel's single-launch overhead (the CUDA backend replays plans as graphs).
inline constexpr const char* kGraphStepKernel = "cagr.graph_step";
inline constexpr const char* kGraphStepClass = "launch.graph";
double graphStepFloor(const HardwareProfile& hw);

/// The same floor for a generated kernel launched as a programmatic dependent
/// of the kernel before it (the CUDA backend's own kernels on sm_90+): the
/// overhead_s of the kGraphStepKernel / kGraphStepPdlClass entry where the
/// profile measured one, else graphStepFloor(). Library calls keep
/// graphStepFloor(): cuBLAS / cuBLASLt launch their kernels without it.
inline constexpr const char* kGraphStepPdlClass = "launch.graph.pdl";
double generatedStepFloor(const HardwareProfile& hw);

/// A CUDA-graph replay's fixed cost: the overhead_s of the profile's
/// kGraphStepKernel / kGraphReplayClass entry (median replay of a one-kernel
/// graph, graph launch included), or 0 when it has none. Plans priced on
/// such a profile pay it less one kernel's floor once.
inline constexpr const char* kGraphReplayClass = "launch.replay";
double graphReplayFixed(const HardwareProfile& hw);

/// One tiny generated kernel issued alone (no graph): the overhead_s of the
/// profile's kGraphStepKernel / kSingleStepFloorClass entry, or 0 when it has
/// none. The CUDA backend probes (nvrtc.*) time their calls this way, so an
/// entry's overhead_s (its smallest call) is this floor plus the kernel's
/// own shortest run, which a graph replay still pays: probedMinimumRun().
inline constexpr const char* kSingleStepFloorClass = "launch.single";
double singleStepFloor(const HardwareProfile& hw);

/// The shortest run of a CUDA-backend-probed kernel beyond the launch floor:
/// overhead_s of the (kernel, shapeClass) entry less the trivial probe
/// kernel's (kTrivialProbeKernel / kTrivialProbeClass; singleStepFloor()
/// where the profile has no such entry), for
/// generated kernels ("nvrtc.*") and CAGR's cuBLASLt CIN steps
/// ("cublaslt.cin*") with that exact entry; 0 otherwise (no entry, no
/// single-step floor, or a library kernel timed in graph replays).
inline constexpr const char* kTrivialProbeKernel = "nvrtc.eltwise";
inline constexpr const char* kTrivialProbeClass = "eltwise.stream";
double probedMinimumRun(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass);

/// True for the entries the CUDA backend probes time step by step (one step
/// issued alone, the single-step floor inside): CAGR's generated kernels
/// (nvrtc.*) and the library's batched products (gemm.batched, probed as
/// AutoInt's attention), unlike the library GEMM curves cagr-profile-cuda
/// times inside graph replays. Their overhead_s is a single-step time, so
/// inside a replay they pay the graph floor or, for generated kernels, their
/// probed shortest run (a library call's single step also holds its host-side
/// enqueue, ~12 us for cuBLAS's batched GEMM on the H200, which a replay
/// does not pay: the graph floor only).
bool stepProbed(const std::string& kernel, const std::string& shapeClass);

/// True for a vendor-library GEMM call measured by cagr-profile-cuda
/// ("cublas.sgemm", "cublas.gemm_bf16", "cublaslt.matmul", "rocblas.*"), not
/// CAGR's own kernels built on a library (cublaslt.cin).
bool libraryGemmKernel(const std::string& kernel);

/// The share of a vendor-library GEMM's tiles a call of this node fills on a
/// GPU (1 elsewhere): the library runs M x N in 128-wide CTA tiles (cuBLAS's
/// large-GEMM kernels on sm80 / sm90, e.g. sm80_xmma_gemm ... tilesize128x128
/// in Nsight Compute traces of CAGR's plans), so an output dim over 128 costs
/// as if rounded up to a multiple of 128 (DCN-v2's N = 400 and 429 ran at
/// 74-87 % of the rate of the profile's 128-aligned shapes, measured on the
/// H200); narrower dims get narrower tiles and are not rounded. The FLOP
/// curves are measured on shapes that fill their tiles, so the model divides
/// a call's compute time by this share. Batched and skinny products have
/// their own classes (their own probes) and are not rounded.
double gemmTileShare(const HardwareProfile& hw, const Graph& g, const Node& n, const NodeStats& stats,
                     const std::string& shapeClass);

/// Extra bytes a table-batched lookup (EmbeddingBags) moves on the CUDA
/// backend's kernel beyond the op table's count: one lane group per lookup
/// spans the widest table's row, so each lookup of a narrower table costs
/// a widest-table row read and written (rows x sum over tables of
/// (widest - width) x 8 bytes). 0 for other nodes or equal widths. The
/// gather.tables probes record their bytes with it, as the cost model
/// prices them.
double tableBatchPadding(const Graph& g, const Node& n, const std::vector<int64_t>& outShape);

/// Bytes written by group members and read only inside the group.
double internalTraffic(const Graph& g, const GraphStats& stats, const std::vector<char>& member);
/// Number of reductions inside a group (each adds a synchronisation).
int reductionsInside(const Graph& g, const std::vector<NodeId>& group);

}  // namespace cagr
