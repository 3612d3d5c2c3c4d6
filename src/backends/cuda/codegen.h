// The CUDA backend's code generator (issue 6): CUDA C++ source for one
// kernel group of a MIR plan, and its compilation with NVRTC for the GPU's
// own architecture, cached by content hash. Pure host code with no CUDA
// device needed, so CI compiles every zoo model's kernels.
//
// Contract with the runtime (cuda_backend.cc):
//  * Device storage: activations and f32 constants are `float`; integer ids
//    and offsets are `long long`; bf16 / f16 constants are 16-bit
//    (__nv_bfloat16 / __half); an int8-rowwise table [R, D] is R rows of
//    int8RowStride(D) bytes: D int8 codes, zero padding to a multiple of 4,
//    then float scale and float bias (value = code * scale + bias).
//  * A generated kernel is `extern "C" __global__ void <entry>(P0, ..., Pk,
//    long long e0, ..., long long em)`: one device pointer per entry of
//    `params` (reads first, then the `numOutputs` buffers it writes), then
//    one 64-bit extent per entry of `extents`, each a dimension of a
//    parameter's concrete shape at run time (batch, multi-hot id count, ...).
//  * The runtime calls `launch(extents)` with the same extent values to get
//    the grid, block and dynamic shared memory.
//  * Other dtypes are stored as their C types (i32 int, bool one byte, ...).
//    Int8-rowwise codes are unsigned bytes q in [0, 255] with value
//    q * scale + bias (runtime/reference/precision.cc). Buffers start on
//    16-byte boundaries (kernels load rows as float4); a kernel's reads and
//    writes never alias one another. Constants are dense row-major whatever
//    their layout decision.
//  * Kernels whose code comes out identical (e.g. one lookup per table of
//    the same width) share one entry: launch `entry` with each kernel's own
//    params, extents and launch().
//  * A kConcatInPlace group is generated as a plain concat copy: the
//    contract has no strided view of the concat buffer for the producers.
//  * A lookup group may carry column Slices of the lookup's [N, W] output
//    as members (cuda_program.cc merges them when they are the output's
//    only readers): the kernel writes each slice's columns into the
//    slice's own buffer and the W-wide output is never stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/mir.h"
#include "cagr/status.h"

namespace cagr::cuda {

/// Columns [begin, end) that Slice node `n` keeps of a rank-2 [rows, W]
/// value with a static W: step 1, every row kept. nullopt for any other
/// slice.
struct ColumnRange {
  int64_t begin = 0, end = 0;
};
std::optional<ColumnRange> columnSlice(const Graph& g, NodeId n);

/// Bytes per row of an int8-rowwise table with `dim` columns.
inline size_t int8RowStride(int64_t dim) { return (static_cast<size_t>(dim) + 3) / 4 * 4 + 8; }

struct Launch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  unsigned clusterY = 1;  // > 1: thread-block clusters of that many blocks along y (sm_90)
};

/// Dimension `dim` of the buffer passed as parameter `param`.
struct ExtentRef {
  int param = 0;
  int dim = 0;
};

struct GeneratedKernel {
  std::string entry;             // module function to launch (identical kernels share one)
  std::vector<ValueId> params;   // device buffers in parameter order: reads, then writes
  int numOutputs = 0;            // the last numOutputs params are written
  std::vector<ValueId> transposed;  // constants read as the transpose of their 2-D [R, C]: [C, R], f32 as stored
  std::vector<ValueId> tf32;        // of those, the ones read rounded to TF32 (WeightFormat::tf32)
  // CIN weights [O, H*M] read K-major per stage (WeightFormat::group):
  // value, K per stage, row pitch, whether as hi / lo planes
  // (WeightFormat::split), in swizzled rows of 128 bytes
  // (WeightFormat::swizzle128) and as f32 or bf16 (WeightFormat::element).
  struct Grouped {
    ValueId value = kNoValue;
    int64_t group = 0, pitch = 0;
    bool split = false, swizzle128 = false;
    Precision element = Precision::kF32;
  };
  std::vector<Grouped> grouped;
  std::vector<ExtentRef> extents;  // then one `long long` per entry
  std::function<Launch(const std::vector<int64_t>& extents)> launch;
  std::string name;              // for kernelReport: "nvrtc.embedding[26 tables]"
  // Starts with CAGR_GRID_DEPS() (the prelude), so it may be launched as a
  // programmatic dependent of the kernel before it on its stream (sm_90+).
  bool gridDeps = false;
  // Waits itself (CAGR_GRID_WAIT()) after work that reads no predecessor's
  // results; lowerPlan then lets the generated kernel before it on its
  // stream launch it early (CAGR_GRID_LAUNCH()).
  bool waitsLate = false;
};

/// One kernel group, as the runtime hands it over.
struct CodegenRequest {
  const Graph& g;
  std::vector<NodeId> members;   // graph order
  GroupShape shape;
  KernelId kernel = 0;           // the plan's choice (0 = auto)
  std::vector<ValueId> outputs;  // member outputs used outside the group or graph outputs
  int sm = 90;                   // the GPU's compute capability (major * 10 + minor)
  int sms = 132;                 // its streaming multiprocessors (the H200's 132 by default)
  // The step before it on its stream is a generated kernel, which can let
  // it launch early (cuda_program.cc launchWaitersEarly): an interaction /
  // FM kernel then does its lookups before it waits (codegen_rec.cc).
  bool afterGenerated = false;
  // The batch the plan was priced at (Graph::meta "batch"; 0: unknown): a
  // generator may pick the variant of a kernel that is faster there (any
  // batch still runs).
  int64_t batch = 0;
};

/// Appends the kernel for `r` to `moduleSource` (declarations it needs are
/// emitted once per module by moduleHeader()). kUnsupported, naming the node,
/// when no generator handles the group — the runtime then uses a library
/// kernel or fails the compile with that message.
StatusOr<GeneratedKernel> generateKernel(const CodegenRequest& r, std::string& moduleSource);
/// The common prelude of every module (fp16/bf16 headers, helpers).
std::string moduleHeader();

struct NvrtcOptions {
  std::string arch = "sm_90a";  // "sm_XX[a]": CUBIN for that GPU; "compute_XX": PTX only
  std::string cacheDir;         // "" = $CAGR_CACHE_DIR, else $XDG_CACHE_HOME/cagr, else ~/.cache/cagr
  bool useCache = true;
};

struct CompiledModule {
  std::string arch;
  std::string ptx;               // always produced
  std::vector<char> cubin;       // empty for compute_XX
  bool fromCache = false;
  double compileSeconds = 0;     // 0 when from cache
  std::string log;               // NVRTC's log (warnings)
};

/// Compiles `source` with NVRTC. Errors carry NVRTC's log with the failing
/// line of source quoted.
StatusOr<CompiledModule> compileModule(const std::string& source, const NvrtcOptions& opts = {});

}  // namespace cagr::cuda
