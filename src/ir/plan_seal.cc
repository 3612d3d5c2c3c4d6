// sealPlan / unsealPlan: the integrity line of a plan file. FNV-1a (64 bit)
// changes with any single altered byte (each step is a bijection of the
// state), and the byte count catches truncation; it guards against damage,
// not against someone who rewrites the header too.
#include <charconv>
#include <cstdio>

#include "cagr/text.h"

namespace cagr {
namespace {

constexpr std::string_view kMagic = "// cagr-plan v";
constexpr int kVersion = 1;

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string sealPlan(std::string_view graphText) {
  std::string out = std::string(kMagic) + std::to_string(kVersion) + " fnv1a64=" + hex16(fnv1a64(graphText)) +
                    " bytes=" + std::to_string(graphText.size()) + "\n";
  out += graphText;
  return out;
}

StatusOr<std::string_view> unsealPlan(std::string_view file, const std::string& source) {
  const std::string where = "plan '" + source + "'";
  if (!file.starts_with(kMagic)) {
    return corrupt(where + " has no integrity line ('// cagr-plan v1 ...' first): not written by cagr optimize, or "
                   "its start was cut off; re-run cagr optimize (a hand-edited graph goes in a .mlir file)");
  }
  size_t eol = file.find('\n');
  if (eol == std::string_view::npos) return corrupt(where + " is truncated after its integrity line");
  std::string_view header = file.substr(kMagic.size(), eol - kMagic.size());
  std::string_view body = file.substr(eol + 1);
  int version = 0;
  unsigned long long hash = 0, bytes = 0;
  auto [p, ec] = std::from_chars(header.data(), header.data() + header.size(), version);
  if (ec != std::errc() || version != kVersion) {
    return unsupported(where + " is plan format v" + std::string(header.substr(0, header.find(' '))) +
                       "; this cagr reads v" + std::to_string(kVersion));
  }
  std::string_view rest(p, header.data() + header.size() - p);
  const std::string_view kHash = " fnv1a64=", kBytes = " bytes=";
  bool ok = rest.starts_with(kHash);
  if (ok) {
    auto r = std::from_chars(rest.data() + kHash.size(), rest.data() + rest.size(), hash, 16);
    rest = std::string_view(r.ptr, rest.data() + rest.size() - r.ptr);
    ok = r.ec == std::errc() && rest.starts_with(kBytes);
  }
  if (ok) {
    auto r = std::from_chars(rest.data() + kBytes.size(), rest.data() + rest.size(), bytes);
    ok = r.ec == std::errc() && r.ptr == rest.data() + rest.size();
  }
  if (!ok) return corrupt(where + ": malformed integrity line '" + std::string(file.substr(0, eol)) + "'");
  if (body.size() != bytes) {
    return corrupt(where + " is truncated or extended: " + std::to_string(body.size()) + " bytes after the integrity "
                   "line, " + std::to_string(bytes) + " sealed");
  }
  if (fnv1a64(body) != hash) {
    return corrupt(where + " was altered after cagr optimize wrote it (checksum mismatch): re-run cagr optimize");
  }
  return body;
}

}  // namespace cagr
