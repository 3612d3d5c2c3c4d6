// sealPlan / unsealPlan: the integrity line of a plan file. FNV-1a (64 bit)
// changes with any single altered byte (each step is a bijection of the
// state), and the byte counts catch truncation; it guards against damage,
// not against someone who rewrites the line too.
#include <charconv>
#include <cstdio>
#include <map>

#include "cagr/text.h"
#include "support/files.h"

namespace cagr {
namespace {

constexpr std::string_view kMagic = "// cagr-plan v";
constexpr int kVersion = 1;

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool parseU64(std::string_view s, uint64_t& v, int base) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// A weights file name: a plain name next to the plan, nothing that leaves its directory.
bool plainFileName(std::string_view f) {
  return !f.empty() && f != "." && f != ".." && f.find_first_of("/\\ \t\n") == std::string_view::npos;
}

}  // namespace

std::string sealPlan(std::string_view graphText, const PlanWeights& weights) {
  std::string out = std::string(kMagic) + std::to_string(kVersion) + " fnv1a64=" +
                    hex16(fnv1a64(graphText.data(), graphText.size())) + " bytes=" + std::to_string(graphText.size());
  if (!weights.file.empty()) {
    out += " weights=" + weights.file + " weights_fnv1a64=" + hex16(weights.hash) +
           " weights_bytes=" + std::to_string(weights.bytes);
  }
  out += "\n";
  out += graphText;
  return out;
}

StatusOr<UnsealedPlan> unsealPlan(std::string_view file, const std::string& source) {
  const std::string where = "plan '" + source + "'";
  if (!file.starts_with(kMagic)) {
    return corrupt(where + " has no integrity line ('// cagr-plan v1 ...' first): not written by cagr optimize, or "
                   "its start was cut off; re-run cagr optimize (a hand-edited graph goes in a .mlir file)");
  }
  size_t eol = file.find('\n');
  if (eol == std::string_view::npos) return corrupt(where + " is truncated after its integrity line");
  std::string_view header = file.substr(kMagic.size(), eol - kMagic.size());
  UnsealedPlan plan{file.substr(eol + 1), {}};
  // "<version> key=value key=value ..."
  size_t sp = header.find(' ');
  uint64_t version = 0;
  if (!parseU64(header.substr(0, sp), version, 10) || version != kVersion) {
    return unsupported(where + " is plan format v" + std::string(header.substr(0, sp)) + "; this cagr reads v" +
                       std::to_string(kVersion));
  }
  std::map<std::string, std::string, std::less<>> kv;
  while (sp != std::string_view::npos) {
    size_t next = header.find(' ', sp + 1);
    std::string_view field = header.substr(sp + 1, next == std::string_view::npos ? next : next - sp - 1);
    size_t eq = field.find('=');
    if (eq == std::string_view::npos || !kv.emplace(field.substr(0, eq), field.substr(eq + 1)).second) {
      return corrupt(where + ": malformed integrity line '" + std::string(file.substr(0, eol)) + "'");
    }
    sp = next;
  }
  uint64_t hash = 0, bytes = 0;
  bool ok = kv.count("fnv1a64") && kv.count("bytes") && parseU64(kv["fnv1a64"], hash, 16) &&
            parseU64(kv["bytes"], bytes, 10);
  size_t expected = 2;
  if (ok && kv.count("weights")) {
    plan.weights.file = kv["weights"];
    ok = plainFileName(plan.weights.file) && kv.count("weights_fnv1a64") && kv.count("weights_bytes") &&
         parseU64(kv["weights_fnv1a64"], plan.weights.hash, 16) && parseU64(kv["weights_bytes"], plan.weights.bytes, 10);
    expected = 5;
  }
  if (!ok || kv.size() != expected) {
    return corrupt(where + ": malformed integrity line '" + std::string(file.substr(0, eol)) + "'");
  }
  if (plan.text.size() != bytes) {
    return corrupt(where + " is truncated or extended: " + std::to_string(plan.text.size()) + " bytes after the "
                   "integrity line, " + std::to_string(bytes) + " sealed");
  }
  if (fnv1a64(plan.text.data(), plan.text.size()) != hash) {
    return corrupt(where + " was altered after cagr optimize wrote it (checksum mismatch): re-run cagr optimize");
  }
  return plan;
}

}  // namespace cagr
