// An owning handle to one sequence of a KvPool: the sequence's blocks go back to the pool when the
// handle is destroyed, so a session or request that ends (or throws) cannot leak cache blocks.
// The pool must outlive its handles.
#pragma once

#include <cstddef>

#include "kv/kv_pool.h"

namespace wisp {

class KvSequence {
 public:
  // Creates a new, empty sequence in `pool`.
  explicit KvSequence(KvPool& pool) : pool_(&pool), id_(pool.create_sequence()) {}
  ~KvSequence() { reset(); }
  KvSequence(KvSequence&& other) noexcept : pool_(other.pool_), id_(other.id_) { other.pool_ = nullptr; }
  KvSequence& operator=(KvSequence&& other) noexcept {
    if (this != &other) {
      reset();
      pool_ = other.pool_;
      id_ = other.id_;
      other.pool_ = nullptr;
    }
    return *this;
  }
  KvSequence(const KvSequence&) = delete;
  KvSequence& operator=(const KvSequence&) = delete;

  // A new handle whose sequence shares this one's blocks (prefix sharing, copy-on-write).
  KvSequence fork() const { return KvSequence(*pool_, pool_->fork(id_)); }

  SeqId id() const { return id_; }
  KvPool& pool() const { return *pool_; }
  std::size_t n_tokens() const { return pool_->n_tokens(id_); }
  bool valid() const { return pool_ != nullptr; }

 private:
  KvSequence(KvPool& pool, SeqId id) : pool_(&pool), id_(id) {}
  void reset() noexcept {
    // Checked, not assumed: a destructor must not throw if someone freed the id behind our back.
    if (pool_ && pool_->allocator().contains(id_)) pool_->free_sequence(id_);
    pool_ = nullptr;
  }

  KvPool* pool_;
  SeqId id_;
};

}  // namespace wisp
