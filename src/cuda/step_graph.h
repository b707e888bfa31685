// The CUDA backend's launches of one step, recorded and then issued together, so a decode step
// (a few rows, dozens of small kernels per layer) becomes one CUDA graph launch.
//
// The backend does not launch a kernel when the model calls an op: it records the launch (a
// function of the stream) and its key (every argument that decides what the kernel does: device
// pointers, sizes, parameters). Host data a kernel reads (token ids, positions, block tables, rope
// tables, row indices) is staged into one pinned host arena and read by the kernels from its
// device twin at the same offset. At the end of the step (flush: the backend needs a result, or
// something outside the recorded launches touches device memory) the arena goes to the device in
// one copy, then:
//   - a step whose largest op has at most kGraphMaxRows rows replays the graph captured for its
//     key sequence (the copy is the graph's first node, so the new step's data is what it reads);
//     a key seen for the second time is captured (stream capture), kept and launched, one seen
//     for the first time runs launch by launch;
//   - other steps (prefill) and every step with graphs off run their launches one by one.
// The same kernels with the same arguments run either way, so logits do not depend on whether a
// step was graphed. WISP_CUDA_GRAPHS=0 turns graphs off (for timing and bisecting).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace wisp::cuda {

// A step with more rows than this in any op is not graphed: its key never repeats (prefill
// chunks vary in length) and launch overhead is small beside its work.
inline constexpr std::int64_t kGraphMaxRows = 64;

// The values that decide what a launch does, as 64-bit words.
class LaunchKey {
 public:
  template <class T>
  LaunchKey& operator<<(const T& v) {
    if constexpr (std::is_pointer_v<T>) {
      words_.push_back(reinterpret_cast<std::uintptr_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      const double d = v;
      std::uint64_t w;
      std::memcpy(&w, &d, sizeof w);
      words_.push_back(w);
    } else {
      static_assert(std::is_integral_v<T> || std::is_enum_v<T>, "a launch key holds scalars and pointers");
      words_.push_back(static_cast<std::uint64_t>(v));
    }
    return *this;
  }
  const std::vector<std::uint64_t>& words() const { return words_; }

 private:
  std::vector<std::uint64_t> words_;
};

class StepGraph {
 public:
  using Launch = std::function<void(cudaStream_t)>;

  explicit StepGraph(bool graphs);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  bool graphs() const { return graphs_; }
  // The stream every recorded launch runs on (blocking: the legacy stream's copies wait for it).
  cudaStream_t stream() const { return stream_; }

  // Copies `bytes` of host data into this step's arena; returns where the step's kernels read it.
  // The pointer is valid for launches recorded in the same segment (see segment()).
  const void* stage(const void* host, std::size_t bytes, const char* what);
  // Makes sure `bytes` more (one array, or several staged for one launch: add kStageSlack per
  // array) fit in the arena without a flush in between, flushing and growing it first if not.
  void make_room(std::size_t bytes);
  static constexpr std::size_t kStageSlack = 256;
  // Records a launch that touches `rows` rows.
  void record(const LaunchKey& key, std::int64_t rows, Launch fn);
  // Issues everything recorded (a graph or one by one) and starts a new segment; returns at once
  // (the work is queued on stream()).
  void flush();
  // Drops what is recorded without running it (the backend is going away).
  void discard();
  // Counts flushes: staged pointers from an earlier segment are stale.
  std::uint64_t segment() const { return segment_; }

  // How many flushes replayed a graph, captured one, or ran op by op (for the tests and bench).
  struct Counts {
    std::uint64_t replayed = 0, captured = 0, eager = 0;
  };
  const Counts& counts() const { return counts_; }

 private:
  void grow_arena(std::size_t bytes);
  void clear_graphs();
  void run_eager();
  cudaGraphExec_t capture();
  std::uint64_t key_hash() const;

  bool graphs_;
  cudaStream_t stream_ = nullptr;
  std::byte* host_ = nullptr;  // pinned
  std::byte* dev_ = nullptr;
  std::size_t cap_ = 0, used_ = 0;
  cudaEvent_t arena_free_ = nullptr;  // recorded after the last copy out of the host arena
  bool arena_busy_ = false;

  std::vector<Launch> launches_;
  std::vector<std::uint64_t> key_;
  std::int64_t max_rows_ = 0;
  std::uint64_t segment_ = 0;
  std::map<std::vector<std::uint64_t>, cudaGraphExec_t> execs_;
  std::unordered_set<std::uint64_t> seen_;  // keys flushed once (hashes)
  Counts counts_;
};

}  // namespace wisp::cuda
