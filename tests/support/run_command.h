// Runs a command the way a user would from a shell, for tests that drive the `wisp` binary or a
// Python oracle script: feeds `input` on stdin, captures stdout and stderr separately, and returns
// the exit status (-1 when the process did not exit normally, e.g. killed by a signal).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace wisp::test {

struct CommandResult {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  std::string all() const { return out + err; }
};

inline CommandResult run_command(const std::string& command, const std::string& input = "") {
  namespace fs = std::filesystem;
  static int counter = 0;  // distinct scratch names within one test process
  fs::path dir =
      fs::temp_directory_path() / ("wisp_cmd_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(dir);
  fs::path in = dir / "stdin", out = dir / "stdout", err = dir / "stderr";
  { std::ofstream(in, std::ios::binary) << input; }
  std::string cmd = "(" + command + ") < '" + in.string() + "' > '" + out.string() + "' 2> '" + err.string() + "'";
  int st = std::system(cmd.c_str());
  auto slurp = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  CommandResult r;
  r.status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove_all(dir);
  return r;
}

// `wisp ARGS` with the binary this build produced (WISP_BINARY).
inline CommandResult run_wisp(const std::string& args, const std::string& input = "") {
  return run_command("'" + std::string(WISP_BINARY) + "' " + args, input);
}

}  // namespace wisp::test
