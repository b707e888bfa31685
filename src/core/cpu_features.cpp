#include "core/cpu_features.h"

#include <cstdio>
#include <cstdlib>

namespace wisp {

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  // GCC/Clang's builtins read cpuid and check XCR0, so a feature the OS does not save (AVX-512
  // state in some VMs) reads as absent.
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.f16c = __builtin_cpu_supports("f16c");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
#endif
  return f;
}

bool isa_supported(Isa isa, const CpuFeatures& f) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512:
      return isa_supported(Isa::kAvx2, f) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni;
  }
  return false;
}

Isa best_isa(const CpuFeatures& f) {
  if (isa_supported(Isa::kAvx512, f)) return Isa::kAvx512;
  if (isa_supported(Isa::kAvx2, f)) return Isa::kAvx2;
  return Isa::kScalar;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

std::optional<Isa> parse_isa(std::string_view name) {
  if (name == "scalar") return Isa::kScalar;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  return std::nullopt;
}

Isa selected_isa() {
  const CpuFeatures f = detect_cpu_features();
  const char* env = std::getenv("WISP_ISA");
  if (env != nullptr && *env != '\0') {
    const std::optional<Isa> want = parse_isa(env);
    if (want && isa_supported(*want, f)) return *want;
    std::fprintf(stderr, "wisp: WISP_ISA=%s is %s; using %s\n", env, want ? "not supported by this CPU" : "unknown",
                 isa_name(best_isa(f)));
  }
  return best_isa(f);
}

}  // namespace wisp
