// The GEMM step: a kGemm group (Gemm / MatMul incl. batched / Conv1x1 / a
// two-operand Einsum contraction, plus its elementwise epilogue) on the
// plan's kernel: onednn.matmul (auto) with fused post-ops, openblas.sgemm
// then the epilogue loop over the output, or own.gemm with the epilogue
// applied to each finished block while it is in cache. Operands are read in
// place through strides (transposes, batch broadcasting); only constants
// with a reduced storage precision are converted, once. Declines groups
// with non-f32 values or math and epilogues that change the element count.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "backends/cpu/gemm_epilogue.h"
#include "backends/cpu/gemm_kernel.h"
#include "backends/cpu/gemm_onednn.h"
#include "backends/cpu/gemm_problem.h"
#include "backends/cpu/step.h"

namespace cagr::cpu {
namespace {

enum class Engine { kOneDnn, kOpenBlas, kOwn };

constexpr int64_t kNominalBatch = 256;  // symbol value the kernel name and the weight reorder are chosen at
constexpr int64_t kBlasRows = 256;      // rows per OpenBLAS call: its C block stays in L2 for the epilogue

#if CAGR_HAVE_ONEDNN
constexpr Engine kDefaultEngine = Engine::kOneDnn;
#else
constexpr Engine kDefaultEngine = Engine::kOpenBlas;  // built without oneDNN (-DCAGR_WITH_ONEDNN=OFF)
#endif

StatusOr<Engine> engineFor(KernelId k) {
  if (k == 0) return kDefaultEngine;
  std::string name = kernelInfo(k).name;
  if (name == "onednn.matmul") return kDefaultEngine;
  if (name == "openblas.sgemm") return Engine::kOpenBlas;
  if (name == "own.gemm") return Engine::kOwn;
  return unsupported("kernel " + name + " is not a CPU GEMM kernel");
}

std::string joined(const std::vector<std::string>& names, const char* sep) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? sep : "") + names[i];
  return s;
}

// One operand of the product: a constant (converted once) or a buffer.
struct Operand {
  ValueId value = kNoValue;
  std::shared_ptr<const Tensor> fixed;
  const float* data(const RunContext& ctx) const {
    return fixed != nullptr ? fixed->data<float>() : ctx.buffer(value).as<float>();
  }
  const std::vector<int64_t>& shape(const RunContext& ctx) const {
    return fixed != nullptr ? fixed->shape() : ctx.buffer(value).shape;
  }
};

// runOwn's epilogue runs in one pass after the product when the product has
// fewer columns than this, or at most this many elements (it is in cache).
constexpr int64_t kNarrowProduct = 16;
constexpr int64_t kSmallProduct = int64_t{1} << 15;

class GemmStep : public Step {
 public:
  std::string kernelName() const override { return name_; }
  std::vector<ValueId> writes() const override { return outputs_; }

  Status run(const RunContext& ctx) const override {
    if (omp_get_max_threads() != ctx.threads()) omp_set_num_threads(ctx.threads());
    CAGR_ASSIGN_OR_RETURN(Symbols syms, symbols(ctx));
    CAGR_ASSIGN_OR_RETURN(GemmShape s, anchor_.shape(a_.shape(ctx), b_.shape(ctx)));
    CAGR_ASSIGN_OR_RETURN(EpiBinding bind, epi_->bind(ctx, syms, s.batchCount() * s.m * s.n));
    if (bind.numel == 0) return Status::ok();
    const float* a = a_.data(ctx);
    const float* b = b_.data(ctx);
    if (engine_ == Engine::kOneDnn) {
      CAGR_ASSIGN_OR_RETURN(int fused, dnnl_->run(s, a, b, bind));
      if (fused < 0) return runOwn(s, a, b, bind);  // no fast oneDNN kernel for this shape
      epi_->runAll(bind, fused);
      return Status::ok();
    }
    if (engine_ == Engine::kOpenBlas && runBlas(s, a, b, bind, ctx.threads())) return Status::ok();
    return runOwn(s, a, b, bind);
  }

  static StatusOr<std::unique_ptr<Step>> make(const StepRequest& r) {
    if (r.shape.pattern != Pattern::kGemm) return unsupported("not a GEMM group");
    if (r.outputs.empty()) return unsupported("the group's results are unused");
    auto step = std::unique_ptr<GemmStep>(new GemmStep());
    CAGR_ASSIGN_OR_RETURN(step->engine_, engineFor(r.kernel));
    CAGR_ASSIGN_OR_RETURN(step->anchor_, analyzeAnchor(r.g, r.shape.anchor));
    CAGR_ASSIGN_OR_RETURN(Epilogue epi, Epilogue::build(r.g, step->anchor_, r.members, r.outputs));
    step->epi_ = std::make_unique<Epilogue>(std::move(epi));
    step->outputs_ = r.outputs;
    CAGR_RETURN_IF_ERROR(step->prepareOperands(r.g));
    CAGR_RETURN_IF_ERROR(step->prepareEngine(r.g));
    return std::unique_ptr<Step>(std::move(step));
  }

 private:
  GemmStep() = default;

  Status prepareOperands(const Graph& g) {
    for (auto [op, v] : {std::pair{&a_, anchor_.a}, std::pair{&b_, anchor_.b}}) {
      op->value = v;
      if (g.isConstant(v)) {
        CAGR_ASSIGN_OR_RETURN(op->fixed, storedConstant(g, v));
      } else if (g.value(v).mir.storage != Precision::kF32) {
        return unsupported("%" + g.value(v).name + " is stored reduced");
      } else {
        reads_.emplace_back(v, g.type(v));
      }
    }
    for (const auto& rd : epi_->reads()) reads_.push_back(rd);
    for (ValueId v : outputs_) reads_.emplace_back(v, g.type(v));
    numSymbols_ = static_cast<int>(std::max<size_t>(g.symbols().size(), 2));
    return Status::ok();
  }

  // Packs / reorders a constant weight when the plan stores it `packed`,
  // and names the kernel (with the fusion chosen at the nominal batch).
  Status prepareEngine(const Graph& g) {
    const bool packed = b_.fixed != nullptr && anchor_.sharedB() && g.value(b_.value).mir.layout == Layout::kPacked;
    Symbols nominal(static_cast<size_t>(numSymbols_), kNominalBatch);
    CAGR_ASSIGN_OR_RETURN(GemmShape s, anchor_.shape(resolveDims(g.type(a_.value).dims, nominal),
                                                     resolveDims(g.type(b_.value).dims, nominal)));
    std::vector<std::string> all = epi_->memberNames(0, static_cast<int>(epi_->instrs().size()));
    std::string tail = all.empty() ? "" : "+" + joined(all, "+");
    switch (engine_) {
      case Engine::kOneDnn: {
        std::vector<FlatPattern> pats = epi_->patterns(nominal);
        CAGR_ASSIGN_OR_RETURN(dnnl_, OneDnnGemm::create(*epi_, packed ? b_.fixed : nullptr, packed, s, pats));
        CAGR_ASSIGN_OR_RETURN(int fused, dnnl_->fusedCount(s, pats));
        std::vector<std::string> in = epi_->memberNames(0, fused);
        std::vector<std::string> out = epi_->memberNames(fused, static_cast<int>(epi_->instrs().size()));
        name_ = "onednn.matmul" + std::string(in.empty() ? "" : "+" + joined(in, "+")) +
                (out.empty() ? "" : " then own.epilogue(" + joined(out, ",") + ")");
        break;
      }
      case Engine::kOpenBlas:
        name_ = "openblas.sgemm" + std::string(all.empty() ? "" : " then own.epilogue(" + joined(all, ",") + ")");
        break;
      case Engine::kOwn:
        if (packed) packed_ = PackedB(b_.fixed->data<float>(), s.brs, s.bcs, s.k, s.n);
        name_ = "own.gemm" + tail;
        break;
    }
    return Status::ok();
  }

  // Symbol values from the shapes of the buffers the group reads.
  StatusOr<Symbols> symbols(const RunContext& ctx) const {
    Symbols s(static_cast<size_t>(numSymbols_), 0);
    for (const auto& [v, type] : reads_) {
      const std::vector<int64_t>& shape = ctx.buffer(v).shape;
      if (shape.size() != type.dims.size()) return internalError("buffer rank differs from its type");
      for (size_t i = 0; i < shape.size(); ++i) {
        if (!isSymbolic(type.dims[i])) continue;
        const auto sym = static_cast<size_t>(dimSymbol(type.dims[i]));
        if (sym >= s.size()) s.resize(sym + 1, 0);
        s[sym] = shape[i] / dimCoef(type.dims[i]);
      }
    }
    return s;
  }

  Status runOwn(const GemmShape& s, const float* a, const float* b, const EpiBinding& bind) const {
    bool copyBase = false;
    float* dst = epi_->target(bind, 0, copyBase);
    if (dst == nullptr) return internalError("the GEMM group stores no value");
    BlockDone done = [&](int64_t bi, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
      if (cols == s.n) {  // whole rows: one contiguous segment
        epi_->runSegment(bind, 0, copyBase, dst, (bi * s.m + row0) * s.n, rows * s.n);
        return;
      }
      for (int64_t r = row0; r < row0 + rows; ++r) {
        epi_->runSegment(bind, 0, copyBase, dst, (bi * s.m + r) * s.n + col0, cols);
      }
    };
    const bool epilogue = !epi_->instrs().empty() || !bind.copies.empty();
    const bool usePacked = !packed_.empty() && packed_.k() == s.k && packed_.n() == s.n;
    // A product that stays in cache gets its epilogue in one pass afterwards:
    // per-block segments of narrow products (DCN's [B, D, 1] cross terms: one
    // column per row) cost more in dispatch than the arithmetic (issue 39
    // measured that plan 2x slower than no plan).
    const bool afterwards = epilogue && (s.n < kNarrowProduct || bind.numel <= kSmallProduct);
    ownGemmBatched(s, a, b, usePacked ? &packed_ : nullptr, dst, epilogue && !afterwards ? &done : nullptr);
    if (afterwards) epi_->runAll(bind, 0);
    return Status::ok();
  }

  // cblas_sgemm on blocks of rows, one OpenMP task each (single-threaded
  // OpenBLAS: its own thread pool would fight the OpenMP one for the cores),
  // then the epilogue on that block; false (nothing written) when the
  // strides are no BLAS layout.
  bool runBlas(const GemmShape& s, const float* a, const float* b, const EpiBinding& bind, int threads) const {
    auto layout = [](int64_t rs, int64_t cs, int64_t cols, CBLAS_TRANSPOSE& t, int64_t& ld) {
      const bool plain = cs == 1 && rs >= std::max<int64_t>(cols, 1);
      t = plain ? CblasNoTrans : CblasTrans;
      ld = plain ? rs : cs;
      return plain || (rs == 1 && cs >= 1);
    };
    CBLAS_TRANSPOSE ta, tb;
    int64_t lda = 0, ldb = 0;
    bool copyBase = false;
    float* dst = epi_->target(bind, 0, copyBase);
    if (s.k == 0 || dst == nullptr || !layout(s.ars, s.acs, s.k, ta, lda) || !layout(s.brs, s.bcs, s.n, tb, ldb)) {
      return false;
    }
    if (ta == CblasTrans) lda = std::max(lda, s.m);
    if (tb == CblasTrans) ldb = std::max(ldb, s.k);
    openblas_set_num_threads(1);
    const int64_t rows = std::clamp<int64_t>((s.m + threads - 1) / threads, 1, kBlasRows);
    const int64_t blocks = (s.m + rows - 1) / rows, tasks = s.batchCount() * blocks;
    const bool epilogue = !epi_->instrs().empty() || !bind.copies.empty();
#pragma omp parallel for schedule(dynamic)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t bi = t / blocks, r0 = t % blocks * rows, mr = std::min(rows, s.m - r0);
      int64_t offA = 0, offB = 0;
      s.batchOffsets(bi, offA, offB);
      const int64_t out = (bi * s.m + r0) * s.n;
      cblas_sgemm(CblasRowMajor, ta, tb, static_cast<blasint>(mr), static_cast<blasint>(s.n), static_cast<blasint>(s.k),
                  1.0f, a + offA + r0 * s.ars, static_cast<blasint>(lda), b + offB, static_cast<blasint>(ldb), 0.0f,
                  dst + out, static_cast<blasint>(s.n));
      if (epilogue) epi_->runSegment(bind, 0, copyBase, dst, out, mr * s.n);
    }
    return true;
  }

  Engine engine_ = Engine::kOneDnn;
  GemmAnchor anchor_;
  std::unique_ptr<Epilogue> epi_;
  Operand a_, b_;
  PackedB packed_;
  std::unique_ptr<OneDnnGemm> dnnl_;
  std::vector<ValueId> outputs_;
  std::vector<std::pair<ValueId, TensorType>> reads_;  // buffers (read and written) whose shapes bind the symbols
  int numSymbols_ = 2;                                 // symbol slots (index 0 unused)
  std::string name_;
};

}  // namespace

StatusOr<std::unique_ptr<Step>> makeGemmStep(const StepRequest& r) {
  return GemmStep::make(r);
}

}  // namespace cagr::cpu
