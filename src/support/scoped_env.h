// Sets (or unsets) an environment variable for one scope and puts the old
// value back after: for code that reads a CAGR_* switch when it runs (the
// CUDA executable reads CAGR_CUDA_PDL when it loads a module) and for tests.
// Not thread-safe, as setenv is not.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace cagr {

class ScopedEnv {
 public:
  /// `value` nullptr: the variable is unset inside the scope.
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const char* value) {
    if (value != nullptr) {
      setenv(name_.c_str(), value, 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace cagr
