// libFuzzer target: the hardware-profile JSON reader on arbitrary text; a
// profile that parses must serialise and parse back.
#include "cagr/hw.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto p = cagr::parseProfile(text, "fuzz.json");
  if (p.isOk()) {
    auto back = cagr::parseProfile(cagr::profileToJson(*p), "reprint.json");
    if (!back.isOk()) __builtin_trap();
  }
  return 0;
}
