// Shared by the libFuzzer targets: the importers read files, so each input is
// written to a per-process file under /dev/shm (or /tmp) first.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace cagr::fuzz {

inline std::string writeInput(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                  "/cagr_fuzz_" + std::to_string(getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  return path;
}

}  // namespace cagr::fuzz
