#include "quantize/runnable_source.h"

#include <unistd.h>

#include <filesystem>

#include "formats/block_types.h"
#include "quantize/converter.h"
#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp::quantize {

RunnableSource::RunnableSource(const std::string& input, const std::string& dir, const std::string& tag, int n_threads,
                               std::FILE* log) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(input)) {
    try {
      Model::load(input);  // mapped and checked, then released: the caller loads it when it runs it
      path_ = input;
      return;
    } catch (const Error& e) {
      if (log) std::fprintf(log, "%s: cannot run %s as it is (%s)\n", tag.c_str(), input.c_str(), e.what());
    }
  }
  temp_ = (fs::path(dir) / (".wisp-" + tag + "-f16-" + std::to_string(::getpid()) + ".gguf")).string();
  if (log) std::fprintf(log, "%s: writing a temporary F16 copy of %s to run it\n", tag.c_str(), input.c_str());
  ConvertOptions c;
  c.input = input;
  c.output = temp_;
  c.policy.base = &block_type(GgmlType::kF16);
  c.n_threads = n_threads;
  c.log = nullptr;
  convert(c);  // writes through a temporary name and renames: a failure leaves nothing at temp_
  path_ = temp_;
}

RunnableSource::~RunnableSource() {
  if (!temp_.empty()) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

}  // namespace wisp::quantize
