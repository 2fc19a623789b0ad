// Kernels that move compact_sampling_mask's minimal traffic and do nothing else (no finiteness
// test, no ranking): what the memory system allows any kernel that reads every logit once and
// writes the three outputs once. benchmarks/traffic_floor.py times them beside the backends.
//
// The logits are flat (R x V elements, V a multiple of 8, 16-byte aligned), so the 8 elements
// of mask byte g are 16-byte vectors kVecs * g .. kVecs * g + kVecs - 1 (kVecs = 1 for 16-bit
// dtypes, 2 for fp32) and the mask is one byte per group, in order. A byte is an XOR fold of
// its vectors: it depends on every loaded byte, so no load is dead code. Every scalar
// parameter is 64 bits wide (CuPy passes Python ints as 64-bit values).

__device__ __forceinline__ long long min_ll(long long a, long long b) { return a < b ? a : b; }

template <int kVecs>
__device__ __forceinline__ unsigned fold_byte(const uint4 (&q)[kVecs]) {
  unsigned x = 0u;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) x ^= q[i].x ^ q[i].y ^ q[i].z ^ q[i].w;
  return (x ^ (x >> 8) ^ (x >> 16) ^ (x >> 24)) & 0xFFu;
}

// ids[j] = j and counts[j] = j over the whole grid (the outputs' bytes, coalesced).
__device__ __forceinline__ void fill_outputs(int* ids, long long num_ids, int* counts,
                                             long long num_counts) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (long long j = first; j < num_ids; j += stride) ids[j] = static_cast<int>(j);
  for (long long j = first; j < num_counts; j += stride) counts[j] = static_cast<int>(j);
}

// Grid-stride stream of `groups` mask groups through registers: each thread issues kUnroll
// groups' 16-byte streaming loads before folding any (the backends' pass 1 does the same). With
// a null mask it writes one byte per thread (reads only); otherwise the mask, ids and counts.
template <int kVecs, int kUnroll>
__global__ void stream_floor(const uint4* logits, unsigned char* mask, int* ids, int* counts,
                             unsigned char* sink, long long groups, long long num_ids,
                             long long num_counts) {
  const long long step = static_cast<long long>(blockDim.x) * kUnroll;
  unsigned acc = 0u;
  for (long long g0 = blockIdx.x * step + threadIdx.x; g0 < groups; g0 += gridDim.x * step) {
    uint4 q[kUnroll][kVecs];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long g = g0 + static_cast<long long>(u) * blockDim.x;
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        q[u][i] = g < groups ? __ldcs(logits + g * kVecs + i) : make_uint4(0u, 0u, 0u, 0u);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long g = g0 + static_cast<long long>(u) * blockDim.x;
      const unsigned byte = fold_byte<kVecs>(q[u]);
      if (mask == nullptr) {
        acc ^= byte;
      } else if (g < groups) {
        mask[g] = static_cast<unsigned char>(byte);
      }
    }
  }
  if (mask == nullptr) {
    sink[static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x] =
        static_cast<unsigned char>(acc);
  } else {
    fill_outputs(ids, num_ids, counts, num_counts);
  }
}

// Warp call: streams 32-byte mask segments first, first + step, ... (< end) of a flat run of
// `groups` mask groups, kUnroll segments at a time (lane l: group 32 * segment + l), every lane
// loading its kVecs vectors of kUnroll segments before folding any, as the backends' pass 1.
template <int kVecs, int kUnroll>
__device__ __forceinline__ void stream_segments(const uint4* logits, unsigned char* mask,
                                                long long groups, long long first, long long end,
                                                long long step) {
  const long long lane = threadIdx.x & 31;
  for (long long seg = first; seg < end; seg += step) {
    uint4 q[kUnroll][kVecs];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long g = (seg + u) * 32 + lane;
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        q[u][i] = seg + u < end && g < groups ? __ldcs(logits + g * kVecs + i)
                                              : make_uint4(0u, 0u, 0u, 0u);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long g = (seg + u) * 32 + lane;
      if (seg + u < end && g < groups) mask[g] = static_cast<unsigned char>(fold_byte<kVecs>(q[u]));
    }
  }
}

// The same traffic with the backends' `fused` partition (compact.cu): blocks_per_row blocks of
// kThreads per row, the row's 32-byte mask segments cut into one contiguous range per warp
// (rounded up to whole groups of kUnroll segments); then the block writes its share of the
// row's ids and thread 0 of the row's first block its count. Beside `stream_floor` it shows
// what a static split of each row over one block's warps costs by itself, with nothing to test
// or rank. `interleave` != 0: the row's warps take its groups of kUnroll segments in turn
// instead (warp k groups k, k + warps, ...), so that a row's blocks sweep the row together, as
// the grid-stride floor's sweep the whole input.
template <int kVecs, int kUnroll, int kThreads>
__global__ void __launch_bounds__(kThreads, kThreads >= 1024 ? 1 : 1024 / kThreads)
    row_floor(const uint4* logits, unsigned char* mask, int* ids, int* counts,
              long long groups_per_row, long long width, long long blocks_per_row,
              long long interleave) {
  constexpr long long kWarps = kThreads / 32;
  const long long row = blockIdx.x / blocks_per_row;
  const long long part = blockIdx.x % blocks_per_row;
  const long long warp = part * kWarps + (threadIdx.x >> 5);
  const long long segments = (groups_per_row + 31) / 32;
  const long long ranges = blocks_per_row * kWarps;
  long long per_warp = (segments + ranges - 1) / ranges;
  per_warp = (per_warp + kUnroll - 1) / kUnroll * kUnroll;
  const long long first = interleave != 0 ? warp * kUnroll : min_ll(warp * per_warp, segments);
  const long long end = interleave != 0 ? segments : min_ll(first + per_warp, segments);
  stream_segments<kVecs, kUnroll>(logits + row * groups_per_row * kVecs,
                                  mask + row * groups_per_row, groups_per_row, first, end,
                                  interleave != 0 ? ranges * kUnroll : kUnroll);
  for (long long j = part * kThreads + threadIdx.x; j < width; j += blocks_per_row * kThreads) {
    ids[row * width + j] = static_cast<int>(j);
  }
  if (part == 0 && threadIdx.x == 0) counts[row] = static_cast<int>(row);
}

// The same traffic with rows ignored: the flat input's segments are shared by every warp of
// the grid (launched at the row floor's residency, one wave), either as one contiguous range
// per warp, the ranges equal to a segment whatever R (`interleave` == 0: the row floor's
// pattern, a warp streams its own range, without its imbalance at one wave of rows), or in
// turn, warp k taking groups k, k + warps, ... (the grid-stride floor's pattern at the row
// floor's residency). What a partition that cuts ranges across rows could reach.
template <int kVecs, int kUnroll, int kThreads>
__global__ void __launch_bounds__(kThreads, kThreads >= 1024 ? 1 : 1024 / kThreads)
    chunk_floor(const uint4* logits, unsigned char* mask, int* ids, int* counts,
                long long groups, long long num_ids, long long num_counts, long long interleave) {
  constexpr long long kWarps = kThreads / 32;
  const long long warps = gridDim.x * kWarps;
  const long long warp = blockIdx.x * kWarps + (threadIdx.x >> 5);
  const long long segments = (groups + 31) / 32;
  if (interleave != 0) {
    stream_segments<kVecs, kUnroll>(logits, mask, groups, warp * kUnroll, segments,
                                    warps * kUnroll);
  } else {
    stream_segments<kVecs, kUnroll>(logits, mask, groups, warp * segments / warps,
                                    (warp + 1) * segments / warps, kUnroll);
  }
  fill_outputs(ids, num_ids, counts, num_counts);
}

// atomicAdd(counter, 1) as `atom.add.acq_rel.gpu`: after a block barrier, one thread's arrival
// releases the block's stores, and acquires those of the blocks that arrived before it (CUDA C
// has no such atomicAdd without libcu++). On the CPU (masks' emulation) the host's atomic.
__device__ __forceinline__ unsigned arrive_acq_rel(unsigned* counter) {
#if defined(__CUDA_ARCH__)
  unsigned old;
  asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  return old;
#else
  return atomicAdd(counter, 1u);
#endif
}

// The same traffic as one-step blocks that know their row: tile t of row r is block
// r * tiles_per_row + t, kThreads x kUnroll groups of the row (the last tile shorter), so the
// hardware schedules short blocks as slots free up (the fastest floor's pattern) while every
// tile's count belongs to one row. What a row's ids cost on top depends on `handoff`:
//   0: none; each tile writes its share of the row's ids, tile 0 the count (the partition alone);
//   1: the count through a last arriver: thread 0 publishes the tile's count, fences and counts
//      itself in on the row's arrival counter; the tile that arrives last resets the counter,
//      reads the row's tile counts back from L2 and writes the row's ids and count (the sum);
//   2: as 1, every thread also fences its mask stores first, and the last arriver reads the
//      row's whole mask back from L2 (what ranking the row from its mask there would load);
//   3, 4: as 1 and 2 with no fence (`__threadfence`, a `fence.sc.gpu`): the block's barrier,
//      then thread 0's arrival as an acquire-release atomic (`atom.acq_rel.gpu`), which
//      publishes the block's stores and, for the last arriver, acquires every tile's.
// No tile waits for another, so nothing relies on co-residency. `arrivals` starts at zero and
// ends there; `tile_counts` holds R x tiles_per_row counts; `sink` a word per row (handoffs 2, 4).
template <int kVecs, int kUnroll, int kThreads>
__global__ void __launch_bounds__(kThreads)
    tile_floor(const uint4* logits, unsigned char* mask, int* ids, int* counts, int* tile_counts,
               unsigned* arrivals, unsigned* sink, long long groups_per_row, long long width,
               long long tiles_per_row, long long handoff) {
  constexpr int kWarps = kThreads / 32;
  __shared__ unsigned warp_counts[kWarps];
  __shared__ int last;
  const long long row = blockIdx.x / tiles_per_row;
  const long long tile = blockIdx.x % tiles_per_row;
  const long long first = tile * kThreads * kUnroll;
  const uint4* row_logits = logits + row * groups_per_row * kVecs;
  unsigned char* row_mask = mask + row * groups_per_row;
  uint4 q[kUnroll][kVecs];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const long long g = first + u * kThreads + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      q[u][i] = g < groups_per_row ? __ldcs(row_logits + g * kVecs + i)
                                   : make_uint4(0u, 0u, 0u, 0u);
    }
  }
  unsigned kept = 0u;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const long long g = first + u * kThreads + threadIdx.x;
    const unsigned byte = fold_byte<kVecs>(q[u]);
    if (g < groups_per_row) {
      row_mask[g] = static_cast<unsigned char>(byte);
      kept += __popc(byte);
    }
  }
  if (handoff == 0) {
    for (long long j = tile * kThreads + threadIdx.x; j < width; j += tiles_per_row * kThreads) {
      ids[row * width + j] = static_cast<int>(j);
    }
    if (tile == 0 && threadIdx.x == 0) counts[row] = static_cast<int>(row);
    return;
  }
  const bool fenced = handoff <= 2;
  const bool read_mask = handoff == 2 || handoff == 4;
  if (handoff == 2) __threadfence();
  kept = __reduce_add_sync(0xFFFFFFFFu, kept);
  if ((threadIdx.x & 31) == 0) warp_counts[threadIdx.x >> 5] = kept;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned total = 0u;
    for (int w = 0; w < kWarps; ++w) total += warp_counts[w];
    tile_counts[row * tiles_per_row + tile] = static_cast<int>(total);
    if (fenced) {
      __threadfence();
      last = atomicAdd(arrivals + row, 1u) == tiles_per_row - 1;
    } else {
      last = arrive_acq_rel(arrivals + row) == tiles_per_row - 1;
    }
  }
  __syncthreads();
  if (!last) return;
  if (fenced) __threadfence();
  if (threadIdx.x == 0) arrivals[row] = 0u;  // every tile of the row has counted itself in
  unsigned total = 0u;
  for (long long t = threadIdx.x; t < tiles_per_row; t += kThreads) {
    total += static_cast<unsigned>(__ldcg(tile_counts + row * tiles_per_row + t));
  }
  total = __reduce_add_sync(0xFFFFFFFFu, total);
  if (read_mask) {
    const uint4* words = reinterpret_cast<const uint4*>(row_mask);
    unsigned folded = 0u;
    for (long long k = threadIdx.x; k < groups_per_row / 16; k += kThreads) {
      const uint4 w = __ldcg(words + k);
      folded ^= w.x ^ w.y ^ w.z ^ w.w;
    }
    if (folded == 0x9E3779B9u) sink[row] = folded;  // keeps the loads: ranking would use them
  }
  for (long long j = threadIdx.x; j < width; j += kThreads) {
    ids[row * width + j] = static_cast<int>(j);
  }
  // warp 0's sum: tiles_per_row <= 32 (the host checks)
  if (threadIdx.x == 0) counts[row] = static_cast<int>(total);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void wait_parity(unsigned barrier, unsigned parity) {
  unsigned done = 0u;
  while (done == 0u) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  }
}
#endif

// The same traffic through the copy engine of sm_90 (TMA bulk copies): the logits flow into
// a ring of kStages shared-memory stages of kStageBytes (one thread issues a stage's copy, an
// mbarrier counts its bytes in), so a block keeps kStages * kStageBytes in flight without
// registers; the block folds each stage into its mask bytes, then refills it. Each block takes
// chunks blockIdx.x, + gridDim.x, ... (dynamic shared memory: kStages * kStageBytes).
template <int kVecs, int kStageBytes, int kStages>
__global__ void bulk_floor(const uint4* logits, unsigned char* mask, int* ids, int* counts,
                           long long groups, long long num_ids, long long num_counts) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint4 stages[];
  __shared__ alignas(8) unsigned long long full[kStages];
  constexpr long long kStageGroups = kStageBytes / (16 * kVecs);
  const long long num_chunks = (groups + kStageGroups - 1) / kStageGroups;
  const long long mine =
      blockIdx.x < num_chunks ? (num_chunks - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(full + s)));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const auto issue = [&](long long k) {  // the block's k-th chunk into stage k % kStages
    const long long chunk = blockIdx.x + k * gridDim.x;
    const long long first = chunk * kStageGroups;
    const long long n = groups - first < kStageGroups ? groups - first : kStageGroups;
    const unsigned bytes = static_cast<unsigned>(n * 16 * kVecs);
    const unsigned barrier = shared_address(full + k % kStages);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier),
                 "r"(bytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"r"(shared_address(stages + k % kStages * (kStageBytes / 16))),
        "l"(logits + first * kVecs), "r"(bytes), "r"(barrier)
        : "memory");
  };
  if (threadIdx.x == 0) {
    for (long long k = 0; k < kStages && k < mine; ++k) issue(k);
  }
  for (long long k = 0; k < mine; ++k) {
    wait_parity(shared_address(full + k % kStages), static_cast<unsigned>(k / kStages) & 1u);
    const long long first = (blockIdx.x + k * gridDim.x) * kStageGroups;
    const long long n = groups - first < kStageGroups ? groups - first : kStageGroups;
    const uint4* stage = stages + k % kStages * (kStageBytes / 16);
    for (long long g = threadIdx.x; g < n; g += blockDim.x) {
      uint4 q[kVecs];
#pragma unroll
      for (int i = 0; i < kVecs; ++i) q[i] = stage[g * kVecs + i];
      mask[first + g] = static_cast<unsigned char>(fold_byte<kVecs>(q));
    }
    __syncthreads();  // the stage is consumed: refill it
    if (threadIdx.x == 0 && k + kStages < mine) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      issue(k + kStages);
    }
  }
  fill_outputs(ids, num_ids, counts, num_counts);
#endif
}
