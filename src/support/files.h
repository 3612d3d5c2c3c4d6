// Reading whole files named by a user (plans, profiles, policies) safely: a
// FIFO, a device or a directory is refused instead of hanging or reading
// forever, and a file above `maxBytes` is refused before it is read.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "cagr/status.h"

namespace cagr {

/// The contents of the regular file at `path`; `what` names it in errors
/// ("plan", "hardware profile").
StatusOr<std::string> readRegularFile(const std::string& path, const std::string& what,
                                      uint64_t maxBytes = uint64_t{1} << 32);

/// notFound / invalidArgument unless `path` is an existing regular file
/// (symlinks to one are fine).
Status checkRegularFile(const std::string& path, const std::string& what);

/// A read-only view of `length` bytes of a regular file from `offset`, memory-
/// mapped (private, copy-on-write: a stray write never reaches the file).
/// Pages are read on first touch, so a table of which a batch reads a few rows
/// costs those rows, and the file's bytes are never held twice.
struct MappedRegion {
  std::shared_ptr<void> owner;  // unmaps when the last user lets go
  std::byte* data = nullptr;
  uint64_t size = 0;
};
StatusOr<MappedRegion> mapFileRegion(const std::string& path, uint64_t offset, uint64_t length);

/// FNV-1a (64 bit) of `n` bytes, continuing from `h` (plan and weights seals).
uint64_t fnv1a64(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull);

/// Writes `path` through "<path>.tmp" renamed into place, so readers never
/// see a half-written file; refuses to replace anything but a regular file
/// (a device node, FIFO or symlink at `path` stays as it is).
Status writeAtomically(const std::string& path, const std::function<void(std::ofstream&)>& body);

}  // namespace cagr
