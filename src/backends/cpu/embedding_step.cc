// The lookup step (Pattern::kGather, kernel own.embedding): one Gather,
// EmbeddingBag or EmbeddingBags plus its elementwise tail, with the rows
// split over OpenMP threads. Each block of rows is pooled by the vectorised
// kernel (rec_tables.cc) from tables in their planned storage, then the
// tail runs on it in cache before the next block. A lookup without a tail
// feeding an in-place concat writes its rows straight into the concat's
// buffer (placeOutput). Declines other Gathers (e.g. selecting id columns
// from int data) and tails it cannot chain.
#include <omp.h>

#include <algorithm>

#include "backends/cpu/rec_lookup.h"
#include "backends/cpu/rec_tail.h"

namespace cagr::cpu {
namespace {

// Elements per block: a block's rows stay in L1/L2 while the tail runs.
constexpr int64_t kBlockElements = 8192;
// Below this much work (floats read and written) one thread does the whole
// lookup: a one-hot [4096, 16] lookup takes tens of microseconds, which a
// fork / join (and a busy second core) would eat.
constexpr int64_t kParallelWork = int64_t{1} << 20;

class EmbeddingStep : public Step {
 public:
  EmbeddingStep(Lookup lookup, ElementwiseTail tail, std::vector<ValueId> writes)
      : lookup_(std::move(lookup)), tail_(std::move(tail)), writes_(std::move(writes)) {}

  std::string kernelName() const override {
    return "own.embedding:" + lookup_.label() + tail_.suffix() + (placedIn_ != kNoValue ? "(into concat)" : "");
  }
  std::vector<ValueId> writes() const override { return writes_; }

  // Only a lookup without a tail, writing nothing else, in f32.
  bool placeOutput(ValueId v, ValueId dst, int64_t offset, int64_t ld) override {
    if (v != lookup_.output() || tail_.target() != v || !tail_.suffix().empty() || writes_.size() != 1 ||
        ld < lookup_.width() || offset < 0 || offset + lookup_.width() > ld) {
      return false;
    }
    placedIn_ = dst;
    placedOffset_ = offset;
    placedLd_ = ld;
    return true;
  }

  Status run(const RunContext& ctx) const override {
    CAGR_ASSIGN_OR_RETURN(Lookup::Bound b, lookup_.bind(ctx));
    const bool placed = placedIn_ != kNoValue;
    const Buffer& target = ctx.buffer(placed ? placedIn_ : tail_.target());
    const int64_t width = lookup_.width(), rows = b.rows, ld = placed ? placedLd_ : width;
    if (target.numel() != rows * ld) {
      return invalidArgument("the lookup gives " + std::to_string(rows) + " rows of " + std::to_string(width) +
                             " for an output of " + std::to_string(target.numel()) + " elements" +
                             (placed ? " (rows of " + std::to_string(ld) + " in place)" : ""));
    }
    float* out = target.as<float>() + (placed ? placedOffset_ : 0);
    std::vector<float*> dst = tail_.destinations(ctx);
    const int64_t block = std::max<int64_t>(1, kBlockElements / std::max<int64_t>(width, 1));
    const int64_t blocks = (rows + block - 1) / block;
    int bad = 0;
#pragma omp parallel for num_threads(ctx.threads()) schedule(static) \
    reduction(|                                                      \
              : bad) if (b.work >= kParallelWork && blocks > 1)
    for (int64_t k = 0; k < blocks; ++k) {
      const int64_t r0 = k * block, r1 = std::min(rows, r0 + block);
      if (!lookup_.compute(b, r0, r1, out + r0 * ld, ld)) {
        bad = 1;
        continue;
      }
      if (!placed) tail_.apply(out + r0 * width, r0 * width, (r1 - r0) * width, dst);
    }
    if (bad != 0) return lookup_.badIdError(b);
    return Status::ok();
  }

 private:
  Lookup lookup_;
  ElementwiseTail tail_;
  std::vector<ValueId> writes_;
  ValueId placedIn_ = kNoValue;  // in-place concat: the concat's buffer
  int64_t placedOffset_ = 0, placedLd_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<Step>> makeEmbeddingStep(const StepRequest& r) {
  if (r.shape.pattern != Pattern::kGather) return unsupported("not a lookup group");
  if (r.kernel != 0 && std::string(kernelInfo(r.kernel).name) != "own.embedding") {
    return unsupported(std::string("the plan names ") + kernelInfo(r.kernel).name);
  }
  CAGR_ASSIGN_OR_RETURN(Lookup lookup, Lookup::compile(r.g, r.shape.anchor));
  CAGR_ASSIGN_OR_RETURN(ElementwiseTail tail, ElementwiseTail::compile(r.g, r.members, r.shape.anchor, r.outputs));
  return std::unique_ptr<Step>(std::make_unique<EmbeddingStep>(std::move(lookup), std::move(tail), r.outputs));
}

}  // namespace cagr::cpu
