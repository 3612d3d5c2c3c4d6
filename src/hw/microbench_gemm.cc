// GEMM kernel runners (OpenBLAS cblas_sgemm, oneDNN matmul, own.gemm), the
// GEMM shape list and its shape classes.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#if CAGR_HAVE_ONEDNN
#include <dnnl.hpp>
#endif
#include <exception>
#include <random>

#include "cost/kernel_class.h"
#include "hw/microbench.h"
#include "hw/own_kernels.h"

namespace cagr::hw {

const char* gemmKernelName(GemmKernel k) {
  switch (k) {
    case GemmKernel::kOpenBlas:
      return "openblas.sgemm";
    case GemmKernel::kOneDnn:
      return "onednn.matmul";
    case GemmKernel::kOneDnnRelu:
      return "onednn.matmul_relu";
    case GemmKernel::kOwn:
      return "own.gemm";
  }
  return "?";
}

std::vector<GemmKernel> allGemmKernels() {
#if CAGR_HAVE_ONEDNN
  return {GemmKernel::kOpenBlas, GemmKernel::kOneDnn, GemmKernel::kOneDnnRelu, GemmKernel::kOwn};
#else
  return {GemmKernel::kOpenBlas, GemmKernel::kOwn};
#endif
}

void setKernelThreads(int threads) {
  if (threads <= 0) return;
  openblas_set_num_threads(threads);
  setOwnThreads(threads);
}

std::vector<std::pair<std::string, std::string>> kernelLibraryVersions() {
  std::vector<std::pair<std::string, std::string>> out;
  const char* cfg = openblas_get_config();
  const char* core = openblas_get_corename();
  out.emplace_back("openblas", std::string(cfg ? cfg : "unknown") + (core ? std::string(" core=") + core : ""));
#if CAGR_HAVE_ONEDNN
  const dnnl_version_t* v = dnnl_version();
  std::string dnnl = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  if (v->hash != nullptr && *v->hash != '\0') dnnl += std::string(" (") + v->hash + ")";
  out.emplace_back("onednn", dnnl);
#endif
#if defined(__clang__)
  out.emplace_back("compiler", std::string("clang ") + __clang_version__);
#elif defined(__GNUC__)
  out.emplace_back("compiler", std::string("gcc ") + __VERSION__);
#endif
  out.emplace_back("openmp", "_OPENMP " + std::to_string(_OPENMP));
  out.emplace_back("own.gemm", "cagr blocked 6x16 register tile, " + ownGemmIsa());
  return out;
}

// ------------------------------------------------------------------ runners

namespace {

class OpenBlasRunner : public GemmRunner {
 public:
  OpenBlasRunner(int64_t m, int64_t k, int64_t n) : m_(m), k_(k), n_(n) {}
  Status run(const float* a, const float* b, const float*, float* c) override {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m_), static_cast<blasint>(n_),
                static_cast<blasint>(k_), 1.0f, a, static_cast<blasint>(k_), b, static_cast<blasint>(n_), 0.0f, c,
                static_cast<blasint>(n_));
    return Status::ok();
  }

 private:
  int64_t m_, k_, n_;
};

class OwnRunner : public GemmRunner {
 public:
  OwnRunner(int64_t m, int64_t k, int64_t n) : m_(m), k_(k), n_(n) {}
  Status run(const float* a, const float* b, const float*, float* c) override {
    ownGemm(m_, k_, n_, a, b, c);
    return Status::ok();
  }

 private:
  int64_t m_, k_, n_;
};

#if CAGR_HAVE_ONEDNN
/// The process-wide oneDNN CPU engine and stream (created once, never
/// destroyed: runners may outlive any scope that would own it).
struct DnnlContext {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

StatusOr<DnnlContext*> dnnlContext() {
  static DnnlContext* ctx = nullptr;
  static std::string failure;
  if (ctx == nullptr && failure.empty()) {
    try {
      ctx = new DnnlContext();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  if (ctx == nullptr) return internalError("oneDNN: cannot create a CPU engine: " + failure);
  return ctx;
}

class DnnlRunner : public GemmRunner {
 public:
  DnnlRunner(DnnlContext* ctx, int64_t m, int64_t k, int64_t n, bool biasRelu) : ctx_(ctx), biasRelu_(biasRelu) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::memory::desc aMd({m, k}, dt::f32, tag::ab);
    dnnl::memory::desc bMd({k, n}, dt::f32, tag::ab);
    dnnl::memory::desc biasMd({1, n}, dt::f32, tag::ab);
    dnnl::memory::desc cMd({m, n}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    if (biasRelu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::desc desc = biasRelu ? dnnl::matmul::desc(aMd, bMd, biasMd, cMd) : dnnl::matmul::desc(aMd, bMd, cMd);
    dnnl::matmul::primitive_desc pd(desc, attr, ctx->engine);
    prim_ = dnnl::matmul(pd);
    a_ = dnnl::memory(aMd, ctx->engine, DNNL_MEMORY_NONE);
    b_ = dnnl::memory(bMd, ctx->engine, DNNL_MEMORY_NONE);
    bias_ = dnnl::memory(biasMd, ctx->engine, DNNL_MEMORY_NONE);
    c_ = dnnl::memory(cMd, ctx->engine, DNNL_MEMORY_NONE);
  }

  Status run(const float* a, const float* b, const float* bias, float* c) override {
    try {
      a_.set_data_handle(const_cast<float*>(a));
      b_.set_data_handle(const_cast<float*>(b));
      c_.set_data_handle(c);
      if (biasRelu_) {
        bias_.set_data_handle(const_cast<float*>(bias));
        prim_.execute(ctx_->stream,
                      {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_BIAS, bias_}, {DNNL_ARG_DST, c_}});
      } else {
        prim_.execute(ctx_->stream, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
      }
      ctx_->stream.wait();
    } catch (const std::exception& e) {
      return internalError(std::string("oneDNN matmul execute failed: ") + e.what());
    }
    return Status::ok();
  }

 private:
  DnnlContext* ctx_;
  bool biasRelu_;
  dnnl::matmul prim_;
  dnnl::memory a_, b_, bias_, c_;
};
#endif

}  // namespace

StatusOr<std::unique_ptr<GemmRunner>> makeGemmRunner(GemmKernel k, int64_t m, int64_t kDim, int64_t n) {
  if (m <= 0 || kDim <= 0 || n <= 0) {
    return invalidArgument("gemm shape " + std::to_string(m) + "x" + std::to_string(kDim) + "x" + std::to_string(n) +
                           ": dims must be positive");
  }
  switch (k) {
    case GemmKernel::kOpenBlas:
      return std::unique_ptr<GemmRunner>(new OpenBlasRunner(m, kDim, n));
    case GemmKernel::kOwn:
      return std::unique_ptr<GemmRunner>(new OwnRunner(m, kDim, n));
    case GemmKernel::kOneDnn:
    case GemmKernel::kOneDnnRelu: {
#if !CAGR_HAVE_ONEDNN
      return unsupported("onednn.matmul: this build has no oneDNN (CAGR_WITH_ONEDNN=OFF)");
#else
      CAGR_ASSIGN_OR_RETURN(DnnlContext * ctx, dnnlContext());
      try {
        return std::unique_ptr<GemmRunner>(new DnnlRunner(ctx, m, kDim, n, k == GemmKernel::kOneDnnRelu));
      } catch (const std::exception& e) {
        return internalError(std::string("oneDNN matmul primitive for ") + std::to_string(m) + "x" +
                             std::to_string(kDim) + "x" + std::to_string(n) + ": " + e.what());
      }
#endif
    }
  }
  return internalError("unknown GEMM kernel");
}

GemmBuffers makeGemmBuffers(const std::vector<GemmShape>& shapes) {
  size_t a = 1, b = 1, c = 1, n = 1;
  for (const GemmShape& s : shapes) {
    a = std::max(a, static_cast<size_t>(s.m * s.k));
    b = std::max(b, static_cast<size_t>(s.k * s.n));
    c = std::max(c, static_cast<size_t>(s.m * s.n));
    n = std::max(n, static_cast<size_t>(s.n));
  }
  GemmBuffers buf;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto [v, size] : {std::pair{&buf.a, a}, {&buf.b, b}, {&buf.bias, n}}) {
    v->resize(size);
    for (float& x : *v) x = dist(rng);
  }
  buf.c.assign(c, 0.0f);
  return buf;
}

StatusOr<GemmResult> benchGemm(GemmKernel k, const GemmShape& s, GemmBuffers& buf, const TimingPlan& plan) {
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<GemmRunner> runner, makeGemmRunner(k, s.m, s.k, s.n));
  const float* a = buf.a.data();
  const float* b = buf.b.data();
  const float* bias = buf.bias.data();
  float* c = buf.c.data();
  CAGR_RETURN_IF_ERROR(runner->run(a, b, bias, c).withContext(std::string(gemmKernelName(k)) + " " + s.label()));
  Status failed;
  GemmResult r{k, s, {}};
  r.t = timeIt(
      [&] {
        Status st = runner->run(a, b, bias, c);
        if (!st.isOk()) failed = st;
      },
      plan);
  if (!failed.isOk()) return failed.withContext(std::string(gemmKernelName(k)) + " " + s.label());
  return r;
}

// ------------------------------------------------------------------ shapes

std::string GemmShape::label() const {
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
}

std::string gemmShapeClass(const GemmShape& s) {
  // The cost model's classification (cost/kernel_class.cc), so that the
  // classes measured here are the ones it looks up.
  return cagr::gemmShapeClass(static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k));
}

std::vector<GemmShape> gemmShapes(bool quick) {
  // Class bounds (cost/kernel_class.cc): skinny min(M,K,N) <= 4; tiny < 2*64^3
  // FLOP; small < 2*256*256*512; medium < 2*2048*1024*1024; large above.
  if (quick) {
    return {{16, 16, 16},    {32, 64, 32},       {256, 64, 128}, {1000, 333, 77}, {256, 512, 512},
            {777, 555, 333}, {2048, 1024, 1280}, {4096, 512, 1}, {1, 512, 512}};
  }
  return {
      // tiny
      {16, 16, 16},
      {32, 64, 32},
      {64, 32, 64},
      {8, 128, 8},
      {24, 40, 56},
      // small: batch x layer sizes, and irregular ones
      {256, 64, 128},
      {128, 256, 256},
      {512, 128, 128},
      {256, 256, 256},
      {63, 1000, 129},
      {1000, 333, 77},
      // medium
      {256, 512, 512},
      {1024, 512, 256},
      {512, 1024, 512},
      {777, 555, 333},
      {2047, 129, 513},
      {1500, 1000, 999},
      // large
      {4096, 1024, 1024},
      {2048, 2048, 1024},
      {2000, 1500, 1000},
      // skinny: outer product, GEMV, batch 1 and 2, tall-thin
      {4096, 1, 512},
      {4096, 512, 1},
      {1, 512, 512},
      {2, 1024, 1024},
      {4096, 256, 4},
  };
}

}  // namespace cagr::hw
