#include "quantize/calibration.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/gguf_file.h"
#include "quantize/runnable_source.h"
#include "tokenizer/tokenizer.h"
#include "wisp/error.h"

namespace wisp::quantize {

namespace {

std::string read_text(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw Error("--calib " + path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("--calib " + path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty()) throw Error("--calib " + path + ": the file is empty");
  return ss.str();
}

}  // namespace

std::vector<std::int32_t> calibration_tokens(const std::string& runnable_gguf, const CalibOptions& opt,
                                             std::int32_t* bos) {
  const std::string text = read_text(opt.text_path);
  if (opt.max_tokens <= 0) throw Error("--calib-tokens must be positive");
  const GgufFile file = GgufFile::open(runnable_gguf);
  const Tokenizer tok = Tokenizer::from_gguf(file);
  std::vector<TokenId> ids;
  try {
    ids = tok.tokenize(text, {.add_special = true, .parse_special = false});
  } catch (const Error& e) {
    throw Error("--calib " + opt.text_path + ": " + e.what());
  }
  if (static_cast<std::int64_t>(ids.size()) > opt.max_tokens) ids.resize(static_cast<std::size_t>(opt.max_tokens));
  if (bos != nullptr) *bos = tok.vocab().add_bos ? tok.bos() : -1;
  return std::vector<std::int32_t>(ids.begin(), ids.end());
}

std::shared_ptr<const model::ActivationStats> calibrate(const std::string& input, const CalibOptions& opt) {
  read_text(opt.text_path);  // before any expensive work
  if (opt.max_tokens <= 0) throw Error("--calib-tokens must be positive");

  const RunnableSource source(input, opt.temp_dir, "calib", opt.n_threads, opt.log);
  const std::string& runnable = source.path();
  const std::shared_ptr<const Model> m = Model::load(runnable);
  std::int32_t bos = -1;
  const std::vector<std::int32_t> ids = calibration_tokens(runnable, opt, &bos);
  if (opt.log) {
    std::fprintf(opt.log, "calibration: %zu tokens of %s through %s\n", ids.size(), opt.text_path.c_str(),
                 runnable.c_str());
  }
  model::ActivationStatsOptions so;
  so.n_ctx = opt.n_ctx;
  so.bos = bos;
  so.n_threads = opt.n_threads;
  so.log = opt.log;
  if (opt.keep_all_rows) so.max_sample_rows = static_cast<std::int64_t>(ids.size());
  return std::make_shared<const model::ActivationStats>(model::collect_activation_stats(m, ids, so));
}

}  // namespace wisp::quantize
