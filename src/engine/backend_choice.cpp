#include "engine/backend_choice.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <thread>
#include <string>

#include "core/cpu_features.h"
#include "model/cpu_backend.h"
#include "wisp/error.h"
#if defined(WISP_HAVE_CUDA)
#include "cuda/cuda_backend.h"
#endif

namespace wisp::detail {

namespace {

BackendChoice cpu(const EngineOptions& opts) {
  const auto order = opts.exact ? kernels::DotOrder::kGgml : kernels::DotOrder::kBatchInvariant;
  // The default numerics keep the AVX-512 build's element-wise kernels on every host (they are
  // batch-invariant as they are); only --exact follows the host's build.
  const auto isa = opts.exact ? exact_simd(opts) : kernels::ggml::Simd::kAvx512;
  return {model::make_cpu_backend(opts.n_threads, order, isa), "cpu"};
}

// -1 for "cuda" (the first device), N for "cuda:N"; throws for anything else that starts with "cuda".
int cuda_index(const std::string& name) {
  if (name == "cuda") return -1;
  int n = -1;
  const char* first = name.data() + 5;
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(first, last, n);
  if (name.rfind("cuda:", 0) != 0 || ec != std::errc() || end != last || n < 0) {
    throw Error("device '" + name + "': expected cpu, cuda, cuda:N or auto");
  }
  return n;
}

}  // namespace

kernels::ggml::Simd exact_simd(const EngineOptions& opts) {
  const std::string& name = opts.exact_isa;
  if (name == "avx512") return kernels::ggml::Simd::kAvx512;
  if (name == "avx2") return kernels::ggml::Simd::kAvx2;
  if (!name.empty() && name != "auto") throw Error("exact_isa '" + name + "': expected auto, avx512 or avx2");
  // ggml's native x86 build takes its AVX-512 paths where the compiler targets AVX-512F.
  return detect_cpu_features().avx512f ? kernels::ggml::Simd::kAvx512 : kernels::ggml::Simd::kAvx2;
}

BackendChoice choose_backend(const ModelState& model, const EngineOptions& opts, std::size_t reserve_bytes) {
  const std::string& name = opts.device;
  if (name == "cpu") return cpu(opts);
  const bool automatic = name.empty() || name == "auto";
  if (!automatic && name.rfind("cuda", 0) != 0)
    throw Error("device '" + name + "': expected cpu, cuda, cuda:N or auto");
  const int wanted = automatic ? -1 : cuda_index(name);
#if defined(WISP_HAVE_CUDA)
  std::string why;
  const std::vector<cuda::DeviceInfo> devices = cuda::list_devices(&why);
  if (devices.empty()) {
    if (automatic) return cpu(opts);
    throw Error("device '" + name + "': " + why);
  }
  if (opts.exact) {
    if (automatic) return cpu(opts);
    throw Error("device '" + name + "': --exact (llama.cpp's float orders) runs on the CPU only; use --device cpu");
  }
  const int index = wanted < 0 ? devices.front().index : wanted;
  if (index >= static_cast<int>(devices.size())) {
    throw Error("device '" + name + "': this machine has " + std::to_string(devices.size()) +
                " CUDA device(s), numbered from 0");
  }
  return {cuda::make_cuda_backend(model, index, reserve_bytes),
          "cuda:" + std::to_string(index) + " (" + devices[static_cast<std::size_t>(index)].name + ")"};
#else
  (void)wanted;
  (void)model;
  (void)reserve_bytes;
  if (automatic) return cpu(opts);
  throw Error("device '" + name + "': this wisp was built without CUDA (configure with -DWISP_CUDA=ON)");
#endif
}

std::string device_report() {
  std::string out = "cpu: " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " hardware threads\n";
#if defined(WISP_HAVE_CUDA)
  std::string why;
  const std::vector<cuda::DeviceInfo> devices = cuda::list_devices(&why);
  if (devices.empty()) out += "cuda: none (" + why + ")\n";
  for (const cuda::DeviceInfo& d : devices) {
    char line[256];
    std::snprintf(line, sizeof line, "cuda:%d: %s, compute %d.%d, %.1f GiB (%.1f GiB free)\n", d.index, d.name.c_str(),
                  d.cc_major, d.cc_minor, d.total_bytes / 1073741824.0, d.free_bytes / 1073741824.0);
    out += line;
  }
#else
  out += "cuda: none (this wisp was built without CUDA; configure with -DWISP_CUDA=ON)\n";
#endif
  return out;
}

}  // namespace wisp::detail
