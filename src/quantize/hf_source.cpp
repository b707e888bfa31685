// A Hugging Face checkpoint folder as a conversion source (not yet implemented).
#include "quantize/source.h"
#include "wisp/error.h"

namespace wisp::quantize {

std::unique_ptr<Source> open_hf_source(const std::string& dir) {
  throw Error(dir + ": reading a Hugging Face folder is not implemented yet; convert it with llama.cpp's converter to F16 GGUF");
}

}  // namespace wisp::quantize
