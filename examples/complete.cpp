// Loads a GGUF model and streams a completion of a prompt to stdout (wisp's C++ API).
//   complete MODEL.gguf "PROMPT" [N_TOKENS]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include <wisp/generate.h>
#include <wisp/model.h>
#include <wisp/sampler.h>
#include <wisp/session.h>
#include <wisp/tokenizer.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.gguf PROMPT [N_TOKENS]\n", argv[0]);
    return 2;
  }
  try {
    auto model = wisp::Model::load(argv[1]);
    wisp::Tokenizer tokenizer = wisp::Tokenizer::from_model(*model);
    // exact: llama.cpp's float orders, so a greedy completion is llama.cpp's too.
    wisp::Session session(model, {.n_ctx = 512, .exact = true});
    wisp::Sampler sampler({.temperature = 0.0f});  // greedy

    wisp::GenerationOptions options;
    options.n_predict = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 32;
    options.on_text = [](std::string_view piece) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;  // false would stop the generation here
    };
    const auto prompt = tokenizer.tokenize(argv[2], {.add_special = true, .parse_special = true});
    const wisp::GenerationResult r = wisp::generate(session, tokenizer, sampler, prompt, options);
    std::printf("\n");
    std::fprintf(stderr, "%zu tokens, %.1f tok/s, stop: %s\n", r.stats.n_generated, r.stats.decode_tokens_per_second(),
                 wisp::stop_reason_name(r.stop));
  } catch (const std::exception& e) {  // wisp::Error: the message names the file or setting at fault
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
