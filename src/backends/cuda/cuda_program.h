// The CUDA backend's compiled form of a plan, built without a GPU: one step
// per kernel in scheduleKernels order (a cuBLAS / cuBLASLt call or a
// generated kernel of the plan's one NVRTC module), the CUDA stream each
// runs on and the steps it waits for, the weight formats to upload, and
// the arena plan for a batch size — buffers share bytes only when every
// use of one happens before the other is written, across streams too.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_cin.h"
#include "backends/cuda/cuda_gemm.h"
#include "cagr/graph.h"
#include "cagr/mir.h"
#include "cagr/status.h"

namespace cagr::cuda {

// kCinGemm: a cublaslt.cin layer (cuda_cin.h), outer-product chunks through cuBLASLt.
enum class StepKind : uint8_t { kLibraryGemm, kGenerated, kCinGemm };

/// How a constant is laid out on the device.
struct WeightFormat {
  ValueId value = kNoValue;
  bool library = false;  // f32 values as the plan stores them (rounded), for cuBLAS/cuBLASLt
  int64_t pitch = 0;     // library: padded row pitch in elements (0: dense)
  bool transposed = false;  // library: a 2-D [R, C] stored as its transpose [C, R] (rows at pitch)
  Precision element = Precision::kF32;  // library: f32, or bf16 / f16 (LibraryGemm::operands)
  bool tf32 = false;  // library f32: each value rounded to TF32, to nearest (ties away from zero; finite values)
  // library, group > 0: a 2-D [R, G * group] stored as [G][planes][R][pitch]
  // (a CIN weight read K-major per xk row h, one h's planes contiguous:
  // cagr_cin_wg_step), zeros past group; split: two planes, hi (x, its low
  // 13 mantissa bits cleared) then lo (x - hi), else one; swizzle128 (rows
  // of 128 bytes): each row's 16-byte chunk u stored as chunk u ^ (r % 8),
  // the order wgmma's 128-byte swizzle reads a K-major operand in.
  int64_t group = 0;
  bool split = false;
  bool swizzle128 = false;
  bool operator==(const WeightFormat&) const = default;
};

struct ProgramStep {
  StepKind kind = StepKind::kGenerated;
  std::vector<NodeId> nodes;            // the plan nodes it runs (graph order)
  int stream = 0;                       // index of its CUDA stream (0 = the capturing one)
  std::vector<ValueId> reads;           // values it reads (views included as they are)
  std::vector<ValueId> writes;          // values it writes
  std::vector<WeightFormat> constants;  // the constants it reads (through views too) and in which layout
  int gemm = -1;                        // kLibraryGemm: index into Program::gemms
  int kernel = -1;                      // kGenerated: index into Program::kernels
  int cin = -1;                         // kCinGemm: index into Program::cins
  std::string name;                     // kernelReport line (GEMMs get their shape at run time)
};

struct Program {
  std::vector<ProgramStep> steps;
  std::vector<LibraryGemm> gemms;
  std::vector<GeneratedKernel> kernels;
  std::vector<CinGemm> cins;             // cublaslt.cin layers (their kernels are in `kernels`)
  std::string moduleSource;              // moduleHeader() + every generated kernel ("" when none)
  std::vector<ValueId> aliasOf;          // value -> the value whose bytes a lone view shares (kNoValue: its own)
  std::vector<int8_t> streamValues;      // CUDA stream index -> the plan's mir.stream
  std::vector<std::vector<int>> waits;   // step -> earlier steps it depends on (data, or its stream's order)
  std::vector<std::vector<char>> after;  // after[t][s]: step s happens before step t
  std::vector<WeightFormat> weights;     // every constant layout a step reads

  int numStreams() const { return static_cast<int>(streamValues.size()); }
  /// The value whose bytes `v` uses.
  ValueId root(ValueId v) const {
    return aliasOf[static_cast<size_t>(v)] == kNoValue ? v : aliasOf[static_cast<size_t>(v)];
  }
};

/// Lowers `plan` (verified for `t`) into steps; generated kernels are
/// appended to one module source (not compiled here). Fails with the code
/// generator's message, naming the group, when no kernel runs a group.
/// `sm` is the GPU's compute capability (major * 10 + minor): generators
/// pick instructions it has (e.g. TF32 MMAs from 80); `sms` its streaming
/// multiprocessors: launches of fewer than two blocks per SM split their
/// reduction over thread-block clusters.
StatusOr<Program> lowerPlan(const Graph& plan, const Target& t, int sm = 90, int sms = 132);

/// The plan's kernel groups in the order lowerPlan runs them
/// (scheduleKernels, with the column slices that are a lookup's only
/// readers merged into its group: the lookup kernel writes them).
StatusOr<std::vector<std::vector<NodeId>>> loweredGroups(const Graph& plan);
/// True for a loweredGroups group that is a lone lookup, or a lookup with
/// the column slices of its output it writes.
bool isLookupGroup(const Graph& g, const std::vector<NodeId>& members);
/// How lowerPlan runs the kGemm group `members` on cuBLASLt / cuBLAS when
/// its kernel `k` names a library (or none); kUnsupported with the reason
/// when it goes to the code generator instead. `sm`: the GPU's compute
/// capability (90: f32 weights stay K-major for the wgmma tile unless
/// CAGR_GEMM_WGMMA=0; planLibraryGemm).
StatusOr<LibraryGemm> libraryGemmFor(const Graph& g, const ValueUses& uses, const Target& t,
                                     const std::vector<NodeId>& members, NodeId anchor, KernelId k, int sm = 0);

/// 16-bit activation storage for bf16 / f16 plans, a lowering step of the
/// CUDA backend (cuda_storage.cc; not a policy decision): marks bf16 / f16
/// the values between kernels that hold only values of that type (a
/// one-id-per-bag lookup of tables stored so) or that every reader rounds
/// to it anyway (GEMMs on cuBLASLt in that math), where the writer and
/// every reader handle the type. The one value it changes: a GEMM that
/// writes 16 bits takes its bias rounded to them (cuBLASLt's rule, and
/// autocast's). CAGR_CUDA_REDUCED_ACTIVATIONS=0 turns it off. Returns the
/// number of values marked.
StatusOr<int> storeReducedActivations(Graph& plan, const Target& t);

/// The graph the CUDA backend runs for plan `given`: its graph-level
/// lowering steps in order — misaligned tensor-core GEMM widths padded
/// (lower/pad_gemm_dims.h), narrow GEMMs over a concat reading its operands
/// in place (lower/split_concat_gemm.h), reduced activations marked (above).
StatusOr<Graph> prepareGraph(const Graph& given, const Target& t);
/// For each node of `prepared` (prepareGraph's result) the node of `given`
/// it is (same name and op; names used once), else -1: nodes the steps added.
std::vector<NodeId> planNodeIds(const Graph& given, const Graph& prepared);

/// Device buffers of one batch size.
struct ArenaPlan {
  std::vector<std::vector<int64_t>> shape;  // value -> concrete shape (inputs, step outputs, views, constants)
  std::vector<char> inArena;                // value -> has its own arena bytes
  std::vector<size_t> offset;               // value -> arena offset (inArena)
  std::vector<size_t> bytes;                // value -> bytes it occupies (inArena)
  std::vector<size_t> stepOffset;           // step -> arena offset of its scratch (placeArena's stepScratch > 0)
  size_t size = 0;                          // arena bytes
};

constexpr size_t kDeviceAlign = 256;  // cuBLASLt's default operand alignment

/// Shapes and arena offsets for the symbol values `b` binds: graph inputs
/// and step outputs get arena space; two share bytes only when one's every
/// access (write, reads, views' reads) happens before the other's write.
StatusOr<ArenaPlan> planArena(const Graph& g, const Program& p, const SymbolBindings& b);
/// planArena in two parts: shapes and bytes (no offsets yet), then offsets
/// with `stepScratch[s]` bytes that step s needs only while it runs (a
/// library call's workspace; empty: none) placed in the same arena, sharing
/// bytes with buffers and other steps' scratch it cannot overlap in time.
StatusOr<ArenaPlan> arenaShapes(const Graph& g, const Program& p, const SymbolBindings& b);
void placeArena(const Graph& g, const Program& p, const std::vector<size_t>& stepScratch, ArenaPlan& a);

/// Bytes of one element of `v` on the device (codegen.h: f32 activations,
/// 2 for those storeReducedActivations marked bf16 / f16, i64 ids; other
/// dtypes as stored).
size_t deviceElementBytes(const Graph& g, ValueId v);

}  // namespace cagr::cuda
