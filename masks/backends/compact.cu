// CUDA C kernels of the `cupy` backend of masks (design notes: masks/backends/cupy.py).
//
// Compiled at run time by NVRTC through CuPy (-std=c++17) and, in the tests, standalone by nvcc
// with warnings as errors; so this file includes nothing and uses only built-in CUDA types and
// intrinsics.
//
// Layout shared by every kernel: a block of kThreads threads walks a row in *segments* of
// kThreads * 8 columns; thread t owns the 8 consecutive columns 8t..8t+7 of a segment, i.e.
// exactly one byte of the packed mask (bit j = column 8t + j), so mask stores are one
// coalesced byte per thread. Kept ids are ranked with warp votes: the per-thread counts
// (popcount of the byte, <= 8) are scanned bit plane by bit plane with __ballot_sync + __popc,
// the per-warp sums through shared memory, and a thread writes ranked ids < W for its set bits.
// All address arithmetic is 64-bit.

// ---- Dtypes: logits are read as raw bits; "kept" means the exponent is not all ones. --------

template <typename B, B kExponent>
struct FloatBits {
  typedef B Bits;
  static constexpr Bits kExp = kExponent;  // exponent all ones: +-inf or NaN (not kept)
  static constexpr int kVecs = sizeof(B) / 2;  // 16-byte vectors per 8 elements
};
struct F32 : FloatBits<unsigned int, 0x7F800000u> {};
struct F16 : FloatBits<unsigned short, 0x7C00u> {};
struct BF16 : FloatBits<unsigned short, 0x7F80u> {};
struct F64 : FloatBits<unsigned long long, 0x7FF0000000000000ull> {};

__device__ __forceinline__ long long min_ll(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long max_ll(long long a, long long b) { return a > b ? a : b; }

// 32-bit word k of eight elements held as 16-byte vectors (k is a constant once unrolled).
template <int N>
__device__ __forceinline__ unsigned word32(const uint4 (&q)[N], int k) {
  const uint4 v = q[k >> 2];
  switch (k & 3) {
    case 0: return v.x;
    case 1: return v.y;
    case 2: return v.z;
    default: return v.w;
  }
}

// Kept bits of the eight elements in q: bit j set iff element j is finite.
template <class T>
__device__ __forceinline__ unsigned kept_byte(const uint4 (&q)[T::kVecs]) {
  unsigned bits = 0u;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    unsigned word, mask;
    if constexpr (sizeof(typename T::Bits) == 8) {  // high word holds the exponent
      word = word32(q, 2 * j + 1);
      mask = static_cast<unsigned>(T::kExp >> 32);
    } else if constexpr (sizeof(typename T::Bits) == 4) {
      word = word32(q, j);
      mask = T::kExp;
    } else {  // two 16-bit elements per word, element 2i in the low half
      word = word32(q, j >> 1);
      mask = static_cast<unsigned>(T::kExp) << (16 * (j & 1));
    }
    bits |= static_cast<unsigned>((word & mask) != mask) << j;
  }
  return bits;
}

// Packs eight elements into 16-byte vectors with the same layout as memory (little endian).
template <class T>
__device__ __forceinline__ void pack8(const typename T::Bits (&e)[8], uint4 (&q)[T::kVecs]) {
  unsigned w[4 * T::kVecs];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    if constexpr (sizeof(typename T::Bits) == 8) {
      w[2 * j] = static_cast<unsigned>(e[j]);
      w[2 * j + 1] = static_cast<unsigned>(e[j] >> 32);
    } else if constexpr (sizeof(typename T::Bits) == 4) {
      w[j] = e[j];
    } else if ((j & 1) == 0) {
      w[j >> 1] = static_cast<unsigned>(e[j]) | (static_cast<unsigned>(e[j + 1]) << 16);
    }
  }
#pragma unroll
  for (int i = 0; i < T::kVecs; ++i) q[i] = make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
}

// Loads the eight elements of columns col..col+7 (streaming, read once). Columns >= num_cols
// read as not kept. kVec: the row is contiguous and 16-byte aligned, so whole groups of eight
// are 16-byte vector loads; otherwise (and for the row's tail) scalar strided loads.
template <class T, bool kVec>
__device__ __forceinline__ void load8(uint4 (&q)[T::kVecs], const typename T::Bits* row,
                                      long long col, long long num_cols, long long col_stride) {
  if (kVec && col + 8 <= num_cols) {
    const uint4* vectors = reinterpret_cast<const uint4*>(row + col);
#pragma unroll
    for (int i = 0; i < T::kVecs; ++i) q[i] = __ldcs(vectors + i);
  } else {
    typename T::Bits e[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      e[j] = col + j < num_cols ? __ldcs(row + (col + j) * col_stride) : T::kExp;
    }
    pack8<T>(e, q);
  }
}

// ---- Block-wide helpers (every thread of the block must call them) ---------------------------

// Exclusive prefix sum over the block of values < 2**kPlanes, by warp votes: bit plane b of the
// lanes below contributes popc(ballot & lanes_below) << b. Sets *total to the block's sum.
// warp_sums[kThreads/32] must not be read by another call until every thread has passed a
// later barrier (callers alternate two buffers).
template <int kThreads, int kPlanes>
__device__ __forceinline__ unsigned block_exclusive_sum(unsigned value, unsigned* warp_sums,
                                                        unsigned* total) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lanes_below = (1u << lane) - 1u;
  unsigned below = 0u, warp_total = 0u;
#pragma unroll
  for (int b = 0; b < kPlanes; ++b) {
    const unsigned vote = __ballot_sync(0xFFFFFFFFu, (value >> b) & 1u);
    below += static_cast<unsigned>(__popc(vote & lanes_below)) << b;
    warp_total += static_cast<unsigned>(__popc(vote)) << b;
  }
  if (lane == 0u) warp_sums[warp] = warp_total;
  __syncthreads();
  unsigned before = 0u, sum = 0u;
#pragma unroll
  for (unsigned w = 0; w < kThreads / 32; ++w) {
    const unsigned s = warp_sums[w];
    before += w < warp ? s : 0u;
    sum += s;
  }
  *total = sum;
  return before + below;
}

// Sum over the block; warp_sums[kThreads/32] is used once per call site.
template <int kThreads>
__device__ __forceinline__ unsigned block_sum(unsigned value, unsigned* warp_sums) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  if ((threadIdx.x & 31u) == 0u) warp_sums[threadIdx.x >> 5] = value;
  __syncthreads();
  unsigned sum = 0u;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) sum += warp_sums[w];
  return sum;
}

// Writes the ids of the set bits of `bits` (column col + bit) to slots rank, rank + 1, ... < width.
__device__ __forceinline__ void emit_ids(unsigned bits, unsigned rank, long long col,
                                         unsigned width, int* row_ids) {
  while (bits != 0u && rank < width) {
    row_ids[rank] = static_cast<int>(col + __ffs(static_cast<int>(bits)) - 1);
    ++rank;
    bits &= bits - 1u;
  }
}

template <int kThreads>
__device__ __forceinline__ void fill_ids(int* row_ids, long long begin, long long end) {
  for (long long j = begin + threadIdx.x; j < end; j += kThreads) row_ids[j] = -1;
}

template <int kThreads>
__device__ __forceinline__ void zero_bytes(unsigned char* bytes, long long begin, long long end) {
  for (long long b = begin + threadIdx.x; b < end; b += kThreads) bytes[b] = 0;
}

__device__ __forceinline__ bool row_active(const void* num_sampled, long long num_sampled_is_64,
                                           long long num_sampled_stride, long long row) {
  if (num_sampled == nullptr) return true;
  if (num_sampled_is_64 != 0) {
    return static_cast<const long long*>(num_sampled)[row * num_sampled_stride] > 0;
  }
  return static_cast<const int*>(num_sampled)[row * num_sampled_stride] > 0;
}

// Writes the mask bytes of segments [seg, seg_end) of a row; returns this thread's number of
// kept columns. The next segment's loads are issued before the current one is tested.
template <class T, bool kVec, int kThreads>
__device__ __forceinline__ unsigned mask_segments(const typename T::Bits* row_logits,
                                                  long long col_stride, long long num_cols,
                                                  unsigned char* row_mask, long long seg,
                                                  long long seg_end) {
  constexpr long long kSegment = kThreads * 8LL;
  unsigned kept = 0u;
  if (seg >= seg_end) return kept;
  long long col = seg * kSegment + threadIdx.x * 8LL;
  uint4 cur[T::kVecs];
  load8<T, kVec>(cur, row_logits, col, num_cols, col_stride);
  for (; seg < seg_end; ++seg, col += kSegment) {
    uint4 next[T::kVecs] = {};
    if (seg + 1 < seg_end) load8<T, kVec>(next, row_logits, col + kSegment, num_cols, col_stride);
    const unsigned bits = kept_byte<T>(cur);
    if (col < num_cols) row_mask[col >> 3] = static_cast<unsigned char>(bits);
    kept += static_cast<unsigned>(__popc(bits));
#pragma unroll
    for (int i = 0; i < T::kVecs; ++i) cur[i] = next[i];
  }
  return kept;
}

// ---- Kernels ---------------------------------------------------------------------------------
// Outputs are contiguous: mask [R, ceil(V/8)] bytes, ids [R, width] int32, counts [R] int32.
// Every scalar parameter is 64-bit (CuPy passes Python ints as 64-bit values).

// split, launch 1: one block per tile (row, segs_per_tile segments); grid = R * tiles_per_row.
// Writes the tile's mask bytes and its kept count to tile_counts[row * tiles_per_row + tile].
template <class T, bool kVec, int kThreads>
__global__ void __launch_bounds__(kThreads)
    compact_split_count(const typename T::Bits* logits, long long row_stride, long long col_stride,
                        long long num_cols, const void* num_sampled, long long num_sampled_is_64,
                        long long num_sampled_stride, unsigned char* mask,
                        unsigned* tile_counts, long long tiles_per_row, long long segs_per_tile) {
  __shared__ unsigned sum_scratch[kThreads / 32];
  constexpr long long kSegment = kThreads * 8LL;
  const long long tile = blockIdx.x;
  const long long row = tile / tiles_per_row;
  const long long num_segs = (num_cols + kSegment - 1) / kSegment;
  const long long seg_begin = (tile - row * tiles_per_row) * segs_per_tile;
  const long long seg_end = min_ll(seg_begin + segs_per_tile, num_segs);
  const long long mask_bytes = (num_cols + 7) >> 3;
  unsigned char* row_mask = mask + row * mask_bytes;
  if (!row_active(num_sampled, num_sampled_is_64, num_sampled_stride, row)) {
    zero_bytes<kThreads>(row_mask, seg_begin * kThreads, min_ll(seg_end * kThreads, mask_bytes));
    if (threadIdx.x == 0) tile_counts[tile] = 0u;
    return;
  }
  const unsigned kept = mask_segments<T, kVec, kThreads>(
      logits + row * row_stride, col_stride, num_cols, row_mask, seg_begin, seg_end);
  const unsigned tile_kept = block_sum<kThreads>(kept, sum_scratch);
  if (threadIdx.x == 0) tile_counts[tile] = tile_kept;
}

// split, launch 2: same grid. From the row's tile counts: the tile's exclusive prefix and the
// row total; tile 0 writes counts[row]; each tile writes its share of the -1 padding slots
// [min(total, W), W); a tile whose prefix is < W ranks its kept ids from its mask bytes (1/32
// of the logits' bits), tile_bytes = segs_per_tile * (threads of launch 1) bytes per tile.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    compact_split_rank(const unsigned char* mask, long long num_cols, const unsigned* tile_counts,
                       long long tiles_per_row, long long tile_bytes, int* ids, long long width,
                       int* counts) {
  __shared__ unsigned scan_scratch[2][kThreads / 32];
  __shared__ unsigned before_scratch[kThreads / 32];
  __shared__ unsigned total_scratch[kThreads / 32];
  const long long tile = blockIdx.x;
  const long long row = tile / tiles_per_row;
  const long long t = tile - row * tiles_per_row;
  const unsigned* row_counts = tile_counts + row * tiles_per_row;
  unsigned before = 0u, total = 0u;
  for (long long i = threadIdx.x; i < tiles_per_row; i += kThreads) {
    const unsigned c = row_counts[i];
    total += c;
    before += i < t ? c : 0u;
  }
  before = block_sum<kThreads>(before, before_scratch);
  total = block_sum<kThreads>(total, total_scratch);
  if (t == 0 && threadIdx.x == 0) counts[row] = static_cast<int>(total);

  const unsigned w = static_cast<unsigned>(width);
  int* row_ids = ids + row * width;
  const long long share = (width + tiles_per_row - 1) / tiles_per_row;
  const long long slot_begin = t * share;
  fill_ids<kThreads>(row_ids, max_ll(slot_begin, total < w ? total : w),
                     min_ll(slot_begin + share, width));
  if (before >= w || row_counts[t] == 0u) return;

  const long long mask_bytes = (num_cols + 7) >> 3;
  const unsigned char* row_mask = mask + row * mask_bytes;
  const long long byte_end = min_ll((t + 1) * tile_bytes, mask_bytes);
  unsigned ranked = before;
  int parity = 0;
  for (long long b0 = t * tile_bytes; b0 < byte_end && ranked < w; b0 += kThreads) {
    const long long b = b0 + threadIdx.x;
    const unsigned bits = b < byte_end ? row_mask[b] : 0u;
    unsigned round_kept;
    const unsigned rank = block_exclusive_sum<kThreads, 4>(
        static_cast<unsigned>(__popc(bits)), scan_scratch[parity], &round_kept);
    emit_ids(bits, ranked + rank, b * 8, w, row_ids);
    ranked += round_kept;
    parity ^= 1;
  }
}

// fused: one block per row (grid = R). Ranks segment by segment while fewer than W ids are
// ranked, then only writes mask bytes and counts; one launch.
template <class T, bool kVec, int kThreads>
__global__ void __launch_bounds__(kThreads)
    compact_fused(const typename T::Bits* logits, long long row_stride, long long col_stride,
                  long long num_cols, const void* num_sampled, long long num_sampled_is_64,
                  long long num_sampled_stride, unsigned char* mask, int* ids, long long width,
                  int* counts) {
  __shared__ unsigned scan_scratch[2][kThreads / 32];
  __shared__ unsigned sum_scratch[kThreads / 32];
  constexpr long long kSegment = kThreads * 8LL;
  const long long row = blockIdx.x;
  const long long mask_bytes = (num_cols + 7) >> 3;
  unsigned char* row_mask = mask + row * mask_bytes;
  int* row_ids = ids + row * width;
  if (!row_active(num_sampled, num_sampled_is_64, num_sampled_stride, row)) {
    zero_bytes<kThreads>(row_mask, 0, mask_bytes);
    fill_ids<kThreads>(row_ids, 0, width);
    if (threadIdx.x == 0) counts[row] = 0;
    return;
  }
  const typename T::Bits* row_logits = logits + row * row_stride;
  const long long num_segs = (num_cols + kSegment - 1) / kSegment;
  const unsigned w = static_cast<unsigned>(width);
  long long seg = 0;
  unsigned ranked = 0u;
  if (w > 0u) {
    long long col = threadIdx.x * 8LL;
    uint4 cur[T::kVecs];
    load8<T, kVec>(cur, row_logits, col, num_cols, col_stride);
    while (seg < num_segs) {
      uint4 next[T::kVecs] = {};
      if (seg + 1 < num_segs) load8<T, kVec>(next, row_logits, col + kSegment, num_cols, col_stride);
      const unsigned bits = kept_byte<T>(cur);
      if (col < num_cols) row_mask[col >> 3] = static_cast<unsigned char>(bits);
      unsigned seg_kept;
      const unsigned rank = block_exclusive_sum<kThreads, 4>(
          static_cast<unsigned>(__popc(bits)), scan_scratch[seg & 1], &seg_kept);
      emit_ids(bits, ranked + rank, col, w, row_ids);
      ranked += seg_kept;
      ++seg;
      col += kSegment;
      if (ranked >= w) break;
#pragma unroll
      for (int i = 0; i < T::kVecs; ++i) cur[i] = next[i];
    }
  }
  const unsigned rest = mask_segments<T, kVec, kThreads>(row_logits, col_stride, num_cols,
                                                         row_mask, seg, num_segs);
  const unsigned total = ranked + block_sum<kThreads>(rest, sum_scratch);
  if (threadIdx.x == 0) counts[row] = static_cast<int>(total);
  fill_ids<kThreads>(row_ids, total < w ? total : w, width);
}
