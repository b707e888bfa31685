#include "engine/backend_choice.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <thread>
#include <string>

#include "model/cpu_backend.h"
#include "wisp/error.h"
#if defined(WISP_HAVE_CUDA)
#include "cuda/cuda_backend.h"
#endif

namespace wisp::detail {

namespace {

BackendChoice cpu(const EngineOptions& opts) {
  const auto order = opts.exact ? kernels::DotOrder::kGgml : kernels::DotOrder::kBatchInvariant;
  return {model::make_cpu_backend(opts.n_threads, order), "cpu"};
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
