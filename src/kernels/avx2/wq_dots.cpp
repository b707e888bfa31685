// The avx2 WQ dots: the x86 bodies (src/kernels/x86/wq_dots.h) compiled with this ISA's flags (set
// per file in CMakeLists.txt), exported as a table for dot_wq.cpp.
#include "kernels/isa_wq_dots.h"
#include "kernels/x86/wq_dots.h"

namespace wisp::kernels {

const IsaDots* avx2_wq_dots(std::size_t* n) {
  using x86::dot_wq;
#define WISP_WQ(b, g) {wq_type_id(b, g), dot_wq<b, g>, nullptr, nullptr, nullptr}
  static constexpr IsaDots kDots[] = {
      WISP_WQ(2, 32), WISP_WQ(2, 64), WISP_WQ(2, 128), WISP_WQ(3, 32), WISP_WQ(3, 64), WISP_WQ(3, 128),
      WISP_WQ(4, 32), WISP_WQ(4, 64), WISP_WQ(4, 128), WISP_WQ(5, 32), WISP_WQ(5, 64), WISP_WQ(5, 128),
      WISP_WQ(6, 32), WISP_WQ(6, 64), WISP_WQ(6, 128), WISP_WQ(8, 32), WISP_WQ(8, 64), WISP_WQ(8, 128),
  };
#undef WISP_WQ
  *n = sizeof kDots / sizeof kDots[0];
  return kDots;
}

}  // namespace wisp::kernels
