// libFuzzer target: the ONNX importer on arbitrary bytes. It must return a
// Status for every input (no crash, leak, overflow or unbounded allocation);
// a model that imports is also verified and, when small, run on the
// reference executor with synthesized inputs.
#include "cagr/importer.h"
#include "cagr/reference.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = cagr::fuzz::writeInput(data, size, ".onnx");
  auto g = cagr::importOnnx(path);
  if (!g.isOk()) return 0;
  (void)g->verify();
  // Run only what stays small at batch 2 (every value <= 16 MiB), so the
  // fuzzer explores the executor, not the allocator.
  if (g->nodes().size() > 200) return 0;
  for (size_t v = 0; v < g->numValues(); ++v) {
    uint64_t bytes = 8;
    for (cagr::Dim d : g->type(static_cast<cagr::ValueId>(v)).dims) {
      uint64_t n = cagr::isSymbolic(d) ? 2 * static_cast<uint64_t>(cagr::dimCoef(d)) : static_cast<uint64_t>(d);
      if (n > (uint64_t{16} << 20) || __builtin_mul_overflow(bytes, n, &bytes) || bytes > (uint64_t{16} << 20)) return 0;
    }
  }
  (void)cagr::runReference(*g, cagr::synthesizeInputs(*g, 2, 1));
  return 0;
}
