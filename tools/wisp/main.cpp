// `wisp`: one binary, one subcommand per job. Dispatches to tools/wisp/cmd_*.cpp.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "commands.h"
#include "usage_error.h"
#include "wisp/error.h"
#include "wisp/version.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

constexpr Command kCommands[] = {
    {"run", "generate a completion for a prompt (one shot), with timings", wisp::cli::cmd_run},
    {"chat", "chat with a model: a REPL that streams answers, multi-turn", wisp::cli::cmd_chat},
    {"info", "describe a GGUF model: architecture, hyper-parameters, tensors by type, size", wisp::cli::cmd_info},
    {"plan", "serving arithmetic: weight/KV bytes, users that fit, decode ceiling, precision ladder",
     wisp::cli::cmd_plan},
    {"quantize", "convert a HF folder or F16 GGUF to a quantized GGUF (wisp WQ or GGML types)",
     wisp::cli::cmd_quantize},
    {"ppl", "perplexity on a text (llama.cpp's method); KL/top-1/delta PPL against a base model", wisp::cli::cmd_ppl},
    {"bench", "tokens/s for prefill and decode per model file (table, JSON, CSV, SVG chart)", wisp::cli::cmd_bench},
    {"serve", "an OpenAI-compatible HTTP server (chat/completions, streaming, metrics)", wisp::cli::cmd_serve},
};

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "wisp - a CPU-first LLM inference runtime\n\n"
               "usage: wisp <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'wisp <command> --help' describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  std::string_view name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  if (name == "--version") {
    std::printf("wisp %s\n", WISP_VERSION_STRING);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (name == c.name) {
      try {
        return c.run(argc - 1, argv + 1);
      } catch (const wisp::cli::UsageError& e) {
        std::fprintf(stderr, "wisp %s: %s\n(see 'wisp %s --help')\n", c.name, e.what(), c.name);
        return wisp::cli::kUsageExit;
      } catch (const wisp::Error& e) {
        std::fprintf(stderr, "wisp %s: error: %s\n", c.name, e.what());
        return 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "wisp %s: internal error: %s\n", c.name, e.what());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "wisp: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return 2;
}
