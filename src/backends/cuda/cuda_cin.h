// One CIN layer on cuBLASLt (catalog kernel cublaslt.cin, issue 6), the part
// that needs no GPU: out[b,o,d] = bias[o] + sum_k W[o,k] Z[(b,d),k] with the
// outer product Z[(b,d), h*M+m] = xk[b,h,d] * x0[b,m,d] materialised, a
// chunk of the batch at a time, in a bounded scratch buffer, in the GEMM's
// input element type (f32 for f32 / tf32 math, bf16, f16): xk, x0 and W
// rounded to the math precision as the reference executor rounds them, the
// exact product once more to the element type (as nvrtc.cin's wmma path;
// the reference keeps it exact). Per chunk of `rows` samples:
//
//   zKernel  Z[rows*D, ldz]  <- outer product         (generated)
//   GEMM     Y[rows*D, O]    =  Z * Wq^T, f32 out     (cuBLASLt, tensor cores
//                                                       for tf32 / bf16 / f16)
//   outKernel out[b, o, d]   <- Y[(b,d), o] + bias[o] (generated transpose)
//
// In K slices (where the layer has them, CinGemm::sliceH, and the batch
// state asks for them: one of the variants the executable's first run
// times, cuda_launch.cc chooseBatch), Z holds sliceH rows of xk at a time:
// zSliceKernel and the GEMM run once per slice, slice i's GEMM taking W's
// columns i * sliceH * M .. and adding into Y (beta 1) after the first, so
// Z's scratch shrinks by the slice count while each GEMM keeps all of the
// chunk's columns (a finer chunk of samples would narrow them).
//
// wKernel (not for f32 math) writes Wq [O, ldz], W rounded to the element
// type, once per run before the first chunk. The three generated kernels
// live in the plan's NVRTC module but do not follow codegen.h's parameter
// contract (the runtime launches them itself, cuda_cin_run.h):
//   wKernel(const float* w, E* wq)                           grid launch({})
//   zKernel(const float* xk, const float* x0, E* z, long long rows)
//   outKernel(const float* y, const float* bias, float* out, float* pooled, long long rows)
//   zSliceKernel as zKernel, with xk at the slice's first row
// with xk / x0 / out / pooled already offset to the chunk's first sample and
// bias nullptr without one; zKernel and outKernel launch with launch({rows}).
// outKernel also applies the group's elementwise tail (unary ops and views
// after the CIN, e.g. xDeepFM's ReLU), so `out` is the group's output; with
// a pooled tail (a ReduceSum over D ending the group) it also writes each
// row's sum over D into `pooled` [rows, O], and `out` is nullptr (never
// written) unless a later kernel reads the layer's map.
//
// The GEMM's K is ldz for the reduced modes (Wq and Z carry zero padding up
// to 16 bytes, which keeps every row TMA-aligned: K = 484 bf16 is not), K
// for f32 (W as it is). Chunks: as many samples as the budget holds, then
// evened out over the chunks (no small last GEMM). With lanes > 1 chunk i
// runs on lane i % lanes (the step's stream and lanes - 1 more, forked and
// joined by events inside the captured graph), each lane with its own Z / Y
// and cuBLASLt workspace, so one lane's GEMM overlaps another's kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/codegen.h"

namespace cagr::cuda {

struct CinGemm {
  NodeId node = -1;
  ValueId xk = kNoValue, x0 = kNoValue, w = kNoValue, bias = kNoValue;
  ValueId out = kNoValue;     // the layer's map after the tail (kNoValue: pooled, and no later kernel reads it)
  ValueId pooled = kNoValue;  // the pooled tail's [B, O] row sums (kNoValue: no pooling)
  int64_t O = 0, H = 0, M = 0, D = 0;
  int64_t ldz = 0;  // row pitch of Z and Wq in elements (K rounded up to 16 bytes)
  Precision math = Precision::kF32;
  size_t elementBytes = 4;  // Z / Wq element: 4 (f32, tf32), 2 (bf16, f16)
  int wKernel = -1;         // indices into Program::kernels (-1: f32 math uses W as it is)
  int zKernel = -1;
  int outKernel = -1;
  int zSliceKernel = -1;    // the outer product of sliceH rows of xk at a time (-1: no K slices)
  int64_t sliceH = 0;       // xk rows per K slice (0: the layer has no sliced form, see sliceRows)

  std::string tail;  // the elementwise tail outKernel applies ("" none, else "+relu" ...)

  int64_t K() const { return H * M; }
  /// The values the step writes: the map and / or the row sums.
  std::vector<ValueId> outputs() const;
  /// The GEMM's reduction length: ldz where W is rounded into the zero-padded Wq, K for f32.
  int64_t gemmK() const { return math == Precision::kF32 ? K() : ldz; }
  /// Scratch bytes of Wq (0 for f32 math).
  size_t weightBytes() const;
  /// K slices of the sliced form: H / sliceH (1 without one).
  int64_t slices() const { return sliceH > 0 ? H / sliceH : 1; }
  /// Z's row pitch (elements): ldz, or one K slice's sliceH * M when `sliced`.
  int64_t zPitch(bool sliced) const { return sliced && sliceH > 0 ? sliceH * M : ldz; }
  /// The GEMM's reduction length: gemmK(), or one slice's sliceH * M when `sliced`.
  int64_t gemmK(bool sliced) const { return sliced && sliceH > 0 ? sliceH * M : gemmK(); }
  /// Scratch bytes of one sample's Z and Y rows (Z of one K slice when `sliced`).
  size_t bytesPerSample(bool sliced = false) const;
  /// Samples per chunk for `batch` so Z and Y fit `budget` bytes (>= 1),
  /// evened out: ceil(batch / chunks) with the fewest chunks that fit.
  int64_t chunkRows(int64_t batch, size_t budget, bool sliced = false) const;
  /// Scratch bytes a run at `batch` needs: Wq, then per lane Z and Y of one
  /// chunk and `laneWorkspace` bytes of cuBLASLt workspace, each 256-aligned.
  size_t scratchBytes(int64_t batch, size_t budget, int lanes = 1, size_t laneWorkspace = 0,
                      bool sliced = false) const;
};

/// xk rows per K slice of a layer's sliced form, 0 where it has none: the
/// GEMM's K split into 2 .. kCinMaxSlices equal slices of whole xk rows
/// (the outer product then holds one slice of every sample at a time, the
/// GEMMs summing into Y), each slice's W columns and Z rows 16-byte aligned
/// and Wq / Z without padding (ldz == K), so a slice's W is W's columns at
/// an offset.
int64_t sliceRows(int64_t H, int64_t M, int64_t ldz, size_t elementBytes);
constexpr int64_t kCinMaxSlices = 4;

/// Default bound on one chunk's Z and Y without pipelining (CAGR_CIN_CHUNK_KB,
/// in KiB, overrides it at run time). Measured on the H200 (xDeepFM, batch
/// 4096): 32 MiB chunks left each GEMM too few CTAs for 132 SMs (layers of
/// 16x4400 -> 200 in 19 chunks: 1.05 ms each, 0.60 ms in 3 chunks of 256
/// MiB); larger budgets gain little more (bf16 1.76 -> 1.65 ms end to end)
/// but push peak memory past PyTorch eager's (709 MB bf16). That is the
/// budget for 2-byte Z (bf16 / f16 math). Z of f32 / tf32 math is twice as
/// wide and eager's peak too (1264 MB fp32): there 1 GiB chunks (2 per
/// layer at batch 4096) measured 6.85 ms end to end against 7.78 ms with
/// 256 MiB (5 chunks), peak 743 MB (H200, xDeepFM fp32, batch 4096).
constexpr size_t kCinChunkBudget = size_t{256} << 20;
constexpr size_t kCinChunkBudgetF32 = size_t{1} << 30;
/// Pipelined (lanes > 1): the share of the L2 all lanes' chunks may use together.
constexpr double kCinL2Share = 0.75;
/// cuBLASLt workspace of each lane when pipelined (lane GEMMs run at once, so
/// they cannot share the stream's).
constexpr size_t kCinLaneWorkspace = size_t{8} << 20;

namespace gen {
/// Generates the kernels of the CIN node `r` runs on cublaslt.cin into
/// `moduleSource` (shared by CIN layers of the same shape); returns the
/// layer's description with the kernels in `kernels` order: wKernel (not
/// for f32), zKernel, outKernel (indices filled by the caller).
StatusOr<CinGemm> generateCinGemm(const CodegenRequest& r, std::string& moduleSource,
                                  std::vector<GeneratedKernel>& kernels);
}  // namespace gen

}  // namespace cagr::cuda
