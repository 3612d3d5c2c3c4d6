// Reading whole files named by a user (plans, profiles, policies) safely: a
// FIFO, a device or a directory is refused instead of hanging or reading
// forever, and a file above `maxBytes` is refused before it is read.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
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

/// Writes `path` through "<path>.tmp" renamed into place, so readers never
/// see a half-written file; refuses to replace anything but a regular file
/// (a device node, FIFO or symlink at `path` stays as it is).
Status writeAtomically(const std::string& path, const std::function<void(std::ofstream&)>& body);

}  // namespace cagr
