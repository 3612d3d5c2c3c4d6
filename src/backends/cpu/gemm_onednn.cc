// onednn.matmul (see gemm_onednn.h): memory descriptors straight from the
// strided product (no copies), post-ops from the epilogue program, one
// primitive per shape, weights reordered once per layout asked for.
#include "backends/cpu/gemm_onednn.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#if CAGR_HAVE_ONEDNN
#include <dnnl.hpp>

namespace cagr::cpu {
namespace {

using Desc = dnnl::memory::desc;
using Dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using alg = dnnl::algorithm;

dnnl::engine& cpuEngine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& cpuStream() {
  static dnnl::stream s(cpuEngine());
  return s;
}

Dims denseStrides(const Dims& d) {
  Dims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * std::max<int64_t>(d[i], 1);
  return s;
}

Desc dense(const Dims& d) {
  return Desc(d, dt::f32, denseStrides(d));
}

// A or B of the product: batch dims (1 where the operand is broadcast),
// then rows and columns, all with the product's strides.
Desc operandDesc(const GemmShape& s, bool isA) {
  Dims d, st;
  for (const BatchDim& b : s.batch) {
    const int64_t stride = isA ? b.strideA : b.strideB;
    d.push_back(stride == 0 ? 1 : b.size);
    st.push_back(stride);
  }
  d.push_back(isA ? s.m : s.k);
  d.push_back(isA ? s.k : s.n);
  st.push_back(isA ? s.ars : s.brs);
  st.push_back(isA ? s.acs : s.bcs);
  int64_t extent = 1;  // size-1 dims get a stride past everything else
  for (size_t i = 0; i < d.size(); ++i) extent = std::max(extent, st[i] * d[i]);
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] == 1) st[i] = extent;
  }
  return Desc(d, dt::f32, st);
}

Dims dstDims(const GemmShape& s) {
  Dims d;
  for (const BatchDim& b : s.batch) d.push_back(b.size);
  d.push_back(s.m);
  d.push_back(s.n);
  return d;
}

// The dims of a broadcast operand in the dst's dims: a contiguous run of
// dst dims [a, b] with q elements after b and p inside, 1 elsewhere.
bool patternDims(const Dims& d, FlatPattern p, Dims& out) {
  out.assign(d.size(), 1);
  if (p.p == 1) return true;
  int64_t after = 1;
  for (size_t b = d.size(); b-- > 0; after *= d[b]) {
    if (after != p.q) continue;
    int64_t inside = 1;
    for (size_t a = b + 1; a-- > 0;) {
      inside *= d[a];
      if (inside == p.p) {
        std::copy(d.begin() + static_cast<int64_t>(a), d.begin() + static_cast<int64_t>(b) + 1,
                  out.begin() + static_cast<int64_t>(a));
        return true;
      }
      if (inside > p.p) break;
    }
  }
  return false;
}

bool eltwiseFor(const EpiInstr& in, alg& a, float& alpha, float& beta) {
  alpha = 0.0f;
  beta = 0.0f;
  switch (in.op.op) {
    case OpKind::kRelu:
      // Not a post-op: oneDNN's ReLU is max(x, 0), which turns NaN into 0;
      // ONNX Relu keeps NaN. The epilogue pass after the matmul applies it.
      return false;
    case OpKind::kLeakyRelu:  // x > 0 ? x : alpha * x: NaN stays NaN (alpha 0 is ReLU, see above)
      a = alg::eltwise_relu, alpha = static_cast<float>(in.op.a);
      return alpha != 0.0f;
    case OpKind::kSigmoid:
      a = alg::eltwise_logistic;
      return true;
    case OpKind::kTanh:
      a = alg::eltwise_tanh;
      return true;
    case OpKind::kGelu:
      a = in.op.tanhGelu ? alg::eltwise_gelu_tanh : alg::eltwise_gelu_erf;
      return true;
    case OpKind::kExp:
      a = alg::eltwise_exp;
      return true;
    case OpKind::kLog:
      a = alg::eltwise_log;
      return true;
    case OpKind::kAbs:
      a = alg::eltwise_abs;
      return true;
    case OpKind::kSqrt:
      a = alg::eltwise_sqrt;
      return true;
    case OpKind::kNeg:
      a = alg::eltwise_linear, alpha = -1.0f;
      return true;
    case OpKind::kClip:
      a = alg::eltwise_clip, alpha = static_cast<float>(in.op.a), beta = static_cast<float>(in.op.b);
      return true;
    default:
      return false;
  }
}

// x op imm as eltwise_linear (alpha * x + beta); x is the first operand
// unless `swapped`.
bool linearFor(OpKind op, float imm, bool swapped, float& alpha, float& beta) {
  alpha = 1.0f;
  beta = 0.0f;
  switch (op) {
    case OpKind::kAdd:
      beta = imm;
      return true;
    case OpKind::kMul:
      alpha = imm;
      return true;
    case OpKind::kSub:
      alpha = swapped ? -1.0f : 1.0f, beta = swapped ? imm : -imm;
      return true;
    default:
      return false;
  }
}

bool binaryFor(OpKind op, bool swapped, alg& a) {
  switch (op) {
    case OpKind::kAdd:
      a = alg::binary_add;
      return true;
    case OpKind::kMul:
      a = alg::binary_mul;
      return true;
    case OpKind::kMax:
      a = alg::binary_max;
      return true;
    case OpKind::kMin:
      a = alg::binary_min;
      return true;
    case OpKind::kSub:
      a = alg::binary_sub;
      return !swapped;
    case OpKind::kDiv:
      a = alg::binary_div;
      return !swapped;
    default:
      return false;
  }
}

// The post-ops of the first `limit` (at most) epilogue instructions that
// each read only the running value (and an immediate or a broadcast input).
struct Fusion {
  dnnl::post_ops ops;
  std::vector<std::pair<int, Desc>> src1;  // per post-op: (input index or -1, desc)
  int biasInput = -1;
  int count = 0;
};

Fusion chooseFusion(const Epilogue& epi, const GemmShape& s, const std::vector<FlatPattern>& pat, int limit) {
  Fusion f;
  const Dims dims = dstDims(s);
  const auto& instrs = epi.instrs();
  for (int i = 0; i < std::min<int>(limit, static_cast<int>(instrs.size())); ++i) {
    if (epi.isOutput(i) || epi.readLater(i, i)) break;
    const EpiInstr& in = instrs[static_cast<size_t>(i)];
    const bool aRun = in.a.kind == EpiSrc::kReg && in.a.index == i;
    const bool bRun = in.b.kind == EpiSrc::kReg && in.b.index == i;
    if (aRun == bRun) break;
    const EpiSrc& other = aRun ? in.b : in.a;
    alg a = alg::undef;
    float alpha = 0.0f, beta = 0.0f;
    if (other.kind == EpiSrc::kNone) {
      if (!eltwiseFor(in, a, alpha, beta)) break;
      f.ops.append_eltwise(1.0f, a, alpha, beta);
      f.src1.emplace_back(-1, Desc());
    } else if (other.kind == EpiSrc::kImm) {
      if (!linearFor(in.op.op, other.imm, bRun, alpha, beta)) break;
      f.ops.append_eltwise(1.0f, alg::eltwise_linear, alpha, beta);
      f.src1.emplace_back(-1, Desc());
    } else if (other.kind == EpiSrc::kInput) {
      const FlatPattern p = pat[static_cast<size_t>(other.index)];
      Dims d;
      if (!binaryFor(in.op.op, bRun, a)) break;
      if (i == 0 && in.op.op == OpKind::kAdd && p.q == 1 && p.p == s.n) {
        f.biasInput = other.index;  // a per-column C / bias: the matmul's own bias
      } else if (patternDims(dims, p, d)) {
        f.ops.append_binary(a, dense(d));
        f.src1.emplace_back(other.index, dense(d));
      } else {
        break;
      }
    } else {
      break;
    }
    f.count = i + 1;
  }
  return f;
}

Dims biasDims(const GemmShape& s) {
  Dims d(s.batch.size() + 2, 1);
  d.back() = s.n;
  return d;
}

}  // namespace

struct OneDnnGemm::Impl {
  struct Plan {
    dnnl::matmul prim;
    Desc weights;
    Fusion fusion;
    bool useOwn = false;
  };

  const Epilogue& epi;
  std::shared_ptr<const Tensor> constB;
  bool packed = false;
  std::mutex mu;
  std::map<std::vector<int64_t>, Plan> plans;
  std::vector<std::pair<Desc, dnnl::memory>> reordered;  // packed weights per layout

  Impl(const Epilogue& e, std::shared_ptr<const Tensor> b, bool p) : epi(e), constB(std::move(b)), packed(p) {}

  static std::vector<int64_t> key(const GemmShape& s, const std::vector<FlatPattern>& pat) {
    std::vector<int64_t> k{s.m, s.n, s.k, s.ars, s.acs, s.brs, s.bcs};
    for (const BatchDim& b : s.batch) k.insert(k.end(), {b.size, b.strideA, b.strideB});
    for (const FlatPattern& p : pat) k.insert(k.end(), {p.q, p.p});
    return k;
  }

  // The primitive for `f`, or an empty one when oneDNN only has a
  // reference kernel for it (or none).
  static bool create(const GemmShape& s, const Fusion& f, bool anyWeights, Plan& plan) {
    try {
      Desc wei = anyWeights ? Desc(operandDesc(s, false).dims(), dt::f32, dnnl::memory::format_tag::any)
                            : operandDesc(s, false);
      Desc src = operandDesc(s, true), dst = dense(dstDims(s));
      dnnl::matmul::desc d =
          f.biasInput >= 0 ? dnnl::matmul::desc(src, wei, dense(biasDims(s)), dst) : dnnl::matmul::desc(src, wei, dst);
      dnnl::primitive_attr attr;
      attr.set_post_ops(f.ops);
      dnnl::matmul::primitive_desc pd(d, attr, cpuEngine());
      if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0) return false;
      plan.prim = dnnl::matmul(pd);
      plan.weights = pd.weights_desc();
      plan.fusion = f;
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

  Plan& plan(const GemmShape& s, const std::vector<FlatPattern>& pat) {
    std::vector<int64_t> k = key(s, pat);
    auto it = plans.find(k);
    if (it != plans.end()) return it->second;
    Plan p;
    const bool anyWeights = packed && constB != nullptr;
    bool made = false;
    // Post-ops on batched matrix-vector products (DCN-Mix's experts, DCN's
    // matrix cross terms: B x [27x1]) measured about twice the plain
    // matmul's time; their epilogue runs afterwards in one pass instead.
    const bool narrowBatched = s.batchCount() > 1 && s.n == 1 && !epi.instrs().empty();
    if (static_cast<int>(s.batch.size()) + 2 <= DNNL_MAX_NDIMS && s.k > 0) {
      for (int limit = narrowBatched ? 0 : static_cast<int>(epi.instrs().size()); limit >= 0 && !made; --limit) {
        Fusion f = chooseFusion(epi, s, pat, limit);
        limit = f.count;  // retry with one instruction fewer than this
        made = create(s, f, anyWeights, p);
      }
    }
    p.useOwn = !made;
    return plans.emplace(std::move(k), std::move(p)).first->second;
  }

  // The packed copy of the constant B in layout `want`, made on first use.
  dnnl::memory weightsIn(const Desc& want, const GemmShape& s) {
    for (const auto& [d, m] : reordered) {
      if (d == want) return m;
    }
    dnnl::memory plain(operandDesc(s, false), cpuEngine(), const_cast<float*>(constB->data<float>()));
    dnnl::memory out(want, cpuEngine());
    dnnl::reorder(plain, out).execute(cpuStream(), plain, out);
    cpuStream().wait();
    reordered.emplace_back(want, out);
    return out;
  }
};

OneDnnGemm::OneDnnGemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnGemm::~OneDnnGemm() = default;

StatusOr<std::unique_ptr<OneDnnGemm>> OneDnnGemm::create(const Epilogue& epi, std::shared_ptr<const Tensor> constB,
                                                         bool packed, const GemmShape& nominal,
                                                         const std::vector<FlatPattern>& patterns) {
  std::unique_ptr<OneDnnGemm> g(new OneDnnGemm(std::make_unique<Impl>(epi, std::move(constB), packed)));
  if (packed && g->impl_->constB != nullptr) {  // reorder the weight now for the nominal shape
    try {
      Impl::Plan& p = g->impl_->plan(nominal, patterns);
      if (!p.useOwn) g->impl_->weightsIn(p.weights, nominal);
    } catch (const dnnl::error& e) {
      return internalError(std::string("oneDNN weight reorder: ") + e.what());
    }
  }
  return g;
}

StatusOr<int> OneDnnGemm::fusedCount(const GemmShape& s, const std::vector<FlatPattern>& p) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Plan& plan = impl_->plan(s, p);
  return plan.useOwn ? 0 : plan.fusion.count;
}

StatusOr<int> OneDnnGemm::run(const GemmShape& s, const float* a, const float* b, const EpiBinding& bind) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  try {
    Impl::Plan& p = impl_->plan(s, bind.pattern);
    if (p.useOwn) return -1;
    bool copyBase = false;
    float* dst = impl_->epi.target(bind, p.fusion.count, copyBase);
    if (dst == nullptr) return internalError("the GEMM group stores no value");
    dnnl::engine& eng = cpuEngine();
    const bool packedB = impl_->packed && impl_->constB != nullptr;
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, dnnl::memory(operandDesc(s, true), eng, const_cast<float*>(a))},
        {DNNL_ARG_WEIGHTS,
         packedB ? impl_->weightsIn(p.weights, s) : dnnl::memory(operandDesc(s, false), eng, const_cast<float*>(b))},
        {DNNL_ARG_DST, dnnl::memory(dense(dstDims(s)), eng, dst)}};
    if (p.fusion.biasInput >= 0) {
      const float* bias = bind.input[static_cast<size_t>(p.fusion.biasInput)];
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(dense(biasDims(s)), eng, const_cast<float*>(bias)));
    }
    for (size_t i = 0; i < p.fusion.src1.size(); ++i) {
      const auto& [input, desc] = p.fusion.src1[i];
      if (input < 0) continue;
      const float* data = bind.input[static_cast<size_t>(input)];
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                   dnnl::memory(desc, eng, const_cast<float*>(data)));
    }
    p.prim.execute(cpuStream(), args);
    cpuStream().wait();
    return p.fusion.count;
  } catch (const dnnl::error& e) {
    return internalError(std::string("oneDNN matmul: ") + e.what());
  }
}

}  // namespace cagr::cpu
#else  // built without oneDNN: the GEMM step never picks this engine

namespace cagr::cpu {
struct OneDnnGemm::Impl {};
OneDnnGemm::OneDnnGemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnGemm::~OneDnnGemm() = default;
StatusOr<std::unique_ptr<OneDnnGemm>> OneDnnGemm::create(const Epilogue&, std::shared_ptr<const Tensor>, bool,
                                                         const GemmShape&, const std::vector<FlatPattern>&) {
  return unsupported("onednn.matmul: this build has no oneDNN (CAGR_WITH_ONEDNN=OFF)");
}
StatusOr<int> OneDnnGemm::fusedCount(const GemmShape&, const std::vector<FlatPattern>&) { return 0; }
StatusOr<int> OneDnnGemm::run(const GemmShape&, const float*, const float*, const EpiBinding&) { return -1; }
}  // namespace cagr::cpu
#endif
