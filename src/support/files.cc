#include "support/files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cagr {

Status checkRegularFile(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return notFound("cannot read " + what + " '" + path + "': no such file");
  if (fs::is_directory(st)) return invalidArgument("cannot read " + what + " '" + path + "': is a directory");
  if (!fs::is_regular_file(st)) {
    return invalidArgument("cannot read " + what + " '" + path + "': not a regular file (a FIFO, socket or device)");
  }
  return Status::ok();
}

StatusOr<std::string> readRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes) {
  CAGR_RETURN_IF_ERROR(checkRegularFile(path, what));
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return notFound("cannot read " + what + " '" + path + "': " + ec.message());
  if (size > maxBytes) {
    return invalidArgument("cannot read " + what + " '" + path + "': " + std::to_string(size) + " bytes, more than the " +
                           std::to_string(maxBytes) + " allowed");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot open " + what + " '" + path + "': " + std::strerror(errno));
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) return corrupt("cannot read " + what + " '" + path + "': short read");
  return text;
}

// Writes via "<path>.tmp" and renames into place so readers never see a
// half-written file.
Status writeAtomically(const std::string& path, const std::function<void(std::ofstream&)>& body) {
  // Renaming over the destination would replace a device node, a FIFO or a
  // symlink (and what it points to stays) with a regular file: refuse those.
  std::error_code ec;
  auto st = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    return invalidArgument(path + ": exists and is not a regular file (a " +
                           (std::filesystem::is_symlink(st) ? std::string("symbolic link") : std::string("special file")) +
                           "); not replacing it");
  }
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return invalidArgument(path + ": cannot open for writing: " + std::strerror(errno));
  body(out);
  out.close();
  if (!out) {
    std::filesystem::remove(tmp, ec);
    return invalidArgument(path + ": write failed (disk full?)");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return invalidArgument(path + ": cannot rename temporary file: " + ec.message());
  return Status::ok();
}

}  // namespace cagr
