// libFuzzer target for the GGUF reader: any input either parses or throws wisp::Error; every
// accessor of a parsed file (values, tensors, reference dequantize of their first blocks) must
// stay within bounds under ASan/UBSan. Any other exception or a crash is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    wisp::GgufFile f = wisp::GgufFile::parse({data, size}, "fuzz.gguf");
    for (const wisp::GgufKeyValue& kv : f.metadata()) {
      (void)kv.value.to_display_string(4);
      if (kv.value.is_array() && kv.value.array_size() > 0 && kv.value.array_type() != wisp::GgufValueType::kArray &&
          kv.value.array_type() != wisp::GgufValueType::kString) {
        (void)kv.value.array_bytes();
      }
    }
    (void)f.architecture();
    std::vector<float> out;
    for (const wisp::GgufTensor& t : f.tensors()) {
      // Dequantize up to 4 blocks of each tensor: the kernels must only read inside the view.
      std::int64_t n = std::min<std::int64_t>(t.n_elements(), 4 * t.type->block_elems);
      n -= n % t.type->block_elems;
      out.resize(static_cast<std::size_t>(n));
      t.type->dequantize(t.data, out.data(), n);
      (void)f.find_tensor(t.name);
    }
  } catch (const wisp::Error&) {
    // Expected for malformed input.
  }
  return 0;
}
