// Strided copies (see eltwise_strided.h): coalesce once, then walk the view
// with an odometer over the outer dims and a typed inner loop.
#include "backends/cpu/eltwise_strided.h"

#include <algorithm>
#include <cstring>

#include "runtime/reference/kernel_util.h"

namespace cagr::cpu {
namespace {

// Runs shorter than this are copied by a loop the compiler inlines: a
// memcpy call per short run (a transpose's 16-float rows) costs more.
constexpr int64_t kShortRun = 64;

template <typename E>
void copyInner(const E* s, int64_t stride, int64_t n, E* d) {
  if (stride == 1 && n < kShortRun) {
    for (int64_t j = 0; j < n; ++j) d[j] = s[j];
  } else if (stride == 1) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(E));
  } else if (stride == 0) {
    std::fill_n(d, n, *s);
  } else {
    for (int64_t j = 0; j < n; ++j) d[j] = s[j * stride];
  }
}

template <typename E>
void copyTyped(const E* src, const StridedLayout& l, int64_t begin, int64_t count, E* dst) {
  size_t r = l.shape.size();
  if (r == 0) {
    std::fill_n(dst, count, src[l.start]);
    return;
  }
  std::vector<int64_t> idx(r, 0);
  int64_t off = l.start, rem = begin;
  for (size_t d = r; d-- > 0;) {
    idx[d] = rem % l.shape[d];
    rem /= l.shape[d];
    off += idx[d] * l.strides[d];
  }
  const int64_t inner = l.shape[r - 1], is = l.strides[r - 1];
  while (count > 0) {
    int64_t n = std::min(count, inner - idx[r - 1]);
    copyInner(src + off, is, n, dst);
    dst += n;
    count -= n;
    off += n * is;
    idx[r - 1] += n;
    if (idx[r - 1] < inner) continue;
    off -= inner * is;
    idx[r - 1] = 0;
    for (size_t d = r - 1; d-- > 0;) {  // carry into the outer dims
      off += l.strides[d];
      if (++idx[d] < l.shape[d]) break;
      off -= l.strides[d] * l.shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

StridedLayout coalesce(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t start) {
  StridedLayout l;
  l.start = start;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!l.shape.empty() && l.strides.back() == strides[d] * shape[d]) {
      l.shape.back() *= shape[d];
      l.strides.back() = strides[d];
      continue;
    }
    l.shape.push_back(shape[d]);
    l.strides.push_back(strides[d]);
  }
  return l;
}

StridedLayout broadcastLayout(const std::vector<int64_t>& shape, const std::vector<int64_t>& outShape) {
  return coalesce(outShape, ref::broadcastStrides(shape, outShape));
}

bool isContiguous(const StridedLayout& l) {
  return l.start == 0 && (l.shape.empty() ? false : l.shape.size() == 1 && l.strides[0] == 1);
}

void copyStrided(const std::byte* src, size_t elemSize, const StridedLayout& l, int64_t begin, int64_t count,
                 std::byte* dst) {
  if (count <= 0) return;
  ref::visitElementBytes(elemSize, [&](auto tag) {
    using E = decltype(tag);
    copyTyped(reinterpret_cast<const E*>(src), l, begin, count, reinterpret_cast<E*>(dst));
  });
}

int threadsFor(int64_t work, int threads) {
  return work >= kParallelWork ? std::max(threads, 1) : 1;
}

void copyStridedAll(const std::byte* src, size_t elemSize, const StridedLayout& l, int64_t total, std::byte* dst,
                    int threads) {
  Status done = parallelChunks(total, threadsFor(total, threads), [&](int64_t lo, int64_t hi) {
    copyStrided(src, elemSize, l, lo, hi - lo, dst + static_cast<size_t>(lo) * elemSize);
    return Status::ok();
  });
  (void)done;  // copies cannot fail
}

}  // namespace cagr::cpu
