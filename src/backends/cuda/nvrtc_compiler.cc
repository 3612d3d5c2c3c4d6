// compileModule: NVRTC compilation of a generated module to PTX (always)
// and CUBIN (for sm_XX targets), cached on disk by the SHA-256 of (source,
// options, NVRTC version). A cache entry carries its key and a checksum of
// its payload; an entry that is truncated, corrupt or for another key is
// recompiled, never trusted. Entries are written to a temporary file and
// renamed into place, so concurrent compiles never see half an entry.
#include <nvrtc.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "backends/cuda/codegen.h"

namespace cagr::cuda {
namespace {

namespace fs = std::filesystem;
using Digest = std::array<uint8_t, 32>;

// ---- SHA-256 (FIPS 180-4) ----
uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

Digest sha256(const std::string& data) {
  static const uint32_t kK[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string m = data;
  uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  m.push_back(static_cast<char>(0x80));
  while (m.size() % 64 != 56) m.push_back('\0');
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  for (size_t off = 0; off < m.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const uint8_t*>(m.data() + off + 4 * static_cast<size_t>(i));
      w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t v[8];
    std::memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; ++i) {
      uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
      uint32_t t1 = v[7] + s1 + ((v[4] & v[5]) ^ (~v[4] & v[6])) + kK[i] + w[i];
      uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
      uint32_t t2 = s0 + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
      std::memmove(v + 1, v, 7 * sizeof(uint32_t));
      v[4] += t1;
      v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; ++i) h[i] += v[i];
  }
  Digest d{};
  for (int i = 0; i < 32; ++i) d[static_cast<size_t>(i)] = static_cast<uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return d;
}

std::string hex(const Digest& d) {
  static const char* const kHex = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

// ---- environment ----
std::string envOr(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : dflt;
}

std::string cudaIncludeDir() {
  std::vector<std::string> candidates;
#ifdef CAGR_CUDA_INCLUDE_DIR
  candidates.emplace_back(CAGR_CUDA_INCLUDE_DIR);
#endif
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/include");
  if (const char* path = std::getenv("CUDA_PATH")) candidates.push_back(std::string(path) + "/include");
  candidates.emplace_back("/usr/local/cuda/include");
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (fs::exists(c + "/cuda_fp16.h", ec)) return c;
  }
  return "";
}

std::string cacheRoot(const NvrtcOptions& o) {
  if (!o.cacheDir.empty()) return o.cacheDir;
  std::string dir = envOr("CAGR_CACHE_DIR", "");
  if (!dir.empty()) return dir;
  std::string xdg = envOr("XDG_CACHE_HOME", "");
  if (!xdg.empty()) return xdg + "/cagr";
  return envOr("HOME", "/tmp") + "/.cache/cagr";
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

// ---- cache entries ----
constexpr char kMagic[8] = {'C', 'A', 'G', 'R', 'N', 'V', '0', '1'};

struct Entry {
  std::string ptx, cubin, log;
};

void putU64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t getU64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + static_cast<size_t>(i)]);
  return v;
}

std::string encode(const Digest& key, const Entry& e) {
  std::string payload = e.ptx + e.cubin + e.log, s(kMagic, sizeof kMagic);
  putU64(s, e.ptx.size());
  putU64(s, e.cubin.size());
  putU64(s, e.log.size());
  Digest sum = sha256(payload);
  s.append(reinterpret_cast<const char*>(key.data()), key.size());
  s.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  return s + payload;
}

// The entry in `bytes`, or nothing when it is not a whole, intact entry for `key`.
std::optional<Entry> decode(const Digest& key, const std::string& bytes) {
  constexpr size_t kHeader = sizeof kMagic + 24 + 64;
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  uint64_t lp = getU64(bytes, 8), lc = getU64(bytes, 16), ll = getU64(bytes, 24);
  if (lp > bytes.size() || lc > bytes.size() || ll > bytes.size() || kHeader + lp + lc + ll != bytes.size())
    return std::nullopt;
  if (std::memcmp(bytes.data() + 32, key.data(), key.size()) != 0) return std::nullopt;
  std::string payload = bytes.substr(kHeader);
  Digest sum = sha256(payload);
  if (std::memcmp(bytes.data() + 64, sum.data(), sum.size()) != 0) return std::nullopt;
  return Entry{payload.substr(0, lp), payload.substr(lp, lc), payload.substr(lp + lc)};
}

std::optional<Entry> readEntry(const std::string& path, const Digest& key) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return decode(key, ss.str());
}

// Writes the entry atomically; a cache that cannot be written only costs time.
void writeEntry(const std::string& path, const Digest& key, const Entry& e) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  static int counter = 0;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    std::string bytes = encode(key, e);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

// ---- compilation ----
std::string programLog(nvrtcProgram p) {
  size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n <= 1) return "";
  std::string log(n, '\0');
  nvrtcGetProgramLog(p, log.data());
  log.resize(n - 1);
  return log;
}

// NVRTC's log with the source lines its errors point at quoted.
std::string explainErrors(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::regex at(R"(cagr_module\.cu\((\d+)\): error)");
  std::set<size_t> shown;
  std::string quoted;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), at); it != std::sregex_iterator() && shown.size() < 5;
       ++it) {
    size_t line = std::stoul((*it)[1].str());
    if (line == 0 || line > lines.size() || !shown.insert(line).second) continue;
    quoted += "\n  " + std::to_string(line) + " | " + lines[line - 1];
  }
  return log + (quoted.empty() ? "" : "\nat:" + quoted);
}

StatusOr<Entry> compile(const std::string& source, const std::vector<std::string>& options, bool cubin,
                        const std::string& arch) {
  nvrtcProgram p = nullptr;
  if (nvrtcCreateProgram(&p, source.c_str(), "cagr_module.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    return internalError("NVRTC could not create a program");
  }
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  nvrtcResult rc = nvrtcCompileProgram(p, static_cast<int>(argv.size()), argv.data());
  Entry e;
  e.log = programLog(p);
  if (rc != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&p);
    return invalidArgument("NVRTC failed to compile the generated module for " + arch + " (" + nvrtcGetErrorString(rc) +
                           "):\n" + explainErrors(e.log, source));
  }
  size_t n = 0;
  if (nvrtcGetPTXSize(p, &n) == NVRTC_SUCCESS && n > 0) {
    e.ptx.resize(n);
    nvrtcGetPTX(p, e.ptx.data());
    if (!e.ptx.empty() && e.ptx.back() == '\0') e.ptx.pop_back();
  }
  if (cubin && nvrtcGetCUBINSize(p, &n) == NVRTC_SUCCESS && n > 0) {
    e.cubin.resize(n);
    nvrtcGetCUBIN(p, e.cubin.data());
  }
  nvrtcDestroyProgram(&p);
  if (e.ptx.empty()) return internalError("NVRTC produced no PTX for " + arch);
  if (cubin && e.cubin.empty()) return internalError("NVRTC produced no CUBIN for " + arch);
  return e;
}

}  // namespace

StatusOr<CompiledModule> compileModule(const std::string& source, const NvrtcOptions& opts) {
  static const std::regex archRe(R"((sm|compute)_[0-9]{2,3}[a-z]?)");
  if (!std::regex_match(opts.arch, archRe)) {
    return invalidArgument("NVRTC architecture '" + opts.arch + "': expected sm_XX[a] (CUBIN) or compute_XX[a] (PTX)");
  }
  bool cubin = opts.arch.rfind("sm_", 0) == 0;
  // --split-compile=0: NVRTC optimizes the module's kernels on as many threads
  // as the host has (a plan's kernels are independent; wall time, not CPU
  // time, is what a cold compile costs the user).
  std::vector<std::string> options = {"--gpu-architecture=" + opts.arch, "-std=c++17", "--split-compile=0"};
  std::string include = cudaIncludeDir();
  if (!include.empty()) options.push_back("-I" + include);
  std::string keyText = "cagr-nvrtc\n" + nvrtcVersionString() + "\n";
  for (const std::string& o : options) keyText += (o.rfind("-I", 0) == 0 ? std::string("-I") : o) + "\n";
  Digest key = sha256(keyText + source);
  std::string path = cacheRoot(opts) + "/nvrtc/" + hex(key) + (cubin ? ".cubin" : ".ptx");
  CompiledModule m;
  m.arch = opts.arch;
  if (opts.useCache) {
    if (auto hit = readEntry(path, key)) {
      m.ptx = std::move(hit->ptx);
      m.cubin.assign(hit->cubin.begin(), hit->cubin.end());
      m.log = std::move(hit->log);
      m.fromCache = true;
      return m;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  CAGR_ASSIGN_OR_RETURN(Entry e, compile(source, options, cubin, opts.arch));
  m.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opts.useCache) writeEntry(path, key, e);
  m.ptx = std::move(e.ptx);
  m.cubin.assign(e.cubin.begin(), e.cubin.end());
  m.log = std::move(e.log);
  return m;
}

}  // namespace cagr::cuda
