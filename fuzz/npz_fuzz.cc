// libFuzzer target: the npz / npy reader on arbitrary bytes.
#include "cagr/npz.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)cagr::readNpz(cagr::fuzz::writeInput(data, size, ".npz"));
  (void)cagr::decodeNpy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  return 0;
}
