// Timing harness and machine facts (/proc/cpuinfo, /proc/meminfo, sysfs caches).
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "hw/microbench.h"

namespace cagr::hw {

double nowSeconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

namespace {
bool gThreadCpuTime = false;

/// The clock samples are measured with: wall time, or the calling thread's
/// CPU time (useThreadCpuTime).
double sampleNow() {
  if (!gThreadCpuTime) return nowSeconds();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

void useThreadCpuTime(bool on) {
  gThreadCpuTime = on;
}
bool usingThreadCpuTime() {
  return gThreadCpuTime;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double median(std::vector<double> v) {
  return quantile(std::move(v), 0.5);
}

Timing timeIt(const std::function<void()>& fn, const TimingPlan& plan) {
  // Warm-up: at least three calls (one if a single call eats a quarter of
  // the target) and at least minSampleS of calls. The fastest warm-up call
  // sizes the samples: a call that lost its core to another process (a
  // scheduler slice is milliseconds) must not shrink `inner` to a few calls.
  int64_t calls = 0;
  const double w0 = nowSeconds();
  double elapsed = 0;
  double fastest = 1e30;
  do {
    const double c0 = sampleNow();
    fn();
    const double c1 = sampleNow();
    fastest = std::min(fastest, c1 - c0);
    ++calls;
    elapsed = nowSeconds() - w0;
    if (calls == 1 && elapsed > plan.targetS / 4) break;
  } while (calls < 3 || elapsed < plan.minSampleS);
  const double perCall = std::max(fastest, 1e-9);

  Timing t;
  const double sampleS = std::max(plan.minSampleS, plan.targetS / std::max(plan.maxSamples, 1));
  t.inner = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sampleS / perCall)), 1, 1000000);
  const double perSample = perCall * static_cast<double>(t.inner);
  const int fit = static_cast<int>(plan.targetS / perSample);
  const int samples = std::clamp(fit, plan.minSamples, std::max(plan.minSamples, plan.maxSamples));

  // Calls slowed by other processes must not blow the budget: past 1.25x
  // the target, stop once the minimum sample count is in.
  std::vector<double> times;
  times.reserve(samples);
  const double start = nowSeconds();
  for (int s = 0; s < samples; ++s) {
    const double s0 = sampleNow();
    for (int64_t i = 0; i < t.inner; ++i) fn();
    const double s1 = sampleNow();
    times.push_back((s1 - s0) / static_cast<double>(t.inner));
    if (s + 1 >= plan.minSamples && nowSeconds() - start > 1.25 * plan.targetS) break;
  }
  t.samples = static_cast<int>(times.size());
  t.median = quantile(times, 0.5);
  t.p10 = quantile(times, 0.1);
  t.p90 = quantile(times, 0.9);
  return t;
}

// ------------------------------------------------------------------ machine

namespace {

std::string readFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// "32K" / "1024K" / "32M" -> bytes; 0 when unreadable.
int64_t parseSize(const std::string& s) {
  if (s.empty()) return 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (v <= 0) return 0;
  const char unit = end ? *end : '\0';
  if (unit == 'K') return v * 1024;
  if (unit == 'M') return v * 1024 * 1024;
  if (unit == 'G') return v * 1024LL * 1024 * 1024;
  return v;
}

/// "0-1" / "0,2,4-7" -> number of CPUs listed.
int countCpuList(const std::string& s) {
  int count = 0;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      count += part.empty() ? 0 : 1;
    } else {
      count += std::atoi(part.c_str() + dash + 1) - std::atoi(part.c_str()) + 1;
    }
  }
  return std::max(count, 1);
}

void readCpuinfo(MachineInfo& m) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string val = trim(line.substr(colon + 1));
    if (key == "model name" && m.cpuModel.empty()) m.cpuModel = val;
    if (key == "vendor_id" && m.vendorId.empty()) m.vendorId = val;
    if (key == "flags" && m.flags.empty()) m.flags = " " + val + " ";
    if (key == "cpu MHz" && m.mhz == 0) m.mhz = std::atof(val.c_str());
  }
  if (m.cpuModel.empty()) m.cpuModel = "unknown CPU";
}

void readCaches(MachineInfo& m) {
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    const std::string type = readFirstLine(dir + "/type");
    if (type.empty()) break;
    if (type == "Instruction") continue;
    CacheLevel c;
    c.level = std::atoi(readFirstLine(dir + "/level").c_str());
    c.type = type;
    c.sizePerInstance = parseSize(readFirstLine(dir + "/size"));
    c.sharedCpus = countCpuList(readFirstLine(dir + "/shared_cpu_list"));
    c.sysfsPath = dir;
    if (c.level <= 0 || c.sizePerInstance <= 0) continue;
    const int instances = std::max(1, (m.onlineCpus + c.sharedCpus - 1) / c.sharedCpus);
    c.totalBytes = c.sizePerInstance * instances;
    m.caches.push_back(c);
  }
  std::sort(m.caches.begin(), m.caches.end(),
            [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
}

}  // namespace

bool MachineInfo::hasFlag(const std::string& f) const {
  return flags.find(" " + f + " ") != std::string::npos;
}

int MachineInfo::vectorBits() const {
  if (hasFlag("avx512f")) return 512;
  if (hasFlag("avx2") || hasFlag("avx")) return 256;
  return 128;
}

int64_t MachineInfo::llcBytes() const {
  int64_t best = 0;
  for (const CacheLevel& c : caches) best = std::max(best, c.totalBytes);
  return best > 0 ? best : int64_t{32} << 20;
}

MachineInfo readMachineInfo() {
  MachineInfo m;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) m.hostname = host;
  if (m.hostname.empty()) m.hostname = "unknown-host";
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  m.onlineCpus = online > 0 ? static_cast<int>(online) : 1;
  readCpuinfo(m);
  std::ifstream mem("/proc/meminfo");
  std::string key;
  long long kb = 0;
  while (mem >> key >> kb) {
    if (key == "MemTotal:") {
      m.memTotalBytes = kb * 1024;
      break;
    }
    mem.ignore(1 << 10, '\n');
  }
  readCaches(m);
  return m;
}

double netRate(double work, double seconds, double overhead) {
  if (seconds <= 0) return 0;
  return work / std::max(seconds - overhead, 0.1 * seconds);
}

std::string isoNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string fmt(const char* f, ...) {
  va_list ap, again;
  va_start(ap, f);
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, f, ap);
  va_end(ap);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, f, again);
  va_end(again);
  return out;
}

}  // namespace cagr::hw
