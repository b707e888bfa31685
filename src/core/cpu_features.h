// What the running CPU can execute, detected once at run time, and which kernel ISA to use.
//
// The SIMD kernels are compiled per file with their own -m flags (src/kernels/avx2/,
// src/kernels/avx512/), so a build that is not -march=native still contains every path; this
// detection decides at run time which ones may run. WISP_ISA=scalar|avx2|avx512 forces a path
// (tests, benchmarks); a forced path the CPU lacks falls back to the best one it has.
#pragma once

#include <optional>
#include <string_view>

namespace wisp {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512vnni = false;
  // AArch64 (from the kernel's HWCAP bits): Advanced SIMD, and the ARMv8.2 dot-product
  // extension (SDOT/UDOT), which most ARM laptops since ~2018 have and older cores lack.
  bool neon = false;
  bool dotprod = false;
};

// Kernel instruction sets, in increasing order of preference within an architecture (x86-64:
// scalar < avx2 < avx512; AArch64: scalar < neon < neon-dotprod).
enum class Isa { kScalar, kAvx2, kAvx512, kNeon, kNeonDotprod };

// Features of this CPU (cpuid plus the OS's register-state support).
CpuFeatures detect_cpu_features();
// Whether the CPU can run kernels built for `isa`.
bool isa_supported(Isa isa, const CpuFeatures& f);
// The best ISA the CPU supports.
Isa best_isa(const CpuFeatures& f);
const char* isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);
// The ISA kernels should use: WISP_ISA if set (and supported), else best_isa().
Isa selected_isa();

}  // namespace wisp
