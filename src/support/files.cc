#include "support/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cagr {

StatusOr<MappedRegion> mapFileRegion(const std::string& path, uint64_t offset, uint64_t length) {
  CAGR_RETURN_IF_ERROR(checkRegularFile(path, "weights file"));
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec || offset > size || length > size - offset) {
    return corrupt("weights file '" + path + "' is too short: " + std::to_string(length) + " bytes at offset " +
                   std::to_string(offset) + ", the file has " + std::to_string(size));
  }
  MappedRegion r;
  r.size = length;
  if (length == 0) {
    r.owner = std::make_shared<std::byte>();
    r.data = static_cast<std::byte*>(r.owner.get());
    return r;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return notFound("cannot open weights file '" + path + "': " + std::strerror(errno));
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page, span = length + (offset - start);
  void* base = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, static_cast<off_t>(start));
  int err = errno;
  ::close(fd);
  if (base == MAP_FAILED) return invalidArgument("cannot map weights file '" + path + "': " + std::strerror(err));
  r.owner = std::shared_ptr<void>(base, [span](void* p) { ::munmap(p, span); });
  r.data = static_cast<std::byte*>(base) + (offset - start);
  return r;
}

uint64_t fnv1a64(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

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
