// Run-time instruction-set dispatch for CAGR's own CPU kernels. The build
// targets baseline x86-64; hot loops are stamped out again for AVX2+FMA and
// AVX-512 (function-level target attributes) and picked once per process, so
// the vectoriser gets the wide registers the machine has. Shared by the
// own.gemm kernel (gemm_kernel.cc) and src/hw/own_kernels.cc.
#pragma once

namespace cagr::cpu {

enum class Isa { kBaseline, kAvx2, kAvx512 };

inline Isa detectIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBaseline;
}

/// The widest instruction set this machine runs (detected once).
inline Isa hostIsa() {
  static const Isa kIsa = detectIsa();
  return kIsa;
}

/// "avx512", "avx2+fma" or "baseline".
inline const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2+fma";
    case Isa::kBaseline:
      break;
  }
  return "baseline";
}

}  // namespace cagr::cpu

#if defined(__x86_64__) && defined(__GNUC__)
#define CAGR_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define CAGR_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define CAGR_HAVE_ISA_VARIANTS 1
#else
#define CAGR_TARGET_AVX2
#define CAGR_TARGET_AVX512
#define CAGR_HAVE_ISA_VARIANTS 0
#endif
#define CAGR_INLINE inline __attribute__((always_inline))

/// Defines `name(args)` that calls `body(args)` compiled for the host's
/// widest instruction set: the body is an always-inline function, stamped
/// out three times (baseline, AVX2, AVX-512). `params` is the parenthesised
/// parameter list, `args` the parenthesised argument list.
#if CAGR_HAVE_ISA_VARIANTS
#define CAGR_ISA_DISPATCH(attrs, name, body, params, args)                             \
  attrs void name##Baseline params {                                                   \
    body args;                                                                         \
  }                                                                                    \
  CAGR_TARGET_AVX2 attrs void name##Avx2 params {                                      \
    body args;                                                                         \
  }                                                                                    \
  CAGR_TARGET_AVX512 attrs void name##Avx512 params {                                  \
    body args;                                                                         \
  }                                                                                    \
  void name params {                                                                   \
    if (::cagr::cpu::hostIsa() == ::cagr::cpu::Isa::kAvx512) return name##Avx512 args; \
    if (::cagr::cpu::hostIsa() == ::cagr::cpu::Isa::kAvx2) return name##Avx2 args;     \
    name##Baseline args;                                                               \
  }
#else
#define CAGR_ISA_DISPATCH(attrs, name, body, params, args) \
  attrs void name params {                                 \
    body args;                                             \
  }
#endif
