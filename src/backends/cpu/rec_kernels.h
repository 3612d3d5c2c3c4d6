// Row kernels of the recommendation ops on the CPU: DLRM Interaction, FM and
// one CIN layer. Each takes a block of samples so one call amortises the
// dispatch (AVX-512 / AVX2 / baseline clones picked at load time).
#pragma once

#include <cstdint>

namespace cagr::cpu {

/// Per sample s < count: x_s = x + s * ldx holds [F, D]; writes the dots
/// x_i . x_j for i > j (i >= j with `self`) in DLRM order to out + s * ldOut.
/// `scratch` holds interactionScratchFloats(F, D) floats.
void interactionRows(const float* x, int64_t count, int64_t ldx, int64_t fields, int64_t dim, bool self, float* out,
                     int64_t ldOut, float* scratch);

int64_t interactionScratchFloats(int64_t fields, int64_t dim);

/// interactionRows with 16 samples in the lanes of AVX-512 registers
/// (rec_interaction_lanes.cc); false, doing nothing, on a machine without
/// AVX-512. `scratch` holds interactionLanesScratchFloats(F, D, self) floats.
bool interactionRowsLanes(const float* x, int64_t count, int64_t ldx, int64_t fields, int64_t dim, bool self,
                          float* out, int64_t ldOut, float* scratch);
int64_t interactionLanesScratchFloats(int64_t fields, int64_t dim, bool self);

/// Number of interaction outputs per sample.
inline int64_t interactionWidth(int64_t fields, bool self) {
  return fields * (fields + (self ? 1 : -1)) / 2;
}

/// Per sample: 0.5 * ((sum_f x)^2 - sum_f x^2) per d, summed over d when
/// `reduce` (one output) or not (dim outputs); accumulates in double as the
/// reference does, since the difference cancels.
void fmRows(const float* x, int64_t count, int64_t ldx, int64_t fields, int64_t dim, bool reduce, float* out,
            int64_t ldOut);

/// One CIN layer: out[b,o,d] = sum_{h,f} w[o, h*F + f] * xk[b,h,d] * x0[b,f,d] + bias[o].
struct CinShape {
  int64_t hk = 0, fields = 0, dim = 0, outCh = 0;
};

/// Samples per tile: the outer products of one tile (K x tile*D floats) are
/// formed in `z` and contracted with w by one sgemm into `y` (outCh x tile*D).
int64_t cinTileSamples(const CinShape& s);
/// Floats of the z and y scratch one tile needs.
int64_t cinScratchFloats(const CinShape& s);
/// Samples [b0, b1) (b1 - b0 <= cinTileSamples) of xk [B,H,D] / x0 [B,F,D]
/// into out [B,O,D]; bias may be null. Runs sgemm on the calling thread
/// inside a parallel region, on all threads outside one. False if sgemm fails.
bool cinTile(const CinShape& s, const float* xk, const float* x0, const float* w, const float* bias, int64_t b0,
             int64_t b1, float* out, float* scratch);

}  // namespace cagr::cpu
