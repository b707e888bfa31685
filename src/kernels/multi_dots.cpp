#include "kernels/multi_dots.h"

namespace wisp::kernels {

namespace {

struct MultiTable {
  const MultiDot* entries = nullptr;
  std::size_t n = 0;
};

// The table of the ISA the dot kernels run on.
MultiTable table_for_running_isa() {
  MultiTable t;
  t.entries = multi_dots_for(dot_kernel_isa(), &t.n);
  return t;
}

}  // namespace

const MultiDot* multi_dots_for(Isa isa, std::size_t* n) {
  *n = 0;
  if (!isa_supported(isa, detect_cpu_features())) return nullptr;
#if defined(__x86_64__) || defined(__i386__)
  if (isa == Isa::kAvx512) return avx512_multi_dots(n);
  if (isa == Isa::kAvx2) return avx2_multi_dots(n);
#endif
  return nullptr;
}

const MultiDot* find_multi_dot(const DotKernel& k, DotFn single) {
  static const MultiTable table = table_for_running_isa();  // fixed for the process, like the ISA
  // Every implementation of a (type, slot) computes the same bits (the scalar reference's), so a
  // variant can stand in for whichever implementation the slot holds.
  if (single == nullptr) return nullptr;
  DotSlot slot;
  if (single == k.dot) {
    slot = DotSlot::kDot;
  } else if (single == k.dot_batched) {
    slot = DotSlot::kBatched;
  } else if (single == k.dot_repacked) {
    slot = DotSlot::kRepacked;
  } else if (single == k.dot_repacked_x4) {
    slot = DotSlot::kRepackedX4;
  } else if (single == k.dot_invariant) {
    slot = DotSlot::kInvariant;
  } else {
    return nullptr;
  }
  for (std::size_t i = 0; i < table.n; ++i) {
    const MultiDot& m = table.entries[i];
    if (m.weight_type == k.weight_type && m.slot == slot) return &m;
  }
  return nullptr;
}

}  // namespace wisp::kernels
