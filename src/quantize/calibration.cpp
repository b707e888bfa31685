#include "quantize/calibration.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "formats/gguf_file.h"
#include "quantize/converter.h"
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

// Removes a temporary file when the scope ends (also on errors).
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty()) {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  }
};

}  // namespace

std::shared_ptr<const model::ActivationStats> calibrate(const std::string& input, const CalibOptions& opt) {
  const std::string text = read_text(opt.text_path);  // before any expensive work
  if (opt.max_tokens <= 0) throw Error("--calib-tokens must be positive");

  std::shared_ptr<const Model> m;
  std::string runnable = input;
  TempFile temp;
  if (!std::filesystem::is_directory(input)) {
    try {
      m = Model::load(input);
    } catch (const Error& e) {
      if (opt.log) std::fprintf(opt.log, "calibration: cannot run %s as it is (%s); converting to F16 first\n", input.c_str(), e.what());
    }
  }
  if (!m) {
    temp.path = (std::filesystem::path(opt.temp_dir) / (".wisp-calib-f16-" + std::to_string(::getpid()) + ".gguf")).string();
    ConvertOptions c;
    c.input = input;
    c.output = temp.path;
    c.policy.base = &block_type(GgmlType::kF16);
    c.n_threads = opt.n_threads;
    c.log = nullptr;
    if (opt.log) std::fprintf(opt.log, "calibration: writing a temporary F16 copy of %s to run it\n", input.c_str());
    convert(c);
    runnable = temp.path;
    m = Model::load(runnable);
  }

  const GgufFile file = GgufFile::open(runnable);
  const Tokenizer tok = Tokenizer::from_gguf(file);
  std::vector<TokenId> ids;
  try {
    ids = tok.tokenize(text, {.add_special = true, .parse_special = false});
  } catch (const Error& e) {
    throw Error("--calib " + opt.text_path + ": " + e.what());
  }
  if (static_cast<std::int64_t>(ids.size()) > opt.max_tokens) ids.resize(static_cast<std::size_t>(opt.max_tokens));
  if (opt.log) {
    std::fprintf(opt.log, "calibration: %zu tokens of %s through %s\n", ids.size(), opt.text_path.c_str(), runnable.c_str());
  }
  model::ActivationStatsOptions so;
  so.n_ctx = opt.n_ctx;
  so.bos = tok.vocab().add_bos ? tok.bos() : -1;
  so.n_threads = opt.n_threads;
  so.log = opt.log;
  return std::make_shared<const model::ActivationStats>(model::collect_activation_stats(m, ids, so));
}

}  // namespace wisp::quantize
