// An f32 GEMM of CAGR's own on Hopper's warpgroup tensor-core instructions
// (wgmma, sm_90a), offered to a library GEMM step as one more candidate of
// its first-run tuning (cuda_blas.h PreparedGemm::tune): the step keeps
// whichever of cuBLASLt's algorithms and this tile runs faster on its bound
// operands, so the plan's kernel choice (`cublaslt.matmul`, f32 math) and
// its modelled cost stay what the optimizer priced.
//
// It is IEEE-f32 accurate, not TF32: 3xTF32 — each operand split as x = hi
// + lo (hi rounded to TF32, lo the remainder rounded again), each product
// lo*hi + hi*lo + hi*hi — with every 32-wide K chunk summed by the tensor
// cores into a fresh accumulator that f32 adds then add to the running sum.
// The tensor core aligns a sum's terms to the largest and drops the bits
// below, so one accumulator over all of K drifts as K grows (the CIN kernel,
// codegen_cin_x3.cc, and codegen_gemm_x3.cc chunk the same way). Measured on
// an H100 against an fp64 reference (the first form of
// bench/cuda/probes/gemm_x3_wgmma.cu): the largest error relative to the
// largest output 3.3e-7 against cuBLASLt SGEMM's 9.0e-7 on 4096x256x512,
// 2.8e-7 against 6.8e-7 on 4096x512x368.
//
// A block computes 128 x 64 outputs with two warpgroups (m64n64k8 each),
// one block per SM where the launch is one wave of them, else two;
// K chunks of 32 floats are stored in shared memory with the 128-byte
// swizzle, two stages: while the tensor cores run a chunk, the threads split
// and store the next one and load the one after into registers; W is split
// the same way on its way in. tf32 wgmma reads both operands K-major, so W
// is read as [N][K]: in place where the weight is stored so with 16-byte
// rows (on sm_90 the backend keeps an f32 Linear's weight [N][K] where K is
// a multiple of 4: planLibraryGemm), else from a K-major copy made once,
// which the executable reports as weights.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_gemm.h"
#include "cagr/status.h"

namespace cagr::cuda {

/// The NVRTC source of the tile's kernels (extern "C"): cagr_wgmma_x3_v4_B
/// (X rows read 16 bytes at a time), cagr_wgmma_x3_v1_B (one float at a
/// time: any K, pitch and alignment), each for B = 1 or 2 blocks per SM, and
/// cagr_wgmma_kmajor (a weight's K-major copy).
std::string gemmWgmmaSource();
/// cagr_wg_swz / cagr_wg_desc, the 128-byte-swizzled K-major operand layout
/// and its wgmma descriptor (guarded; also in the CIN kernel's source).
const char* wgmmaOperandSource();

/// Rows and columns of one block, and its threads.
constexpr int kWgmmaRows = 128, kWgmmaCols = 64, kWgmmaThreads = 256;
/// Dynamic shared memory of one block: two stages of X hi / lo (128 x 32)
/// and W hi / lo (64 x 32) floats, plus 1 KB to align them to 1024 bytes.
constexpr unsigned kWgmmaSharedBytes = 2 * (2 * 128 * 32 + 2 * 64 * 32) * 4 + 1024;

/// Why the tile cannot run any call of `p` ("" when it may, depending on
/// the call's shapes): f32 math, operands and output; alpha 1 and no addend;
/// no activation but ReLU. The plan's test (planLibraryGemm) of whether a
/// weight is worth keeping as the tile reads it.
std::string wgmmaPlanRejection(const LibraryGemm& p);

/// Why the tile cannot run library call `c` of `p` ("" when it can): f32
/// math, operands and output; one product (no batch); alpha 1 and no addend;
/// no activation but ReLU; the product's A (the call's B) row-major; the
/// product's B (the call's A) a constant (`constantB`).
std::string wgmmaGemmRejection(const LibraryGemm& p, const ColumnMajorGemm& c, bool constantB);

/// CAGR_GEMM_WGMMA: unset or "0" never offers the tile (the lossless
/// default: its 3xTF32 products measured less accurate than SGEMM), "1" or
/// "timed" lets the first-run timing choose, "force" always runs it where it
/// can (tests).
enum class WgmmaMode : uint8_t { kOff, kTimed, kForced };
WgmmaMode wgmmaMode();

/// The tile's kernels on this GPU (sm_90 only) and the weights as it reads them.
class WgmmaGemm {
 public:
  /// Compiles (NVRTC, cached by content) and loads the kernels for `arch`
  /// ("sm_90a"); kUnsupported for any other. `compileSeconds` gets NVRTC's
  /// time (0 from the cache).
  static StatusOr<std::unique_ptr<WgmmaGemm>> create(const std::string& arch, double* compileSeconds = nullptr);
  ~WgmmaGemm();
  WgmmaGemm(const WgmmaGemm&) = delete;
  WgmmaGemm& operator=(const WgmmaGemm&) = delete;

  /// A constant weight as the tile reads it: the product's B at `w`, [K][N]
  /// with row pitch `ldw` or [N][K] when `kMajor`, used in place where it is
  /// [N][K] with 16-byte rows (K and the pitch multiples of 4), else copied
  /// once (on `stream`, synchronized) to [N][K rounded up to 4] and kept
  /// until release().
  struct Weight {
    DevicePtr copy;               // null when the weight is read in place
    const float* data = nullptr;  // [N][pitch], K-major
    int64_t n = 0, k = 0, pitch = 0;
    size_t bytes() const { return copy ? static_cast<size_t>(n * pitch * 4) : 0; }
  };
  StatusOr<const Weight*> weight(const void* w, int64_t n, int64_t k, int64_t ldw, bool kMajor, cudaStream_t stream);
  bool hasWeight(const void* w) const { return weights_.count(w) > 0; }
  void release(const void* w);
  /// Device bytes of the kept copies.
  size_t copyBytes() const;

  /// Y[M, N] (row pitch ldy) = act(X[M, K] (row pitch ldx) * W + bias) with
  /// the weight `w`; `bias` may be null.
  Status launch(const Weight& w, const float* x, int64_t ldx, const float* bias, float* y, int64_t ldy, int64_t m,
                bool relu, cudaStream_t stream, const std::string& where) const;

 private:
  WgmmaGemm() = default;
  LibraryPtr library_;
  cudaKernel_t gemm_[2][2] = {};  // [X by 16 bytes][two blocks per SM]
  cudaKernel_t kMajor_ = nullptr;
  std::map<const void*, Weight> weights_;
};

}  // namespace cagr::cuda
