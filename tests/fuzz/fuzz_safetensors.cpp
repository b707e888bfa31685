// libFuzzer target for the safetensors reader: any input either parses or throws wisp::Error.
// A parsed file must keep its promises: every tensor view lies inside the input, the views tile
// the data region in order, and sizes agree with shape x dtype. A broken promise traps, so the
// fuzzer reports it as a crash; so does any exception other than wisp::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/safetensors_file.h"
#include "wisp/error.h"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    wisp::SafetensorsFile f = wisp::SafetensorsFile::parse({data, size}, "fuzz.safetensors");
    std::uint64_t cursor = f.data_offset();
    unsigned sum = 0;
    for (const wisp::SafetensorsTensor& t : f.tensors()) {
      require(t.file_offset == cursor && t.data == data + t.file_offset);
      require(t.file_offset + t.n_bytes() <= size);
      const auto& info = wisp::safetensors_dtype_info(t.dtype);
      require(static_cast<std::uint64_t>(t.n_elements) * info.bits == t.n_bytes() * 8);
      for (std::uint8_t b : t.bytes()) sum += b;  // ASan checks every byte of the view
      require(f.find_tensor(t.name) == &t);
      (void)t.shape_string();
      try {
        (void)f.ggml_type(t);
      } catch (const wisp::Error&) {
        // Expected for dtypes wisp does not load as weights.
      }
      cursor += t.n_bytes();
    }
    require(cursor == size);
    for (const auto& [key, value] : f.metadata()) sum += static_cast<unsigned>(key.size() + value.size());
    volatile unsigned sink = sum;  // keep the reads
    (void)sink;
  } catch (const wisp::Error&) {
    // Expected for malformed input.
  }
  return 0;
}
