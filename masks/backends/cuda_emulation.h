// The CUDA built-ins that compact.cu uses, for compiling it unchanged as host C++: the CPU mode
// of the `cupy` backend (masks/backends/cuda_emulation.py). It proves logic, never speed.
//
// Execution model. A launch runs on a few OS threads (*workers*); each takes the next block of
// the grid and runs it to completion, so blocks run concurrently and in no fixed order, and a
// block that spins on another's flag waits for a block running on another worker. The threads
// of a block are fibers (ucontext) of its worker, each running until it reaches a barrier or a
// warp collective, in a seeded random order. So lanes do not run in lockstep: code that needs a
// __syncwarp() and lacks one reads stale values here, as it may on a GPU. Shared memory is
// thread-local storage of the worker: one copy per concurrent block, filled with 0xA5 bytes
// when a block starts (on a GPU it holds whatever was there), so a read before a write is seen.
//
// Stricter than a GPU where that is cheap, each with the block, thread and reason in the launch's
// error:
//   * every warp collective takes the full mask, and all 32 lanes of a warp must reach the same
//     kind of collective (a lane that reaches another kind, or has exited, is a deadlock);
//   * __syncthreads() waits for the block's threads that have not exited (as on Volta and later);
//   * a misaligned access (a 16-byte load off 16 bytes, a word load off 4) and an index past a
//     fixed-size array, shared memory included, fail (`-fsanitize=alignment,bounds`, whose
//     handlers are defined below); a GPU faults on the first and may corrupt memory on the second;
//   * a launch in which no block finishes for `stall_seconds` is reported as a stall (a thread
//     waiting for work that cannot finish) instead of hanging.
// Warp collectives take `unsigned` values only (the kernels' one type): another type would be
// converted silently, where CUDA's overloads keep it.

#pragma once

#include <link.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// One copy per worker, so per running block; `used` keeps the optimiser from narrowing a
// variable behind the poisoning's back.
#define __shared__ __attribute__((used)) static thread_local

struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local dim3 threadIdx, blockIdx;  // set by the worker before each switch
inline dim3 gridDim, blockDim;                 // one launch at a time

namespace masks_emulation {

constexpr int kWarpSize = 32;
constexpr size_t kStackBytes = 64 * 1024;

enum class Collective { kSyncwarp, kBallot, kShfl, kShflUp, kReduceAdd };

inline const char* collective_name(Collective op) {
  switch (op) {
    case Collective::kSyncwarp: return "__syncwarp";
    case Collective::kBallot: return "__ballot_sync";
    case Collective::kShfl: return "__shfl_sync";
    case Collective::kShflUp: return "__shfl_up_sync";
    default: return "__reduce_add_sync";
  }
}

// A barrier is released by bumping its generation; a fiber waiting on it runs again once the
// generation it saw has changed.
struct Warp {
  unsigned arrived = 0;
  unsigned generation = 0;
  Collective op = Collective::kSyncwarp;
  unsigned long long values[kWarpSize] = {};    // what each arrived lane brought
  unsigned long long released[kWarpSize] = {};  // the values of the last completed collective
};

struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack{new char[kStackBytes]};  // not zeroed: 32 MB per 512 threads
  unsigned thread = 0;
  bool done = false;
  const unsigned* waiting_on = nullptr;  // a barrier's generation, while waiting
  unsigned waiting_since = 0;
  const char* waiting_at = "";
};

using Entry = void (*)(void** params);

// One worker's block: its threads, warps and block barrier.
struct Block {
  Entry entry = nullptr;
  void** params = nullptr;
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  unsigned live = 0;
  unsigned arrived = 0;
  unsigned generation = 0;
  Fiber* current = nullptr;
  ucontext_t scheduler;
  std::string error;
};

inline thread_local Block* running = nullptr;

inline void wait_on(const unsigned* generation, const char* where) {
  Fiber& fiber = *running->current;
  fiber.waiting_on = generation;
  fiber.waiting_since = *generation;
  fiber.waiting_at = where;
  swapcontext(&fiber.context, &running->scheduler);
}

// Ends the block with an error: the fiber is never resumed (kernels hold no resources).
[[noreturn]] inline void fail(const std::string& message) {
  Fiber& fiber = *running->current;
  if (running->error.empty()) {
    running->error = "block " + std::to_string(blockIdx.x) + ", thread " +
                     std::to_string(fiber.thread) + ": " + message;
  }
  swapcontext(&fiber.context, &running->scheduler);
  __builtin_unreachable();
}

// Every lane of the calling warp brings `value` to collective `op`; returns once all 32 have,
// their values in the warp's `released`.
inline const unsigned long long* exchange(Collective op, unsigned mask, unsigned long long value) {
  if (mask != 0xFFFFFFFFu) fail(std::string(collective_name(op)) + " with a partial mask");
  const unsigned lane = threadIdx.x % kWarpSize;
  Warp& warp = running->warps[threadIdx.x / kWarpSize];
  if (warp.arrived == 0) {
    warp.op = op;
  } else if (warp.op != op) {
    fail(std::string("reached ") + collective_name(op) + " while other lanes of its warp wait at " +
         collective_name(warp.op));
  }
  warp.values[lane] = value;
  if (++warp.arrived == kWarpSize) {
    std::copy(std::begin(warp.values), std::end(warp.values), std::begin(warp.released));
    warp.arrived = 0;
    ++warp.generation;
  } else {
    wait_on(&warp.generation, collective_name(op));
  }
  return warp.released;
}

inline void release_block() {
  running->arrived = 0;
  ++running->generation;
}

inline void run_fiber() {
  running->entry(running->params);
  running->current->done = true;
  swapcontext(&running->current->context, &running->scheduler);
}

// This module's thread-local storage in the calling thread: the shared variables of every
// kernel, and the few variables of this header (set again after a poisoning).
inline std::pair<char*, size_t> thread_local_storage() {
  std::pair<char*, size_t> found{nullptr, 0};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        const auto self = reinterpret_cast<ElfW(Addr)>(&thread_local_storage);
        bool mine = false;
        const ElfW(Phdr)* tls = nullptr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          const ElfW(Addr) begin = info->dlpi_addr + header.p_vaddr;
          if (header.p_type == PT_LOAD && self >= begin && self < begin + header.p_memsz) {
            mine = true;
          }
          if (header.p_type == PT_TLS) tls = &header;
        }
        if (!mine || tls == nullptr) return 0;
        *static_cast<std::pair<char*, size_t>*>(out) = {static_cast<char*>(info->dlpi_tls_data),
                                                        tls->p_memsz};
        return 1;
      },
      &found);
  return found;
}

// "deadlock: ...; waiting: 480 at __syncthreads (first 32), 16 at __shfl_sync (first 0)".
inline std::string describe_deadlock(const Block& block) {
  std::vector<std::pair<std::string, std::pair<unsigned, unsigned>>> places;  // count, first
  for (const Fiber& fiber : block.fibers) {
    if (fiber.done) continue;
    auto place = std::find_if(places.begin(), places.end(),
                              [&](const auto& p) { return p.first == fiber.waiting_at; });
    if (place == places.end()) {
      places.push_back({fiber.waiting_at, {0u, fiber.thread}});
      place = places.end() - 1;
    }
    ++place->second.first;
  }
  std::string text = "deadlock: no thread can run; waiting:";
  for (const auto& [where, seen] : places) {
    text += " " + std::to_string(seen.first) + " at " + where + " (first " +
            std::to_string(seen.second) + "),";
  }
  text.pop_back();
  return text;
}

// Runs block `index` to completion on this worker, whose thread-local storage is `storage`;
// false (with block.error set) on an error.
inline bool run_block(Block& block, unsigned index, const std::pair<char*, size_t>& storage,
                      std::mt19937& random) {
  std::memset(storage.first, 0xA5, storage.second);
  running = &block;
  blockIdx = dim3{index, 0, 0};
  threadIdx = dim3{0, 0, 0};
  for (Fiber& fiber : block.fibers) {
    getcontext(&fiber.context);
    fiber.context.uc_stack.ss_sp = fiber.stack.get();
    fiber.context.uc_stack.ss_size = kStackBytes;
    fiber.context.uc_link = nullptr;
    makecontext(&fiber.context, run_fiber, 0);
    fiber.done = false;
    fiber.waiting_on = nullptr;
  }
  for (Warp& warp : block.warps) warp.arrived = 0;
  block.live = static_cast<unsigned>(block.fibers.size());
  block.arrived = 0;
  std::vector<unsigned> order(block.fibers.size());
  for (unsigned i = 0; i < order.size(); ++i) order[i] = i;
  while (block.live > 0) {
    bool ran = false;
    std::shuffle(order.begin(), order.end(), random);
    for (unsigned i : order) {
      Fiber& fiber = block.fibers[i];
      if (fiber.done) continue;
      if (fiber.waiting_on != nullptr) {
        if (*fiber.waiting_on == fiber.waiting_since) continue;
        fiber.waiting_on = nullptr;
      }
      block.current = &fiber;
      threadIdx.x = fiber.thread;
      swapcontext(&block.scheduler, &fiber.context);
      if (!block.error.empty()) return false;
      ran = true;
      if (fiber.done && --block.live > 0 && block.arrived == block.live) release_block();
    }
    if (!ran) {
      block.error = "block " + std::to_string(index) + ": " + describe_deadlock(block);
      return false;
    }
  }
  return true;
}

// What the workers of one launch share.
struct Grid {
  Entry entry = nullptr;
  void** params = nullptr;
  unsigned blocks = 0, threads = 0, seed = 0;
  std::atomic<unsigned> next{0};
  std::atomic<bool> failed{false};
  std::mutex lock;
  std::condition_variable changed;
  unsigned finished_blocks = 0;
  unsigned finished_workers = 0;
  std::string error;
};

inline void work(Grid& grid) {
  Block block;
  block.entry = grid.entry;
  block.params = grid.params;
  block.fibers.resize(grid.threads);
  for (unsigned t = 0; t < grid.threads; ++t) block.fibers[t].thread = t;
  block.warps.resize(grid.threads / kWarpSize);
  running = &block;  // allocates this thread's storage of the module before it is found
  const std::pair<char*, size_t> storage = thread_local_storage();
  if (storage.first == nullptr) {
    std::lock_guard<std::mutex> guard(grid.lock);
    if (grid.error.empty()) grid.error = "cannot find the emulator's thread-local storage";
    grid.failed = true;
  }
  for (unsigned index; !grid.failed && (index = grid.next++) < grid.blocks;) {
    std::mt19937 random(grid.seed + index);
    const bool ok = run_block(block, index, storage, random);
    std::lock_guard<std::mutex> guard(grid.lock);
    if (!ok && grid.error.empty()) grid.error = block.error;
    grid.failed = grid.failed || !ok;
    ++grid.finished_blocks;
    grid.changed.notify_all();
  }
  running = nullptr;
  std::lock_guard<std::mutex> guard(grid.lock);
  ++grid.finished_workers;
  grid.changed.notify_all();
}

// Runs `entry` on a grid of `blocks` x `threads` with `workers` OS threads; returns the error,
// empty on success. A launch that fails or stalls while blocks still spin leaves them running
// (they cannot be stopped): the caller must launch nothing more (cuda_emulation.py refuses to).
inline std::string run(Entry entry, void** params, unsigned blocks, unsigned threads,
                       unsigned workers, unsigned seed, unsigned stall_seconds) {
  static std::mutex one_launch;
  std::lock_guard<std::mutex> launch_guard(one_launch);
  if (threads == 0 || threads % kWarpSize != 0 || threads > 1024) {
    return "threads per block must be whole warps, at most 1024: got " + std::to_string(threads);
  }
  if (blocks == 0) return "a grid of 0 blocks (CUDA refuses the launch)";
  gridDim = dim3{blocks, 1, 1};
  blockDim = dim3{threads, 1, 1};
  workers = std::max(1u, std::min(workers, blocks));
  auto grid = std::make_shared<Grid>();
  grid->entry = entry;
  grid->params = params;
  grid->blocks = blocks;
  grid->threads = threads;
  grid->seed = seed;
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) pool.emplace_back([grid] { work(*grid); });
  std::unique_lock<std::mutex> guard(grid->lock);
  unsigned seen = grid->finished_blocks;
  while (grid->finished_workers < workers) {
    const auto limit = std::chrono::seconds(grid->failed ? 5 : stall_seconds);
    if (grid->changed.wait_for(guard, limit) == std::cv_status::timeout &&
        grid->finished_blocks == seen) {
      std::string error = grid->failed ? grid->error
                                       : "stalled: no block finished in " +
                                             std::to_string(stall_seconds) +
                                             " s (a thread waits for work that cannot finish)";
      guard.unlock();
      for (std::thread& thread : pool) thread.detach();  // `grid` lives on in their lambdas
      return error + " (blocks still running were abandoned: restart the process)";
    }
    seen = grid->finished_blocks;
  }
  guard.unlock();
  for (std::thread& thread : pool) thread.join();
  return grid->error;
}

// A kernel's parameters from a cuLaunchKernel-style array of pointers to 64-bit values.
template <class T>
T parameter(void* slot) {
  static_assert(sizeof(T) == 8, "every kernel parameter is 64 bits wide (compact.cu)");
  unsigned long long bits;
  std::memcpy(&bits, slot, sizeof bits);
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(static_cast<uintptr_t>(bits));
  } else {
    return static_cast<T>(bits);
  }
}

template <class... A, size_t... I>
void call(void (*kernel)(A...), void** params, std::index_sequence<I...>) {
  kernel(parameter<A>(params[I])...);
}

template <class F>
struct Arity;
template <class... A>
struct Arity<void (*)(A...)> : std::integral_constant<size_t, sizeof...(A)> {};

template <auto Kernel>
void entry(void** params) {
  call(Kernel, params, std::make_index_sequence<Arity<decltype(Kernel)>::value>{});
}

// The kernels a library holds, ended by an empty entry: defined after the kernels' source.
struct Kernel {
  const char* name;
  Entry entry;
};
extern const Kernel kKernels[];

}  // namespace masks_emulation

// The library's interface (everything else is hidden): a kernel's index by its name expression,
// and a launch, which returns 0, or 1 with the error's text in `error`.
extern "C" __attribute__((visibility("default"))) int masks_kernel_index(const char* name) {
  for (int i = 0; masks_emulation::kKernels[i].name != nullptr; ++i) {
    if (std::strcmp(masks_emulation::kKernels[i].name, name) == 0) return i;
  }
  return -1;
}

extern "C" __attribute__((visibility("default"))) int masks_launch(
    int kernel, unsigned blocks, unsigned threads, void** params, unsigned workers, unsigned seed,
    unsigned stall_seconds, char* error, size_t error_size) {
  std::string message;
  try {
    message = masks_emulation::run(masks_emulation::kKernels[kernel].entry, params, blocks,
                                   threads, workers, seed, stall_seconds);
  } catch (const std::exception& error) {  // no thread or memory for the launch
    message = std::string("the emulator could not launch: ") + error.what();
  }
  std::snprintf(error, error_size, "%s", message.c_str());
  return message.empty() ? 0 : 1;
}

// -fsanitize=alignment,bounds report here (hidden: each library its own), failing the launch.
extern "C" void __ubsan_handle_type_mismatch_v1_abort(void*, void* pointer) {
  masks_emulation::fail("misaligned access (address " +
                        std::to_string(reinterpret_cast<uintptr_t>(pointer) % 16) + " mod 16)");
}

extern "C" void __ubsan_handle_out_of_bounds_abort(void*, void* index) {
  masks_emulation::fail("index " + std::to_string(reinterpret_cast<uintptr_t>(index)) +
                        " past the end of a fixed-size array");
}

// ---- Built-ins -------------------------------------------------------------------------------

inline void __syncthreads() {
  masks_emulation::Block& block = *masks_emulation::running;
  if (++block.arrived == block.live) {
    masks_emulation::release_block();
  } else {
    masks_emulation::wait_on(&block.generation, "__syncthreads");
  }
}

inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) {
  masks_emulation::exchange(masks_emulation::Collective::kSyncwarp, mask, 0);
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  const unsigned long long* values =
      masks_emulation::exchange(masks_emulation::Collective::kBallot, mask, predicate != 0);
  unsigned bits = 0;
  for (int lane = 0; lane < masks_emulation::kWarpSize; ++lane) {
    bits |= static_cast<unsigned>(values[lane]) << lane;
  }
  return bits;
}

template <class T>
inline unsigned __shfl_sync(unsigned mask, T value, int source) {
  static_assert(std::is_same_v<T, unsigned>, "the emulation shuffles unsigned values only");
  return static_cast<unsigned>(
      masks_emulation::exchange(masks_emulation::Collective::kShfl, mask, value)[source & 31]);
}

template <class T>
inline unsigned __shfl_up_sync(unsigned mask, T value, unsigned delta) {
  static_assert(std::is_same_v<T, unsigned>, "the emulation shuffles unsigned values only");
  const unsigned lane = threadIdx.x % masks_emulation::kWarpSize;
  const unsigned long long* values =
      masks_emulation::exchange(masks_emulation::Collective::kShflUp, mask, value);
  return lane >= delta ? static_cast<unsigned>(values[lane - delta]) : value;
}

template <class T>
inline unsigned __reduce_add_sync(unsigned mask, T value) {
  static_assert(std::is_same_v<T, unsigned>, "the emulation adds unsigned values only");
  const unsigned long long* values =
      masks_emulation::exchange(masks_emulation::Collective::kReduceAdd, mask, value);
  unsigned sum = 0;
  for (int lane = 0; lane < masks_emulation::kWarpSize; ++lane) {
    sum += static_cast<unsigned>(values[lane]);
  }
  return sum;
}

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }

// Byte n of the result is byte (selector >> 4n) & 7 of the eight bytes y:x (x the low four).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned selector) {
  const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned result = 0;
  for (int n = 0; n < 4; ++n) {
    const unsigned which = (selector >> (4 * n)) & 7u;
    result |= static_cast<unsigned>((bytes >> (8 * which)) & 0xFFu) << (8 * n);
  }
  return result;
}

template <class T>
inline T __ldcs(const T* address) {
  if constexpr (std::is_same_v<T, uint4>) {
    if (reinterpret_cast<uintptr_t>(address) % 16 != 0) {
      masks_emulation::fail("misaligned 16-byte load");
    }
  }
  return *address;
}

// Blocks run on several OS threads: the atomics are the host's, sequentially consistent.
inline unsigned atomicAdd(unsigned* address, unsigned value) {
  return __atomic_fetch_add(address, value, __ATOMIC_SEQ_CST);
}

inline unsigned atomicExch(unsigned* address, unsigned value) {
  return __atomic_exchange_n(address, value, __ATOMIC_SEQ_CST);
}

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
