// `--kv-type` of wisp run and wisp chat: an unknown type is a usage error (exit 2) that lists the
// known types, caught before the model loads; each known type generates.
#include <gtest/gtest.h>

#include "tests/support/run_command.h"

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

using wisp::test::run_wisp;

const std::string kModel = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";

TEST(KvTypeFlag, UnknownTypeIsAUsageError) {
  for (const char* cmd : {"run", "chat"}) {
    // A missing model file proves the type is checked first.
    const auto r =
        run_wisp(std::string(cmd) + " -m /nonexistent.gguf --kv-type q5" + (std::string(cmd) == "run" ? " -p hi" : ""));
    EXPECT_EQ(r.status, 2) << r.all();
    EXPECT_NE(r.all().find("--kv-type: unknown KV type 'q5' (known: f16, f32, q8_0, q4)"), std::string::npos)
        << r.all();
  }
}

TEST(KvTypeFlag, HelpListsTheTypes) {
  const auto r = run_wisp("run --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.all().find("--kv-type"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("q8_0"), std::string::npos) << r.all();
}

TEST(KvTypeFlag, EachTypeGenerates) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << "model not found: " << kModel;
  for (const char* t : {"f16", "q8_0", "q4", "f32"}) {
    const auto r =
        run_wisp("run -m " + kModel + " --kv-type " + t + " -p 'The capital of France is' -n 4 --temp 0 -t 1");
    EXPECT_EQ(r.status, 0) << t << ": " << r.all();
    EXPECT_NE(r.all().find("Paris"), std::string::npos) << t << ": " << r.all();
  }
}

}  // namespace
