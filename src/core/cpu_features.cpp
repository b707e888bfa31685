#include "core/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include <cstdio>
#include <cstdlib>

namespace wisp {

namespace {

CpuFeatures read_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  // GCC/Clang's builtins read cpuid and check XCR0, so a feature the OS does not save (AVX-512
  // state in some VMs) reads as absent.
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  // clang 14's builtin does not know "f16c": read CPUID leaf 1, ECX bit 29. F16C uses the AVX
  // register state, which the avx2 check above already found the OS saves.
  unsigned a = 0, b = 0, c = 0, d = 0;
  f.f16c = f.avx2 && __get_cpuid(1, &a, &b, &c, &d) != 0 && ((c >> 29) & 1u) != 0;
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
#endif
#if defined(__aarch64__)
  // Advanced SIMD is part of the AArch64 base architecture; the dot-product extension is
  // optional and reported by the kernel in AT_HWCAP (bit values from the kernel's uapi hwcap.h,
  // spelled out for C libraries whose headers predate them).
  f.neon = true;
#if defined(__linux__)
  constexpr unsigned long kHwcapAsimdDp = 1ul << 20;  // HWCAP_ASIMDDP
  f.dotprod = (getauxval(AT_HWCAP) & kHwcapAsimdDp) != 0;
#endif
#endif
  return f;
}

}  // namespace

// The features cannot change while the process runs; the dot-kernel lookup asks on every matmul,
// so they are read once.
CpuFeatures detect_cpu_features() {
  static const CpuFeatures features = read_cpu_features();
  return features;
}

bool isa_supported(Isa isa, const CpuFeatures& f) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512: return isa_supported(Isa::kAvx2, f) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni;
    case Isa::kNeon: return f.neon;
    case Isa::kNeonDotprod: return f.neon && f.dotprod;
  }
  return false;
}

Isa best_isa(const CpuFeatures& f) {
  if (isa_supported(Isa::kAvx512, f)) return Isa::kAvx512;
  if (isa_supported(Isa::kAvx2, f)) return Isa::kAvx2;
  if (isa_supported(Isa::kNeonDotprod, f)) return Isa::kNeonDotprod;
  if (isa_supported(Isa::kNeon, f)) return Isa::kNeon;
  return Isa::kScalar;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
    case Isa::kNeonDotprod: return "neon-dotprod";
  }
  return "?";
}

std::optional<Isa> parse_isa(std::string_view name) {
  if (name == "scalar") return Isa::kScalar;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  if (name == "neon") return Isa::kNeon;
  if (name == "neon-dotprod") return Isa::kNeonDotprod;
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
