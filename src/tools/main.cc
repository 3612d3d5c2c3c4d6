// cagr: the command-line driver (DESIGN §5). Each subcommand lives in cmd_*.cc.
#include <iostream>

#include "tools/common.h"

int main(int argc, char** argv) {
  CLI::App app{"cagr: cross-accelerator graph rewriting for recommendation models"};
  app.require_subcommand(1);
  int exitCode = 0;
  cagr::tools::addInspect(app, exitCode);
  cagr::tools::addRun(app, exitCode);
  cagr::tools::addExport(app, exitCode);
  cagr::tools::addProfile(app, exitCode);
  cagr::tools::addOptimize(app, exitCode);
  cagr::tools::addBench(app, exitCode);
  cagr::tools::addTrain(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exitCode;
}
