// libFuzzer target: the HIR / plan text parser and the plan integrity line on
// arbitrary text; a graph that parses must print and parse back.
#include "cagr/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)cagr::unsealPlan(text, "fuzz.cagr");
  auto g = cagr::parseGraph(text, "fuzz.mlir");
  if (g.isOk()) {
    // Printing scans every constant; skip the round trip for graphs that
    // declare more than 64 MiB of (lazily zero) constant data.
    uint64_t bytes = 0;
    for (size_t v = 0; v < g->numValues(); ++v) {
      if (g->isConstant(static_cast<cagr::ValueId>(v))) bytes += g->constant(static_cast<cagr::ValueId>(v))->byteSize();
    }
    if (bytes > (uint64_t{64} << 20)) return 0;
    auto back = cagr::parseGraph(cagr::printGraph(*g), "reprint.mlir");
    if (!back.isOk()) __builtin_trap();  // print -> parse must round-trip
  }
  return 0;
}
