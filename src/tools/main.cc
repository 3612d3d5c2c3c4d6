// cagr: the command-line driver. Subcommands live in cmd_*.cc.
#include <cstdio>

int main(int argc, char** argv) {
  std::puts("cagr: CLI under construction");
  return 0;
}
