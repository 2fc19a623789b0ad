// CUDA C kernels of the `cupy` backend of masks. Design: masks/backends/cupy.py's docstring;
// measurements behind it: docs/design.md, "CUDA C kernels and the CuPy backend".
//
// Compiled at run time by NVRTC through CuPy (-std=c++17) and, in the tests, standalone by nvcc
// with warnings as errors; so this file includes nothing and uses only built-in CUDA types and
// intrinsics. Every kernel parameter is 64 bits wide, the data pointers first (the host fills
// the pointers of a prepared parameter block per call: `_Plan` in cupy.py).
//
// Layout shared by every kernel: a row is cut into warp segments of 256 columns (32 mask bytes);
// lane l owns mask byte l of a segment (columns 8l..8l+7: one or two 16-byte loads, or four for
// fp64), so mask stores are one coalesced byte per lane. A warp streams a contiguous range of
// segments with no barrier (pass 1: mask bytes + lane counts), the warp counts are combined once,
// and the warp ranks its range from the mask words it wrote (pass 2: popcounts of each lane's
// consecutive 32-bit words, one shuffle scan per step, then only the set bits, stopping at W).
// `fused` ranks during pass 1 instead (`rank_bytes`) and keeps pass 2 for a warp that needs more
// ids than it could stage. All address arithmetic is 64-bit.

// ---- Dtypes: logits are read as raw bits; "kept" means the exponent is not all ones. --------

template <typename B, B kExponent>
struct FloatBits {
  typedef B Bits;
  static constexpr Bits kExp = kExponent;  // exponent all ones: +-inf or NaN (not kept)
  static constexpr int kVecs = sizeof(B) / 2;  // 16-byte vectors per 8 elements
  static constexpr int kUnroll = 8 / kVecs;     // warp segments per pass-1 group (8 vectors)
};
struct F32 : FloatBits<unsigned int, 0x7F800000u> {};
struct F16 : FloatBits<unsigned short, 0x7C00u> {};
struct BF16 : FloatBits<unsigned short, 0x7F80u> {};
struct F64 : FloatBits<unsigned long long, 0x7FF0000000000000ull> {};

__device__ __forceinline__ long long min_ll(long long a, long long b) { return a < b ? a : b; }

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
  if constexpr (sizeof(typename T::Bits) == 2) {
    // Two elements per word, element 2i in the low half: ((w & E) ^ E) + 0x7FFF carries into a
    // half's top bit iff its exponent field is not all ones (no carry crosses halves). Two byte
    // permutes put elements 0-3 and 4-7 at bits 7, 15, 23, 31 of two words; merged a nibble
    // apart, one multiply moves all eight to bits 24-31 in order (its four shifted copies land
    // on distinct bits, so nothing carries). Fewer instructions than a test per element and a
    // gather by shifts, for a small gain in time (measurements: docs/design.md, CUDA C kernels).
    constexpr unsigned kFields = static_cast<unsigned>(T::kExp) * 0x10001u;
    unsigned carried[4];  // the result in each half's top bit
#pragma unroll
    for (int i = 0; i < 4; ++i) carried[i] = ((word32(q, i) & kFields) ^ kFields) + 0x7FFF7FFFu;
    const unsigned low = __byte_perm(carried[0], carried[1], 0x7531) & 0x80808080u;   // 0-3
    const unsigned high = __byte_perm(carried[2], carried[3], 0x7531) & 0x80808080u;  // 4-7
    return ((high + (low >> 4)) * 0x00204081u) >> 24;
  } else {
    unsigned bits = 0u;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      unsigned word, mask;
      if constexpr (sizeof(typename T::Bits) == 8) {  // high word holds the exponent
        word = word32(q, 2 * j + 1);
        mask = static_cast<unsigned>(T::kExp >> 32);
      } else {
        word = word32(q, j);
        mask = T::kExp;
      }
      bits |= static_cast<unsigned>((word & mask) != mask) << j;
    }
    return bits;
  }
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

// Writes the ids of the set bits of `bits` (column col + bit) to slots rank, rank + 1, ... < width.
__device__ __forceinline__ void emit_ids(unsigned bits, unsigned rank, long long col,
                                         unsigned width, int* row_ids) {
  while (bits != 0u && rank < width) {
    row_ids[rank] = static_cast<int>(col + __ffs(static_cast<int>(bits)) - 1);
    ++rank;
    bits &= bits - 1u;
  }
}

// Warp call: slots rank .. rank + kCols - 1 (< width) get columns col .. col + kCols - 1, one
// coalesced store per lane and 32 slots (a full step would otherwise cost kCols / 32 scattered
// stores per lane).
template <unsigned kCols>
__device__ __forceinline__ void fill_consecutive(int* row_ids, unsigned rank, long long col,
                                                 unsigned width) {
  for (unsigned i = threadIdx.x & 31u; i < kCols && rank + i < width; i += 32u) {
    row_ids[rank + i] = static_cast<int>(col + i);
  }
}

template <int kThreads>
__device__ __forceinline__ void fill_ids(int* row_ids, long long begin, long long end) {
  for (long long j = begin + threadIdx.x; j < end; j += kThreads) row_ids[j] = -1;
}

// Zeroes bytes [begin, end), bytes begin + first, + first + step, ... by this thread.
__device__ __forceinline__ void zero_bytes(unsigned char* bytes, long long begin, long long end,
                                           unsigned first, unsigned step) {
  for (long long b = begin + first; b < end; b += step) bytes[b] = 0;
}

__device__ __forceinline__ bool row_active(const void* num_sampled, long long num_sampled_is_64,
                                           long long num_sampled_stride, long long row) {
  if (num_sampled == nullptr) return true;
  if (num_sampled_is_64 != 0) {
    return static_cast<const long long*>(num_sampled)[row * num_sampled_stride] > 0;
  }
  return static_cast<const int*>(num_sampled)[row * num_sampled_stride] > 0;
}


// ---- Warp-level passes -----------------------------------------------------------------------
// A row is cut into *warp segments* of kSegCols = 256 columns (32 mask bytes); lane l of a warp
// owns byte l of a segment (columns 8l..8l+7). A warp streams a contiguous range of segments
// (a *unit*) and ranks the same range afterwards, so the only cross-warp information a unit
// needs is the number of kept ids before it.

constexpr long long kSegCols = 256;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

// Resident blocks per SM asked of the register allocator: half the SM's 2048 threads (64
// registers a thread), enough with 128 bytes of loads in flight per thread.
constexpr int min_blocks(int threads) { return threads >= 1024 ? 1 : 1024 / threads; }

// Whole warp: the sum of `value` over lanes 0 .. lane (a shuffle scan).
__device__ __forceinline__ unsigned warp_inclusive_sum(unsigned value, unsigned lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned v = __shfl_up_sync(kFullMask, value, d);
    if (lane >= static_cast<unsigned>(d)) value += v;
  }
  return value;
}

// Where `fused`'s pass 1 writes the ids it ranks as it streams: slots [0, cap) of `ids`, in
// column order from the start of the warp's range; `ranked` counts the warp's kept ids so far
// (warp-uniform; only its value below cap matters). `bytes`: the warp's kMaxGroupBytes of shared
// memory through which `rank_bytes` regroups a group's mask bytes.
struct IdSink {
  int* ids;
  unsigned char* bytes;
  unsigned cap;
  unsigned ranked;
};

constexpr int kMaxGroupBytes = 8 * 32;  // mask bytes of a pass-1 group of 8 segments

// Whole warp: ranks this lane's mask bytes of segments seg .. seg + kN - 1 (`bits[u]`, byte lane
// of segment seg + u; 0 past the row's end) in column order and writes their ids to the sink's
// slots < cap. A group with no kept column costs one vote. Otherwise (kN > 1) its bytes go
// through shared memory in mask order, so that lane l reads bytes kN * l .. kN * l + kN - 1:
// 8 * kN consecutive columns (a single segment's lane already holds its 8), ranked by one
// shuffle scan of the lanes' popcounts and written bit by bit by pass 2's `emit_ids`, one
// 32-bit word at a time (a group whose columns are all kept as consecutive ids with coalesced
// stores). One scan per group, where the ranking it replaced took three scans of packed 10-bit
// per-segment counts and a bit loop per segment (measurements: docs/design.md, CUDA C kernels).
template <int kN>
__device__ __forceinline__ void rank_bytes(const unsigned (&bits)[kN], long long seg,
                                           IdSink& sink) {
  if (sink.ranked >= sink.cap) return;
  unsigned any = 0u;
#pragma unroll
  for (int u = 0; u < kN; ++u) any |= bits[u];
  if (__ballot_sync(kFullMask, any != 0u) == 0u) return;
  const unsigned lane = threadIdx.x & 31u;
  unsigned long long word;
  if constexpr (kN == 1) {
    word = bits[0];
  } else {
#pragma unroll
    for (int u = 0; u < kN; ++u) sink.bytes[32 * u + lane] = static_cast<unsigned char>(bits[u]);
    __syncwarp();
    const unsigned char* mine = sink.bytes + kN * lane;
    if constexpr (kN == 8) {
      word = *reinterpret_cast<const unsigned long long*>(mine);
    } else if constexpr (kN == 4) {
      word = *reinterpret_cast<const unsigned*>(mine);
    } else {
      static_assert(kN == 2, "groups of 1, 2, 4 or 8 segments");
      word = *reinterpret_cast<const unsigned short*>(mine);
    }
    __syncwarp();  // read before the next group's bytes overwrite them
  }
  const unsigned count = static_cast<unsigned>(__popcll(word));
  const unsigned inclusive = warp_inclusive_sum(count, lane);
  const unsigned total = __shfl_sync(kFullMask, inclusive, 31);
  const long long first_col = seg * kSegCols;
  if (total == kN * kSegCols) {
    fill_consecutive<kN * kSegCols>(sink.ids, sink.ranked, first_col, sink.cap);
  } else {
    const unsigned rank = sink.ranked + inclusive - count;
    const long long col = first_col + 8 * kN * lane;
    const unsigned low = static_cast<unsigned>(word);
    emit_ids(low, rank, col, sink.cap, sink.ids);
    if constexpr (kN == 8) {
      emit_ids(static_cast<unsigned>(word >> 32), rank + static_cast<unsigned>(__popc(low)),
               col + 32, sink.cap, sink.ids);
    }
  }
  sink.ranked += total;
}

// Pass 1: writes the mask bytes of segments [seg, seg_end) of a row and returns this lane's
// kept count. No barrier, and no cross-lane traffic but kRank's (`fused`: `rank_bytes` once per
// group). Whole groups of kUnroll in-bounds segments (8 16-byte loads per lane, issued before any
// is tested) go through the vector loop; the rest (the row's end, a unit shorter than a group,
// strided rows) one segment at a time, with the next segment's loads issued before the current
// one is tested (loading them as one more predicated group was slower at R = 1-4: docs/design.md,
// CUDA C kernels).
template <class T, bool kVec, bool kRank = false>
__device__ __forceinline__ unsigned stream_mask(const typename T::Bits* row_logits,
                                                long long col_stride, long long num_cols,
                                                unsigned char* row_mask, long long seg,
                                                long long seg_end, IdSink* sink = nullptr) {
  constexpr int kUnroll = T::kUnroll;
  constexpr int kSegVecs = kSegCols * sizeof(typename T::Bits) / 16;  // 16-byte vectors
  const unsigned lane = threadIdx.x & 31u;
  const long long lane_col = lane * 8LL;
  unsigned kept = 0u;
  if constexpr (kVec) {
    const long long full_segs = min_ll(seg_end, num_cols / kSegCols);
    for (; seg + kUnroll <= full_segs; seg += kUnroll) {
      const uint4* p = reinterpret_cast<const uint4*>(row_logits + seg * kSegCols + lane_col);
      uint4 q[kUnroll][T::kVecs];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int i = 0; i < T::kVecs; ++i) q[u][i] = __ldcs(p + u * kSegVecs + i);
      }
      unsigned char* m = row_mask + seg * 32 + lane;
      unsigned bits[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        bits[u] = kept_byte<T>(q[u]);
        m[32 * u] = static_cast<unsigned char>(bits[u]);
        kept += static_cast<unsigned>(__popc(bits[u]));
      }
      if constexpr (kRank) rank_bytes<kUnroll>(bits, seg, *sink);
    }
  }
  if (seg >= seg_end) return kept;
  long long col = seg * kSegCols + lane_col;
  uint4 cur[T::kVecs];
  load8<T, kVec>(cur, row_logits, col, num_cols, col_stride);
  for (; seg < seg_end; ++seg, col += kSegCols) {
    uint4 next[T::kVecs] = {};
    if (seg + 1 < seg_end) load8<T, kVec>(next, row_logits, col + kSegCols, num_cols, col_stride);
    unsigned bits[1] = {0u};
    if (col < num_cols) {
      bits[0] = kept_byte<T>(cur);
      row_mask[col >> 3] = static_cast<unsigned char>(bits[0]);
      kept += static_cast<unsigned>(__popc(bits[0]));
    }
    if constexpr (kRank) rank_bytes<1>(bits, seg, *sink);
#pragma unroll
    for (int i = 0; i < T::kVecs; ++i) cur[i] = next[i];
  }
  return kept;
}

// Mask bytes [b, b + 4) of a row as a little-endian word; bytes at or after `end` read as 0.
__device__ __forceinline__ unsigned mask_word(const unsigned char* row_mask, long long b,
                                              long long end) {
  if (b + 4 <= end && (reinterpret_cast<unsigned long long>(row_mask + b) & 3u) == 0u) {
    return *reinterpret_cast<const unsigned*>(row_mask + b);
  }
  unsigned word = 0u;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (b + k < end) word |= static_cast<unsigned>(row_mask[b + k]) << (8 * k);
  }
  return word;
}

// Mask bytes [b, b + 4 * kWords) of a row as kWords little-endian words (one 16-byte load for
// four aligned words); bytes at or after `end` read as 0.
template <int kWords>
__device__ __forceinline__ void mask_words(unsigned (&words)[kWords], const unsigned char* row_mask,
                                           long long b, long long end) {
  if (b >= end) {
#pragma unroll
    for (int i = 0; i < kWords; ++i) words[i] = 0u;
    return;
  }
  if (kWords == 4 && b + 16 <= end &&
      (reinterpret_cast<unsigned long long>(row_mask + b) & 15u) == 0u) {
    const uint4 q = *reinterpret_cast<const uint4*>(row_mask + b);
    const unsigned loaded[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int i = 0; i < kWords; ++i) words[i] = loaded[i];
    return;
  }
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = mask_word(row_mask, b + 4 * i, end);
}

// Pass 2 (whole warp): writes the ids of the kept columns of mask bytes [begin, end) of a row
// (begin a multiple of 4 * kWords), the first of them having rank `ranked`, into slots < width.
// Work is proportional to words + set bits: per step each lane takes kWords consecutive 32-bit
// words (a step is 32 * kWords words), one shuffle scan of the lanes' popcounts gives its first
// rank, and only set bits are visited; a step whose words are all full (no masked column:
// sampling without truncation) writes its consecutive columns with coalesced stores instead. The
// words of kRankSteps steps are loaded before the first is ranked, so a range costs few
// dependent load round trips (at one wave of rows this pass is the kernel's tail). Stops once
// ranks reach W.
// kWords: 4 for fused's long ranges (a 16384-column range in one round trip, and a quarter of
// the scans of one word per lane); 1 for split's short units (1-16 segments), whose set bits
// four words per lane would pile onto a few lanes (measurements: docs/design.md, CUDA C kernels).
template <int kWords>
__device__ __forceinline__ void rank_mask(const unsigned char* row_mask, long long begin,
                                          long long end, unsigned ranked, unsigned width,
                                          int* row_ids) {
  constexpr int kRankSteps = 4;
  constexpr long long kStepBytes = 128 * kWords;
  constexpr unsigned kStepCols = 8 * kStepBytes;
  const unsigned lane = threadIdx.x & 31u;
  for (long long b = begin; b < end && ranked < width; b += kStepBytes * kRankSteps) {
    unsigned words[kRankSteps][kWords];
#pragma unroll
    for (int k = 0; k < kRankSteps; ++k) {
      mask_words<kWords>(words[k], row_mask, b + kStepBytes * k + 4 * kWords * lane, end);
    }
#pragma unroll
    for (int k = 0; k < kRankSteps; ++k) {
      if (ranked >= width) break;  // warp-uniform
      unsigned count = 0u;
#pragma unroll
      for (int i = 0; i < kWords; ++i) count += static_cast<unsigned>(__popc(words[k][i]));
      const unsigned inclusive = warp_inclusive_sum(count, lane);
      const unsigned step_count = __shfl_sync(kFullMask, inclusive, 31);
      const long long step = b + kStepBytes * k;
      if (step_count == kStepCols) {  // every word full: consecutive columns, coalesced stores
        fill_consecutive<kStepCols>(row_ids, ranked, step * 8, width);
      } else if (count > 0u) {
        unsigned rank = ranked + inclusive - count;
        const long long col = (step + 4 * kWords * lane) * 8;
#pragma unroll
        for (int i = 0; i < kWords; ++i) {
          emit_ids(words[k][i], rank, col + 32 * i, width, row_ids);
          rank += static_cast<unsigned>(__popc(words[k][i]));
        }
      }
      ranked += step_count;
    }
  }
}

// Segments [begin, end) of unit `unit` (units of segs_per_unit segments; clipped to the row).
__device__ __forceinline__ void unit_segments(long long unit, long long segs_per_unit,
                                              long long num_segs, long long* begin,
                                              long long* end) {
  *begin = min_ll(unit * segs_per_unit, num_segs);
  *end = min_ll(*begin + segs_per_unit, num_segs);
}

// ---- Kernels ---------------------------------------------------------------------------------
// Outputs are contiguous: mask [R, ceil(V/8)] bytes, ids [R, width] int32, counts [R] int32.
// Every scalar parameter is 64-bit: the host fills one block of int64 values (`_Plan` in cupy.py).

// split, pass 1 of one unit (a warp): its mask bytes, and the unit's kept count (all lanes).
// An inactive row's unit zeroes its mask bytes and counts 0.
template <class T, bool kVec>
__device__ __forceinline__ unsigned count_unit(const typename T::Bits* logits, long long row_stride,
                                               long long col_stride, long long num_cols,
                                               const void* num_sampled, long long num_sampled_is_64,
                                               long long num_sampled_stride, unsigned char* mask,
                                               long long row, long long unit,
                                               long long segs_per_unit) {
  const long long num_segs = (num_cols + kSegCols - 1) / kSegCols;
  long long seg_begin, seg_end;
  unit_segments(unit, segs_per_unit, num_segs, &seg_begin, &seg_end);
  const long long mask_bytes = (num_cols + 7) >> 3;
  unsigned char* row_mask = mask + row * mask_bytes;
  unsigned kept = 0u;
  if (row_active(num_sampled, num_sampled_is_64, num_sampled_stride, row)) {
    kept = stream_mask<T, kVec>(logits + row * row_stride, col_stride, num_cols, row_mask,
                                seg_begin, seg_end);
  } else {
    zero_bytes(row_mask, seg_begin * 32, min_ll(seg_end * 32, mask_bytes), threadIdx.x & 31u, 32u);
  }
  return __reduce_add_sync(kFullMask, kept);
}

// split, pass 2 of one unit (a warp) whose first kept id has rank `before` (< width).
__device__ __forceinline__ void rank_unit(const unsigned char* mask, long long num_cols,
                                          long long row, long long unit, long long segs_per_unit,
                                          unsigned before, unsigned width, int* row_ids) {
  const long long num_segs = (num_cols + kSegCols - 1) / kSegCols;
  const long long mask_bytes = (num_cols + 7) >> 3;
  long long seg_begin, seg_end;
  unit_segments(unit, segs_per_unit, num_segs, &seg_begin, &seg_end);
  rank_mask<1>(mask + row * mask_bytes, seg_begin * 32, min_ll(seg_end * 32, mask_bytes), before,
            width, row_ids);
}

// split: tiles of kThreads / 32 units of segs_per_unit segments, grid = R * tiles_per_row, one
// launch. A block takes a ticket (state[0]) and processes tile `ticket` (not blockIdx), so every
// tile it waits for was taken by a block that has already started: no block relies on another
// being co-resident.
// After pass 1 it publishes its kept count + 1 in state[2 + ticket] (0 = not yet), then sums the
// counts of the row's earlier tiles, spinning on each until published (a tile other than the
// row's last stops once the sum reaches W, and needs none if it keeps nothing). The row's last
// tile writes counts[row] and the -1 padding. A block increments state[1] once it has read
// every flag it needs; the last one resets the ticket, the counter and the flags, so the
// scratch is zero again for the next launch (or graph replay) without a memset.
template <class T, bool kVec, int kThreads>
__global__ void __launch_bounds__(kThreads, min_blocks(kThreads))
    compact_split(const typename T::Bits* logits, const void* num_sampled, unsigned char* mask,
                  int* ids, int* counts, unsigned* state, long long row_stride,
                  long long col_stride, long long num_cols, long long num_sampled_is_64,
                  long long num_sampled_stride, long long width, long long tiles_per_row,
                  long long segs_per_unit) {
  constexpr unsigned kWarps = kThreads / 32;
  __shared__ unsigned warp_kept[kWarps];
  __shared__ unsigned shared_ticket, shared_before, shared_total;
  __shared__ bool shared_last_done;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const long long num_tiles = gridDim.x;
  unsigned* flags = state + 2;
  if (threadIdx.x == 0) shared_ticket = atomicAdd(state, 1u);
  __syncthreads();
  const unsigned kept = count_unit<T, kVec>(
      logits, row_stride, col_stride, num_cols, num_sampled, num_sampled_is_64, num_sampled_stride,
      mask, shared_ticket / tiles_per_row, shared_ticket % tiles_per_row * kWarps + warp,
      segs_per_unit);
  if (lane == 0u) warp_kept[warp] = kept;
  __syncthreads();  // also orders the mask stores before pass 2's loads
  // Read again from shared memory rather than kept live across pass 1 (registers).
  const long long ticket = shared_ticket;
  const long long row = ticket / tiles_per_row;
  const long long t = ticket - row * tiles_per_row;
  const bool last_tile = t == tiles_per_row - 1;
  const unsigned w = static_cast<unsigned>(width);
  const unsigned mine = lane < kWarps ? warp_kept[lane] : 0u;
  if (warp == 0u) {
    const unsigned tile_kept = __reduce_add_sync(kFullMask, mine);
    if (lane == 0u) atomicExch(flags + ticket, tile_kept + 1u);
    const volatile unsigned* row_flags = flags + row * tiles_per_row;
    unsigned before = 0u;
    // The row's last tile needs the whole prefix; another only while it is < W and the tile has
    // ids to rank.
    const bool whole = last_tile;
    const unsigned limit = tile_kept > 0u ? w : 0u;
    for (long long base = 0; base < t && (whole || before < limit); base += 32) {
      unsigned flag = 1u;
      if (base + lane < t) {
        do {
          flag = row_flags[base + lane];
        } while (flag == 0u);
      }
      before += __reduce_add_sync(kFullMask, flag - 1u);
    }
    if (lane == 0u) {
      shared_before = before;
      shared_total = before + tile_kept;
    }
  }
  __syncthreads();  // every flag this block needs has been read
  if (threadIdx.x == 0) {
    __threadfence();  // this block's flag lands before its count of done blocks
    shared_last_done = atomicAdd(state + 1, 1u) == num_tiles - 1;
    __threadfence();
  }
  __syncthreads();
  if (shared_last_done) {
    for (long long i = threadIdx.x; i < num_tiles; i += kThreads) flags[i] = 0u;
    if (threadIdx.x == 0) state[0] = state[1] = 0u;
  }
  int* row_ids = ids + row * width;
  if (last_tile) {
    const unsigned total = shared_total;
    if (threadIdx.x == 0) counts[row] = static_cast<int>(total);
    fill_ids<kThreads>(row_ids, total < w ? total : w, width);
  }
  const unsigned before = shared_before + __reduce_add_sync(kFullMask, lane < warp ? mine : 0u);
  if (before < w && kept > 0u) {
    rank_unit(mask, num_cols, row, t * kWarps + warp, segs_per_unit, before, w, row_ids);
  }
}

// Ids a warp of `fused` other than the first stages in shared memory while it streams (int32):
// a dense row (W = 2048 spread over the row) gives each of 16 warps about 128.
constexpr unsigned kStagedIds = 256;

// fused: one block per row (grid = R); warp k streams the k-th of kThreads / 32 ranges of the
// row (equal, rounded up to whole kUnroll groups so that only the row's end takes the
// one-segment path; pass 1, no barrier) and ranks its kept ids as it goes: warp 0, whose first
// id has rank 0, straight into the row's ids, every other warp into its slots of shared memory.
// One barrier exchanges the warp counts; then each warp whose prefix is < W copies its staged
// ids into place, or ranks its range again from the mask bytes it has written (pass 2) when
// more of them are needed than it staged. So a row's ids rarely wait for an L2 round trip
// after its last load: at one wave of rows (R = 256 on the H200) that pass was the kernel's
// tail.
template <class T, bool kVec, int kThreads>
__global__ void __launch_bounds__(kThreads, min_blocks(kThreads))
    compact_fused(const typename T::Bits* logits, const void* num_sampled, unsigned char* mask,
                  int* ids, int* counts, long long row_stride, long long col_stride,
                  long long num_cols, long long num_sampled_is_64, long long num_sampled_stride,
                  long long width) {
  constexpr unsigned kWarps = kThreads / 32;
  __shared__ unsigned warp_kept[kWarps];
  __shared__ int staged[kWarps > 1 ? kWarps - 1 : 1][kStagedIds];
  alignas(8) __shared__ unsigned char group_bytes[kWarps][kMaxGroupBytes];
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const long long row = blockIdx.x;
  const long long mask_bytes = (num_cols + 7) >> 3;
  unsigned char* row_mask = mask + row * mask_bytes;
  int* row_ids = ids + row * width;
  if (!row_active(num_sampled, num_sampled_is_64, num_sampled_stride, row)) {
    zero_bytes(row_mask, 0, mask_bytes, threadIdx.x, kThreads);
    fill_ids<kThreads>(row_ids, 0, width);
    if (threadIdx.x == 0) counts[row] = 0;
    return;
  }
  const unsigned w = static_cast<unsigned>(width);
  IdSink sink = warp == 0u ? IdSink{row_ids, group_bytes[warp], w, 0u}
                           : IdSink{staged[warp - 1], group_bytes[warp],
                                    w < kStagedIds ? w : kStagedIds, 0u};
  const long long num_segs = (num_cols + kSegCols - 1) / kSegCols;
  long long seg_begin, seg_end;
  const long long per_warp = (num_segs + kWarps - 1) / kWarps;
  unit_segments(warp, (per_warp + T::kUnroll - 1) / T::kUnroll * T::kUnroll, num_segs, &seg_begin,
                &seg_end);
  const unsigned kept = __reduce_add_sync(
      kFullMask, stream_mask<T, kVec, true>(logits + row * row_stride, col_stride, num_cols,
                                            row_mask, seg_begin, seg_end, &sink));
  if (lane == 0u) warp_kept[warp] = kept;
  __syncthreads();  // also orders the mask and staged stores before their loads below
  const unsigned other = lane < kWarps ? warp_kept[lane] : 0u;
  const unsigned total = __reduce_add_sync(kFullMask, other);
  const unsigned before = __reduce_add_sync(kFullMask, lane < warp ? other : 0u);
  if (threadIdx.x == 0) counts[row] = static_cast<int>(total);
  fill_ids<kThreads>(row_ids, total < w ? total : w, width);
  if (warp == 0u || before >= w || kept == 0u) return;  // warp 0's ids are in place
  const unsigned needed = kept < w - before ? kept : w - before;
  if (needed <= sink.cap) {
    for (unsigned i = lane; i < needed; i += 32u) row_ids[before + i] = sink.ids[i];
  } else {
    rank_mask<4>(row_mask, seg_begin * 32, min_ll(seg_end * 32, mask_bytes), before, w, row_ids);
  }
}
