// `wisp quantize` as a user meets it when something is wrong: each mistake gives an error naming
// what is wrong, a non-zero exit status and no output file (no OUT, no OUT.tmp-* either). The
// broken Hugging Face folders (missing tensor, unknown architecture, wrong shape) are in
// test_hf_source.cpp; here: output paths, --target-bpw values, --eval, and --eval's report,
// which must be exactly what `wisp ppl --kl-base` prints for the same files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/run_command.h"

namespace {

namespace fs = std::filesystem;
using wisp::test::run_wisp;

class QuantizeCli : public ::testing::Test {
 protected:
  // One tiny llama folder and its F16 GGUF for the whole suite (python writes the folder).
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("wisp_qcli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const auto made =
        wisp::test::run_command("python3 " WISP_SOURCE_DIR "/scripts/make_tiny_hf.py '" + hf() + "' llama");
    ASSERT_EQ(made.status, 0) << made.all();
    const auto q = run_wisp("quantize '" + hf() + "' '" + gguf() + "' --type f16");
    ASSERT_EQ(q.status, 0) << q.all();
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string hf() { return (dir_ / "hf").string(); }
  static std::string gguf() { return (dir_ / "tiny.gguf").string(); }

  // Nothing named like `out` (the file or its temporaries) exists in its folder.
  static void expect_no_output(const fs::path& out) {
    std::error_code ec;
    if (!fs::is_directory(out.parent_path(), ec)) return;
    for (const auto& e : fs::directory_iterator(out.parent_path())) {
      EXPECT_EQ(e.path().filename().string().rfind(out.filename().string(), 0), std::string::npos)
          << "left behind: " << e.path();
      EXPECT_EQ(e.path().filename().string().find(".wisp-eval-f16"), std::string::npos) << "left behind: " << e.path();
    }
  }

  // Runs `wisp quantize IN OUT ARGS` expecting failure with status `status` (0: any non-zero)
  // and every one of `expect` in the message.
  static void expect_failure(const std::string& in, const fs::path& out, const std::string& args,
                             const std::vector<std::string>& expect, int status = 0) {
    const auto r = run_wisp("quantize '" + in + "' '" + out.string() + "' " + args);
    if (status != 0) {
      EXPECT_EQ(r.status, status) << args << "\n" << r.all();
    } else {
      EXPECT_NE(r.status, 0) << args << "\n" << r.all();
    }
    for (const auto& s : expect) EXPECT_NE(r.err.find(s), std::string::npos) << "no '" << s << "' in: " << r.err;
    expect_no_output(out);
  }

  static fs::path dir_;
};
fs::path QuantizeCli::dir_;

TEST_F(QuantizeCli, MissingOutputFolder) {
  const fs::path out = dir_ / "no_such_folder" / "out.gguf";
  expect_failure(gguf(), out, "--type q8_0", {(dir_ / "no_such_folder").string(), "does not exist"});
  EXPECT_FALSE(fs::exists(out.parent_path()));
}

TEST_F(QuantizeCli, UnwritableOutputFolder) {
  // /proc refuses new files even to root (a chmod'ed folder does not stop root, which runs CI here).
  expect_failure(gguf(), "/proc/wisp_quantize_test.gguf", "--type q8_0",
                 {"/proc/wisp_quantize_test.gguf", "cannot create"});
  if (::geteuid() != 0) {
    const fs::path ro = dir_ / "read_only";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    expect_failure(gguf(), ro / "out.gguf", "--type q8_0", {(ro / "out.gguf").string(), "Permission denied"});
    fs::permissions(ro, fs::perms::owner_all);
  }
}

TEST_F(QuantizeCli, OutputIsAFolder) {
  const fs::path out = dir_ / "a_folder";
  fs::create_directories(out);
  const auto r = run_wisp("quantize '" + gguf() + "' '" + out.string() + "' --type q8_0");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out));
}

TEST_F(QuantizeCli, BadTargetBpwValues) {
  const fs::path out = dir_ / "bpw.gguf";
  for (const char* v : {"1", "0.5", "0", "-3"}) {
    expect_failure(gguf(), out, std::string("--target-bpw ") + v, {"--target-bpw", "above 1", v}, 2);
  }
  for (const char* v : {"abc", "4.5x", "''"}) {
    expect_failure(gguf(), out, std::string("--target-bpw ") + v, {"--target-bpw"}, 2);
  }
  expect_failure(gguf(), out, "--target-bpw 4.5 --type q8_0", {"--type", "--target-bpw", "one of them"}, 2);
  expect_failure(gguf(), out, "", {"--type", "--target-bpw"}, 2);
  // A valid number the model cannot reach: its rows (8 values) fit no group, so all stay F16.
  expect_failure(gguf(), out, "--target-bpw 4", {"--target-bpw 4", "smallest", "16.1"});
}

TEST_F(QuantizeCli, EvalWithMissingTextFailsBeforeConverting) {
  const fs::path out = dir_ / "eval.gguf";
  const std::string text = (dir_ / "no_such_text.txt").string();
  expect_failure(gguf(), out, "--type q8_0 --eval '" + text + "'", {"--eval", text, "cannot open"});
  // Empty text: also refused up front.
  const fs::path empty = dir_ / "empty.txt";
  { std::ofstream(empty.string()); }
  expect_failure(gguf(), out, "--type q8_0 --eval '" + empty.string() + "'", {"--eval", empty.string(), "empty"});
}

TEST_F(QuantizeCli, EvalReportIsWispPplsAndTheTemporarySourceIsRemoved) {
  // From the HF folder: --eval must first write the folder as a temporary F16 GGUF (bit-equal to
  // tiny.gguf, made the same way), score against it and remove it afterwards.
  const fs::path out = dir_ / "evaluated.gguf";
  const std::string text = WISP_SOURCE_DIR "/tests/data/declaration.txt";
  const std::string ev = " -c 16 --chunks 3 -t 1";
  const auto q = run_wisp("quantize '" + hf() + "' '" + out.string() + "' --type q8_0 --threads 1 --eval " + text +
                          " --eval-ctx 16 --eval-chunks 3");
  ASSERT_EQ(q.status, 0) << q.all();
  ASSERT_TRUE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".wisp-eval-f16"), std::string::npos) << "left behind: " << e.path();
  }
  const auto p = run_wisp("ppl -m '" + out.string() + "' -f " + text + ev + " --kl-base '" + gguf() + "'");
  ASSERT_EQ(p.status, 0) << p.all();
  EXPECT_NE(q.out.find("mean KL"), std::string::npos) << q.out;
  EXPECT_EQ(q.out, p.out);
}

}  // namespace

namespace {

TEST(QuantizeEval, RealModelReportEqualsWispPpl) {
  // A real model, so the report has a non-zero KL and agreement below 100%: the quantize --eval
  // numbers must be exactly those of `wisp ppl --kl-base SOURCE` (one shared implementation).
  const std::string model = WISP_MODELS_DIR "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!fs::exists(model)) GTEST_SKIP() << model << " not present (scripts/fetch_models)";
  const fs::path out = fs::temp_directory_path() / ("wisp_qeval_" + std::to_string(::getpid()) + ".gguf");
  const std::string text = WISP_SOURCE_DIR "/tests/data/declaration.txt";
  const auto q = run_wisp("quantize " + model + " '" + out.string() + "' --type wq3_g64 --threads 2 --eval " + text +
                          " --eval-ctx 32 --eval-chunks 2");
  ASSERT_EQ(q.status, 0) << q.all();
  const auto p = run_wisp("ppl -m '" + out.string() + "' -f " + text + " -c 32 --chunks 2 -t 2 --kl-base " + model);
  fs::remove(out);
  ASSERT_EQ(p.status, 0) << p.all();
  EXPECT_EQ(q.out, p.out);
  EXPECT_EQ(q.out.find("mean KL 0.000000"), std::string::npos) << q.out;
}

}  // namespace
