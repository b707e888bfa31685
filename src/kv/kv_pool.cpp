#include "kv/kv_pool.h"

#include <algorithm>
#include <string>

#include "kv/host_kv_storage.h"
#include "kv/kv_quant.h"
#include "wisp/error.h"

namespace wisp {

namespace {

std::unique_ptr<KvStorage> checked(std::unique_ptr<KvStorage> storage) {
  if (!storage) throw Error("KV pool: no storage given");
  storage->layout().validate();
  return storage;
}

}  // namespace

KvPool::KvPool(const KvLayout& layout, std::uint32_t n_blocks, bool resident)
    : KvPool(std::make_unique<HostKvStorage>(layout, n_blocks, resident)) {}

KvPool::KvPool(std::unique_ptr<KvStorage> storage)
    : storage_(checked(std::move(storage))),
      alloc_(storage_->n_blocks(), storage_->layout().block_size),
      host_f32_(storage_->layout().type == KvType::kF32 && storage_->host_block(0) != nullptr) {}

bool KvPool::try_append(SeqId seq, std::size_t n_tokens) {
  Growth g;
  if (!alloc_.try_append(seq, n_tokens, g)) return false;
  if (g.copy) storage_->copy_block(*g.copy);
  return true;
}

void KvPool::append(SeqId seq, std::size_t n_tokens) {
  const Growth g = alloc_.append(seq, n_tokens);
  if (g.copy) storage_->copy_block(*g.copy);
}

void KvPool::check_f32_host() const {
  if (!host_f32_) {
    throw Error("KV pool: float access needs f32 storage in host memory (this pool holds " +
                std::string(kv_type_name(layout().type)) +
                (storage_->host_block(0) ? " in host memory)" : " in device memory)"));
  }
}

void KvPool::check_head(std::uint32_t layer, std::uint32_t head) const {
  const KvLayout& l = layout();
  if (layer >= l.n_layers || head >= l.n_kv_heads) {
    throw Error("KV pool: layer " + std::to_string(layer) + " head " + std::to_string(head) + " out of range (" +
                std::to_string(l.n_layers) + " layers, " + std::to_string(l.n_kv_heads) + " kv heads)");
  }
}

float* KvPool::plane(BlockId block, std::uint32_t layer, KvKind kind, std::uint32_t head) const {
  check_f32_host();
  return reinterpret_cast<float*>(plane_bytes(block, layer, kind, head));
}

std::byte* KvPool::plane_bytes(BlockId block, std::uint32_t layer, KvKind kind, std::uint32_t head) const {
  check_head(layer, head);
  std::byte* base = storage_->host_block(block);
  if (base == nullptr) {
    throw Error("KV pool: the " + std::string(kv_type_name(layout().type)) +
                " cache is in device memory, which the CPU cannot address");
  }
  return base + layout().row_offset(layer, kind, head, 0);
}

const std::byte* KvPool::plane_data(BlockId block, std::uint32_t layer, KvKind kind, std::uint32_t head) const {
  return plane_bytes(block, layer, kind, head);
}

float* KvPool::row(SeqId seq, std::uint32_t layer, KvKind kind, std::uint32_t head, std::size_t pos) const {
  const TokenSlot slot = alloc_.locate(seq, pos);
  return plane(slot.block, layer, kind, head) + std::size_t{slot.offset} * layout().head_dim;
}

float* KvPool::k(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos) {
  return row(seq, layer, KvKind::kKey, head, pos);
}
float* KvPool::v(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos) {
  return row(seq, layer, KvKind::kValue, head, pos);
}
const float* KvPool::k(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos) const {
  return row(seq, layer, KvKind::kKey, head, pos);
}
const float* KvPool::v(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos) const {
  return row(seq, layer, KvKind::kValue, head, pos);
}

const float* KvPool::keys(BlockId block, std::uint32_t layer, std::uint32_t head) const {
  return plane(block, layer, KvKind::kKey, head);
}
const float* KvPool::values(BlockId block, std::uint32_t layer, std::uint32_t head) const {
  return plane(block, layer, KvKind::kValue, head);
}

void KvPool::write(SeqId seq, std::uint32_t layer, std::size_t pos, std::span<const float> k_row,
                   std::span<const float> v_row) {
  const KvLayout& l = layout();
  const std::size_t width = std::size_t{l.n_kv_heads} * l.head_dim;
  if (k_row.size() != width || v_row.size() != width) {
    throw Error("KV pool: write of " + std::to_string(k_row.size()) + " K and " + std::to_string(v_row.size()) +
                " V values, expected n_kv_heads * head_dim = " + std::to_string(width) + " each");
  }
  const TokenSlot slot = alloc_.locate(seq, pos);
  if (alloc_.refcount(slot.block) != 1) {
    throw Error("KV pool: position " + std::to_string(pos) + " of sequence " + std::to_string(seq) + " lies in block " +
                std::to_string(slot.block) +
                ", shared with another sequence; only "
                "positions reserved by this sequence's own append can be written");
  }
  if (alloc_.is_published(slot.block)) {
    // Held alone yet published: the prefix cache promises other prompts this block's K/V as
    // they are (publish comes after the block's last write).
    throw Error("KV pool: position " + std::to_string(pos) + " of sequence " + std::to_string(seq) + " lies in block " +
                std::to_string(slot.block) +
                ", published in the prefix cache; its K/V "
                "must not change while published");
  }
  const std::size_t row = l.row_bytes();
  for (std::uint32_t h = 0; h < l.n_kv_heads; ++h) {
    std::byte* kd = plane_bytes(slot.block, layer, KvKind::kKey, h) + slot.offset * row;
    std::byte* vd = plane_bytes(slot.block, layer, KvKind::kValue, h) + slot.offset * row;
    kv_encode_row(l.type, k_row.data() + std::size_t{h} * l.head_dim, l.head_dim, kd);
    kv_encode_row(l.type, v_row.data() + std::size_t{h} * l.head_dim, l.head_dim, vd);
  }
}

}  // namespace wisp
