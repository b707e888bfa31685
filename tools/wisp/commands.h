// The subcommands of the `wisp` CLI. Each lives in its own cmd_<name>.cpp and returns the process
// exit code; argv[0] is the subcommand name.
#pragma once

namespace wisp::cli {

int cmd_info(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_ppl(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_serve(int argc, char** argv);

}  // namespace wisp::cli
