// Strided element copies for the CPU eltwise / movement steps: a view of a
// source (broadcast, transpose, slice) walked in row-major order and written
// contiguously. Dims that are contiguous in the source are merged first, so
// most views become one or two dims and the inner loop is a memcpy, a fill or
// a fixed-stride gather the compiler vectorises. Whole views (copyStridedAll)
// take two faster paths: a transpose that moves the innermost axis is copied
// in 8 x 8 tiles (AVX2 for 4-byte elements), and short contiguous runs are
// copied whole, run by run. Any element size up to 8 bytes. Also the thread
// split these steps share (threadsFor, parallelChunks).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cagr/status.h"

namespace cagr::cpu {

/// Element (i_0 .. i_{r-1}) of the view is src[start + sum_d i_d * strides[d]];
/// dims of size 1 are dropped and mergeable neighbours merged.
struct StridedLayout {
  std::vector<int64_t> shape, strides;
  int64_t start = 0;
};

/// The coalesced layout of a view with the given (uncoalesced) shape and
/// element strides into the source.
StridedLayout coalesce(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t start = 0);

/// Layout of a tensor of `shape` read as if broadcast (NumPy) to `outShape`.
StridedLayout broadcastLayout(const std::vector<int64_t>& shape, const std::vector<int64_t>& outShape);

/// True when element i of the view is src[start + i] (a plain contiguous run).
bool isContiguous(const StridedLayout& l);

/// Copies elements [begin, begin + count) of the view, in row-major order,
/// to the contiguous `dst`; elemSize is 1, 2, 4 or 8.
void copyStrided(const std::byte* src, size_t elemSize, const StridedLayout& l, int64_t begin, int64_t count,
                 std::byte* dst);

/// The whole view (`total` elements) into dst, split over `threads` OpenMP
/// threads when it is large (tiles and short runs count two passes an
/// element, measured). Results are the source's bits, whichever path.
void copyStridedAll(const std::byte* src, size_t elemSize, const StridedLayout& l, int64_t total, std::byte* dst,
                    int threads);

/// Work (element operations: elements times passes over them) at or above
/// which a step spreads its loop over threads. A parallel region costs
/// microseconds on an idle host but milliseconds when the host is
/// oversubscribed (measured: 6 ms median on a busy 2-core VM), and these
/// loops are mostly memory-bound, so only work of several milliseconds is
/// split.
constexpr int64_t kParallelWork = int64_t{1} << 22;

/// Number of threads worth using for `work` element operations (1 below
/// kParallelWork).
int threadsFor(int64_t work, int threads);

/// Runs fn(begin, end) -> Status over [0, total) on `nt` OpenMP threads
/// (one call when nt <= 1, see threadsFor). The range is cut into a few
/// chunks per thread handed out dynamically, so a thread the OS schedules
/// late (a busy host) does not hold the others up. The first error wins.
template <typename Fn>
Status parallelChunks(int64_t total, int nt, Fn&& fn) {
  if (nt <= 1 || total < 2) return fn(int64_t{0}, total);
  const int64_t chunks = std::min<int64_t>(total, int64_t{4} * nt);
  Status first = Status::ok();
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    Status st = fn(total * c / chunks, total * (c + 1) / chunks);
    if (!st.isOk()) {
#pragma omp critical(cagr_cpu_parallel_chunks)
      if (first.isOk()) first = st;
    }
  }
  return first;
}

}  // namespace cagr::cpu
