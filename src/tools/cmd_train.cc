// cagr train ...: trains the RL policy. Training links LibTorch, which the
// compiler core never does, so this subcommand only hands its arguments to
// the `cagr-train` binary built next to `cagr` (see src/train/).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tools/common.h"

namespace cagr::tools {
namespace {

int runTrain(const std::vector<std::string>& args) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return fail(internalError("cannot locate the running cagr binary: " + ec.message()));
  std::filesystem::path trainer = exe.parent_path() / "cagr-train";
  if (!std::filesystem::is_regular_file(trainer, ec)) {
    return fail(notFound("cagr train needs the cagr-train binary, which was not built (looked for " + trainer.string() +
                         "); it is built when LibTorch is found: install libtorch-dev and re-run cmake"));
  }
  std::vector<std::string> storage{trainer.string()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::execv(storage[0].c_str(), argv.data());
  return fail(internalError("cannot run " + trainer.string() + ": " + std::strerror(errno)));
}

}  // namespace

void addTrain(CLI::App& app, int& exitCode) {
  CLI::App* cmd = app.add_subcommand("train", "train the RL policy (runs cagr-train; `cagr train --help` for options)");
  cmd->prefix_command();
  cmd->set_help_flag();  // --help goes to cagr-train
  cmd->callback([cmd, &exitCode] { exitCode = runTrain(cmd->remaining()); });
}

}  // namespace cagr::tools
