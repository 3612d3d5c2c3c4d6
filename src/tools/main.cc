// cagr: the command-line driver (DESIGN §5). Each subcommand lives in cmd_*.cc.
#include <exception>
#include <iostream>
#include <new>

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
  // Errors are Status values; an exception reaching here is a defect or an
  // allocation the machine could not make: one line and a distinct exit code
  // (1: bad input, 2: usage, 3: internal, 4: out of memory), never an abort.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is not an error
  } catch (const std::bad_alloc&) {
    std::cerr << "cagr: error: out of memory\n";
    return 4;
  } catch (const std::exception& e) {
    std::cerr << "cagr: error: internal error: " << e.what() << "\n";
    return 3;
  }
  return exitCode;
}
