// Runs the built `cagr` binary (CAGR_BINARY) with arguments and captures its
// combined stdout/stderr and exit code, for end-to-end CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace cagr::testing {

struct CliResult {
  int code = -1;
  std::string out;  // stdout and stderr together
};

inline CliResult runCagr(const std::string& args) {
  std::string cmd = std::string(CAGR_BINARY) + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p) != nullptr) r.out += buf.data();
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace cagr::testing
