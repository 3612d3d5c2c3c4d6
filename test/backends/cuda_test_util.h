// Shared by the CUDA backend tests that need a GPU: the backend, or the
// reason there is none (the test then skips with it).
#pragma once

#include <memory>
#include <string>

#include "cagr/backend.h"

namespace cagr::cudatest {

/// The cuda backend when a device is there; else nullptr and `why` says
/// what is missing (no CUDA build, no driver, no device).
inline std::unique_ptr<ExecutionBackend> gpuOrSkip(std::string& why) {
  auto backend = makeBackend("cuda");
  if (!backend.isOk()) {
    why = backend.status().message();
    return nullptr;
  }
  BackendCapabilities caps = (*backend)->capabilities();
  if (!caps.available) {
    why = caps.note;
    return nullptr;
  }
  return std::move(*backend);
}

}  // namespace cagr::cudatest
