#include "cuda/step_graph.h"

#include <algorithm>

#include "cuda/cuda_check.h"

namespace wisp::cuda {

namespace {

constexpr std::size_t kAlign = 256;  // each staged array starts on its own 256-byte line
constexpr std::size_t kFirstArena = std::size_t{1} << 20;
constexpr std::size_t kMaxGraphs = 16;  // decode shapes kept at once (batch sizes, attention spans)

std::size_t align_up(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

}  // namespace

StepGraph::StepGraph(bool graphs) : graphs_(graphs) {
  check(cudaStreamCreate(&stream_), "creating the backend's stream");
  check(cudaEventCreateWithFlags(&arena_free_, cudaEventDisableTiming), "creating an event");
  grow_arena(kFirstArena);
}

StepGraph::~StepGraph() {
  discard();
  cudaStreamSynchronize(stream_);
  clear_graphs();
  cudaFreeHost(host_);
  cudaFree(dev_);
  cudaEventDestroy(arena_free_);
  cudaStreamDestroy(stream_);
}

void StepGraph::grow_arena(std::size_t bytes) {
  // Only between segments: nothing recorded points into the old arena any more, but the queued
  // work (and every kept graph) still may.
  check(cudaStreamSynchronize(stream_), "finishing the step before growing the staging arena");
  clear_graphs();
  cudaFreeHost(host_);
  cudaFree(dev_);
  host_ = nullptr;
  dev_ = nullptr;
  cap_ = 0;
  check(cudaMallocHost(&host_, bytes), ("allocating " + mib(bytes) + " of pinned staging memory").c_str());
  check(cudaMalloc(&dev_, bytes), ("allocating " + mib(bytes) + " of device staging memory").c_str());
  cap_ = bytes;
  arena_busy_ = false;
}

const void* StepGraph::stage(const void* host, std::size_t bytes, const char* what) {
  make_room(bytes);
  if (arena_busy_) {
    // The previous segment's copy out of the host arena has to be done before it is rewritten.
    check(cudaEventSynchronize(arena_free_), what);
    arena_busy_ = false;
  }
  const std::size_t off = align_up(used_);
  if (bytes > 0) std::memcpy(host_ + off, host, bytes);
  used_ = off + bytes;
  key_.push_back(off);
  key_.push_back(bytes);
  return dev_ + off;
}

void StepGraph::make_room(std::size_t bytes) {
  if (align_up(used_) + bytes <= cap_) return;
  flush();  // the recorded launches keep the arena they were staged in
  const std::size_t need = align_up(bytes) + kAlign;
  if (need > cap_) grow_arena(std::max(2 * cap_, need));
}

void StepGraph::record(const LaunchKey& key, std::int64_t rows, Launch fn) {
  key_.push_back(key.words().size());
  key_.insert(key_.end(), key.words().begin(), key.words().end());
  max_rows_ = std::max(max_rows_, rows);
  launches_.push_back(std::move(fn));
}

void StepGraph::discard() {
  launches_.clear();
  key_.clear();
  max_rows_ = 0;
  used_ = 0;
  ++segment_;
}

void StepGraph::clear_graphs() {
  for (auto& [key, exec] : execs_) cudaGraphExecDestroy(exec);
  execs_.clear();
}

void StepGraph::run_eager() {
  if (used_ > 0) check(cudaMemcpyAsync(dev_, host_, used_, cudaMemcpyHostToDevice, stream_), "staging step data");
  check(cudaEventRecord(arena_free_, stream_), "recording an event");
  for (const Launch& l : launches_) l(stream_);
}

cudaGraphExec_t StepGraph::capture() {
  check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "starting a graph capture");
  try {
    // The copy is the graph's first node: every replay reads the host arena as it is then.
    if (used_ > 0) check(cudaMemcpyAsync(dev_, host_, used_, cudaMemcpyHostToDevice, stream_), "staging step data");
    for (const Launch& l : launches_) l(stream_);
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream_, &g);
    if (g != nullptr) cudaGraphDestroy(g);
    throw;
  }
  cudaGraph_t g = nullptr;
  check(cudaStreamEndCapture(stream_, &g), "ending a graph capture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
  cudaGraphDestroy(g);
  check(e, "instantiating a graph");
  return exec;
}

std::uint64_t StepGraph::key_hash() const {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (std::uint64_t w : key_) h = (h ^ w) * 1099511628211ull;
  return h;
}

void StepGraph::flush() {
  if (launches_.empty()) {
    discard();
    return;
  }
  struct Reset {  // whatever happens, the next segment starts empty
    StepGraph* g;
    ~Reset() {
      g->launches_.clear();
      g->key_.clear();
      g->max_rows_ = 0;
      g->used_ = 0;
      ++g->segment_;
    }
  } reset{this};
  bool graphed = false;
  if (graphs_ && max_rows_ <= kGraphMaxRows) {
    key_.push_back(used_);
    auto it = execs_.find(key_);
    // A key is captured the second time it comes: a one-off (a MoE step's expert mix, the last
    // step of a shape) would cost a capture and never be replayed.
    if (it == execs_.end() && seen_.insert(key_hash()).second) {
      if (seen_.size() > 4096) seen_.clear();
    } else if (it == execs_.end()) {
      if (execs_.size() >= kMaxGraphs) {
        check(cudaStreamSynchronize(stream_), "finishing a step");
        clear_graphs();
      }
      it = execs_.emplace(key_, capture()).first;
      ++counts_.captured;
      graphed = true;
    } else {
      ++counts_.replayed;
      graphed = true;
    }
    if (graphed) {
      check(cudaGraphLaunch(it->second, stream_), "launching a step's graph");
      check(cudaEventRecord(arena_free_, stream_), "recording an event");
    }
  }
  if (!graphed) {
    run_eager();
    ++counts_.eager;
  }
  arena_busy_ = true;
}

}  // namespace wisp::cuda
