// A GGUF the runtime can run for a converter input: the input itself when it loads as a model,
// else a temporary F16 copy (an HF folder, or a GGUF wisp cannot run) that is removed when the
// object goes away, also when the work using it throws. Shared by --calib and --eval, which both
// need to run the source model.
#pragma once

#include <cstdio>
#include <string>

namespace wisp::quantize {

class RunnableSource {
 public:
  // `dir`: where the temporary copy goes (the output's folder); `tag` names the caller in the log
  // and in the temporary file's name (".wisp-<tag>-f16-<pid>.gguf").
  RunnableSource(const std::string& input, const std::string& dir, const std::string& tag, int n_threads,
                 std::FILE* log);
  ~RunnableSource();
  RunnableSource(const RunnableSource&) = delete;
  RunnableSource& operator=(const RunnableSource&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_;  // the temporary copy's path, empty when none was written
};

}  // namespace wisp::quantize
