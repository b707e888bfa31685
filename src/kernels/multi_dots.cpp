#include "kernels/multi_dots.h"

#include "kernels/kernel_set.h"

namespace wisp::kernels {

const MultiDot* multi_dots_for(Isa isa, std::size_t* n) {
  const KernelSet* k = kernel_set_for(isa);
  *n = k != nullptr ? k->multi_dots.size() : 0;
  return k != nullptr ? k->multi_dots.data() : nullptr;
}

const MultiDot* find_multi_dot(const DotKernel& k, DotFn single) {
  const std::span<const MultiDot> table = kernel_set().multi_dots;  // fixed for the process, like the ISA
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
  for (const MultiDot& m : table) {
    if (m.weight_type == k.weight_type && m.slot == slot) return &m;
  }
  return nullptr;
}

}  // namespace wisp::kernels
