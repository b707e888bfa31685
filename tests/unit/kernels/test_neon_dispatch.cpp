// Which NEON path runs: the detection (HWCAP), the run-time choice and WISP_ISA. On AArch64 the
// suite is cross-built and run under qemu-aarch64 (tests/arm/) once on a CPU with the dot-product
// extension and once on one without; WISP_EXPECT_DOTPROD tells the test which, so a detection
// that silently fails (and leaves the SDOT kernels untested) is caught. On x86-64 it checks that
// the NEON paths are never offered.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/cpu_features.h"
#include "formats/block_types.h"
#include "kernels/dot.h"

namespace wisp {
namespace {

constexpr auto kQ4_0 = static_cast<std::uint32_t>(GgmlType::kQ4_0);

#if defined(__aarch64__)

TEST(NeonDispatch, DetectsTheCpuAndPicksTheBestNeonPath) {
  const CpuFeatures f = detect_cpu_features();
  EXPECT_TRUE(f.neon);
  if (const char* want = std::getenv("WISP_EXPECT_DOTPROD")) {
    EXPECT_EQ(f.dotprod, std::strcmp(want, "1") == 0) << "WISP_EXPECT_DOTPROD=" << want;
  }
  const Isa best = f.dotprod ? Isa::kNeonDotprod : Isa::kNeon;
  EXPECT_EQ(best_isa(f), best);
  EXPECT_FALSE(isa_supported(Isa::kAvx2, f));
  EXPECT_FALSE(isa_supported(Isa::kAvx512, f));
  EXPECT_EQ(isa_supported(Isa::kNeonDotprod, f), f.dotprod);

  if (std::getenv("WISP_ISA") == nullptr) {
    EXPECT_EQ(kernels::dot_kernel_isa(), best);
  }
  const kernels::DotKernel* k = kernels::find_dot_kernel_for(kQ4_0, best);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->isa, isa_name(best));
  const kernels::DotKernel* plain = kernels::find_dot_kernel_for(kQ4_0, Isa::kNeon);
  ASSERT_NE(plain, nullptr);
  EXPECT_NE(plain->dot, kernels::find_scalar_dot_kernel(kQ4_0)->dot);
  if (f.dotprod) {
    // Two builds of the same kernels: distinct functions, or the SDOT path is not what runs.
    EXPECT_NE(k->dot, plain->dot);
  } else {
    EXPECT_EQ(kernels::find_dot_kernel_for(kQ4_0, Isa::kNeonDotprod), nullptr);
  }
}

TEST(NeonDispatch, WispIsaForcesAPath) {
  const char* old = std::getenv("WISP_ISA");
  const std::string saved = old != nullptr ? old : "";
  ASSERT_EQ(setenv("WISP_ISA", "neon", 1), 0);
  EXPECT_EQ(selected_isa(), Isa::kNeon);
  ASSERT_EQ(setenv("WISP_ISA", "scalar", 1), 0);
  EXPECT_EQ(selected_isa(), Isa::kScalar);
  ASSERT_EQ(setenv("WISP_ISA", "avx2", 1), 0);  // not on this CPU: the best one it has
  EXPECT_EQ(selected_isa(), best_isa(detect_cpu_features()));
  if (old != nullptr) {
    setenv("WISP_ISA", saved.c_str(), 1);
  } else {
    unsetenv("WISP_ISA");
  }
}

#else

TEST(NeonDispatch, NeonPathsAreNeverOfferedOffArm) {
  const CpuFeatures f = detect_cpu_features();
  EXPECT_FALSE(f.neon);
  EXPECT_FALSE(isa_supported(Isa::kNeon, f));
  EXPECT_FALSE(isa_supported(Isa::kNeonDotprod, f));
  EXPECT_NE(best_isa(f), Isa::kNeon);
  EXPECT_EQ(kernels::find_dot_kernel_for(kQ4_0, Isa::kNeon), nullptr);
  EXPECT_EQ(kernels::find_dot_kernel_for(kQ4_0, Isa::kNeonDotprod), nullptr);
}

#endif

}  // namespace
}  // namespace wisp
