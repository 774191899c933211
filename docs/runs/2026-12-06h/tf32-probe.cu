// A measurement, not library code: can the tensor cores, with each f32 operand split into a high
// and a low TF32 part and three products summed, beat the FP32 multiply-adds on the dense tiles'
// two products? Shapes of batch-1024x120-d50 1×128's dense forward: 2,408 tiles of 64 rows ×
// 128 sources × 128 features; per tile the score product S = Q·Kᵀ (64×128, over 128 features)
// and the aggregation O = S·V (64×128, over 128 sources), both from shared memory, features staged
// in chunks of 32 as the library's kernels do. No softmax: S is scaled so that O stays finite.
//
// Variants (each a kernel, timed with CUDA events, median of 20 after 3 warm-ups):
//   fp32: register-tiled multiply-adds (scores 4 rows × 8 sources a thread over float4 loads,
//         aggregation 2 rows × 4 features a thread), about the library's layouts;
//   tf32x3: mma.sync.m16n8k8 TF32, a = a_hi + a_lo, three products (hi·hi + hi·lo + lo·hi);
//   tf32x1: the same with one product (accuracy well below f32: shown for the ceiling only);
//   tf32x3t: three products with the products transposed (Sᵀ = K·Qᵀ, Oᵀ = Vᵀ·Sᵀ), so that a warp
//         owns 8 whole rows (a row's softmax would stay inside one warp), at the price of
//         splitting the key and value operands once per product instead of once per k-step.
// Each output is checked against an f64 product on the host (relative error of the worst tile).
//
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 -o /tmp/probe tf32-probe.cu && /tmp/probe
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

constexpr int ROWS = 64, SRCS = 128, FEAT = 128, CHUNK = 32, THREADS = 256;
constexpr int QS = CHUNK + 4;   // Q chunk row stride (A fragment loads conflict-free)
constexpr int KS = CHUNK + 4;   // K chunk row stride (B fragment loads of Kᵀ conflict-free)
constexpr int VS = CHUNK + 8;   // V chunk row stride (B fragment loads of V conflict-free)
constexpr int PS = SRCS + 4;    // S row stride
constexpr int SMEM_FLOATS = ROWS * PS + ROWS * QS + SRCS * KS;   // Q and V chunks share space
constexpr int SMEM_BYTES = SMEM_FLOATS * 4;

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

__device__ __forceinline__ uint32_t tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Split x into hi + lo, both TF32.
__device__ __forceinline__ void split(float x, uint32_t &hi, uint32_t &lo) {
  hi = tf32(x);
  lo = tf32(x - __uint_as_float(hi));
}

// Stage rows [0, n) × features [c, c + CHUNK) of a [n, FEAT] array into shared memory.
__device__ __forceinline__ void stage(float *dst, int stride, const float *src, int n, int c) {
  for (int i = threadIdx.x; i < n * CHUNK / 4; i += THREADS) {
    int r = i / (CHUNK / 4), q = i % (CHUNK / 4);
    float4 v = *reinterpret_cast<const float4 *>(src + (size_t)r * FEAT + c + q * 4);
    *reinterpret_cast<float4 *>(dst + r * stride + q * 4) = v;
  }
}

template <int MODE>  // 0: fp32, 1: tf32x1, 3: tf32x3, 4: tf32x3 transposed
__global__ void __launch_bounds__(THREADS, 2)
probe(const float *q, const float *k, const float *v, float *out, float scale) {
  extern __shared__ float smem[];
  float *s = smem;                    // [ROWS][PS]
  float *qa = s + ROWS * PS;          // Q chunk [ROWS][QS], later V chunk [SRCS][VS]... see below
  float *kb = qa + ROWS * QS;         // K chunk [SRCS][KS]
  float *vb = qa;                     // V chunk [SRCS][VS] (SRCS*VS = 5120 <= ROWS*QS + SRCS*KS)
  const size_t tile = blockIdx.x;
  const float *qt = q + tile * ROWS * FEAT, *kt = k + tile * SRCS * FEAT, *vt = v + tile * SRCS * FEAT;
  float *ot = out + tile * ROWS * FEAT;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

  // ---- scores S = Q·Kᵀ ----
  if (MODE == 0) {
    // 16 × 16 threads, each 4 rows × 8 sources.
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    float acc[4][8] = {};
    for (int c = 0; c < FEAT; c += CHUNK) {
      stage(qa, QS, qt, ROWS, c);
      stage(kb, KS, kt, SRCS, c);
      __syncthreads();
      for (int f = 0; f < CHUNK; f += 4) {
        float4 a[4], b[8];
        for (int i = 0; i < 4; i++) a[i] = *reinterpret_cast<float4 *>(qa + (ty * 4 + i) * QS + f);
        for (int j = 0; j < 8; j++) b[j] = *reinterpret_cast<float4 *>(kb + (tx + 16 * j) * KS + f);
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 8; j++) {
            acc[i][j] = fmaf(a[i].x, b[j].x, acc[i][j]);
            acc[i][j] = fmaf(a[i].y, b[j].y, acc[i][j]);
            acc[i][j] = fmaf(a[i].z, b[j].z, acc[i][j]);
            acc[i][j] = fmaf(a[i].w, b[j].w, acc[i][j]);
          }
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 8; j++) s[(ty * 4 + i) * PS + tx + 16 * j] = acc[i][j] * scale;
  } else if (MODE == 4) {
    // Warp w takes rows 8w .. 8w + 7 (n8) and every source (8 tiles of m16).
    float acc[8][4] = {};
    for (int c = 0; c < FEAT; c += CHUNK) {
      stage(qa, QS, qt, ROWS, c);
      stage(kb, KS, kt, SRCS, c);
      __syncthreads();
      for (int f = 0; f < CHUNK; f += 8) {
        uint32_t bh[2], bl[2];
        split(qa[(8 * warp + g) * QS + f + t], bh[0], bl[0]);
        split(qa[(8 * warp + g) * QS + f + t + 4], bh[1], bl[1]);
        for (int m = 0; m < 8; m++) {
          uint32_t ah[4], al[4];
          split(kb[(16 * m + g) * KS + f + t], ah[0], al[0]);
          split(kb[(16 * m + g + 8) * KS + f + t], ah[1], al[1]);
          split(kb[(16 * m + g) * KS + f + t + 4], ah[2], al[2]);
          split(kb[(16 * m + g + 8) * KS + f + t + 4], ah[3], al[3]);
          mma(acc[m], al, bh);
          mma(acc[m], ah, bl);
          mma(acc[m], ah, bh);
        }
      }
      __syncthreads();
    }
    for (int m = 0; m < 8; m++)
      for (int i = 0; i < 4; i++) s[(8 * warp + 2 * t + i % 2) * PS + 16 * m + g + 8 * (i / 2)] = acc[m][i] * scale;
  } else {
    // 8 warps: warp w takes rows 16·(w % 4) and sources 64·(w / 4) .. + 64 (8 tiles of n8).
    const int r0 = 16 * (warp % 4), n0 = 64 * (warp / 4);
    float acc[8][4] = {};
    for (int c = 0; c < FEAT; c += CHUNK) {
      stage(qa, QS, qt, ROWS, c);
      stage(kb, KS, kt, SRCS, c);
      __syncthreads();
      for (int f = 0; f < CHUNK; f += 8) {
        uint32_t ah[4], al[4];
        split(qa[(r0 + g) * QS + f + t], ah[0], al[0]);
        split(qa[(r0 + g + 8) * QS + f + t], ah[1], al[1]);
        split(qa[(r0 + g) * QS + f + t + 4], ah[2], al[2]);
        split(qa[(r0 + g + 8) * QS + f + t + 4], ah[3], al[3]);
        for (int j = 0; j < 8; j++) {
          uint32_t bh[2], bl[2];
          split(kb[(n0 + 8 * j + g) * KS + f + t], bh[0], bl[0]);
          split(kb[(n0 + 8 * j + g) * KS + f + t + 4], bh[1], bl[1]);
          if (MODE == 3) {
            mma(acc[j], al, bh);
            mma(acc[j], ah, bl);
          }
          mma(acc[j], ah, bh);
        }
      }
      __syncthreads();
    }
    for (int j = 0; j < 8; j++) {
      int col = n0 + 8 * j + 2 * t;
      s[(r0 + g) * PS + col] = acc[j][0] * scale;
      s[(r0 + g) * PS + col + 1] = acc[j][1] * scale;
      s[(r0 + g + 8) * PS + col] = acc[j][2] * scale;
      s[(r0 + g + 8) * PS + col + 1] = acc[j][3] * scale;
    }
  }
  __syncthreads();

  // ---- aggregation O = S·V, a chunk of CHUNK features at a time ----
  for (int c = 0; c < FEAT; c += CHUNK) {
    stage(vb, VS, vt, SRCS, c);
    __syncthreads();
    if (MODE == 0) {
      // 32 row pairs × 8 feature quads: 2 rows × 4 features a thread.
      const int rp = threadIdx.x / 8, fq = threadIdx.x % 8;
      float acc[2][4] = {};
      for (int j = 0; j < SRCS; j += 4) {
        float4 p0 = *reinterpret_cast<float4 *>(s + (2 * rp) * PS + j);
        float4 p1 = *reinterpret_cast<float4 *>(s + (2 * rp + 1) * PS + j);
        float pa[2][4] = {{p0.x, p0.y, p0.z, p0.w}, {p1.x, p1.y, p1.z, p1.w}};
        for (int u = 0; u < 4; u++) {
          float4 w = *reinterpret_cast<float4 *>(vb + (j + u) * VS + fq * 4);
          for (int i = 0; i < 2; i++) {
            acc[i][0] = fmaf(pa[i][u], w.x, acc[i][0]);
            acc[i][1] = fmaf(pa[i][u], w.y, acc[i][1]);
            acc[i][2] = fmaf(pa[i][u], w.z, acc[i][2]);
            acc[i][3] = fmaf(pa[i][u], w.w, acc[i][3]);
          }
        }
      }
      for (int i = 0; i < 2; i++)
        *reinterpret_cast<float4 *>(ot + (size_t)(2 * rp + i) * FEAT + c + fq * 4) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    } else if (MODE == 4) {
      // Warp w takes rows 8w .. 8w + 7 (n8) and the chunk's 32 features (2 tiles of m16).
      float acc[2][4] = {};
      for (int j = 0; j < SRCS; j += 8) {
        uint32_t bh[2], bl[2];
        split(s[(8 * warp + g) * PS + j + t], bh[0], bl[0]);
        split(s[(8 * warp + g) * PS + j + t + 4], bh[1], bl[1]);
        for (int m = 0; m < 2; m++) {
          uint32_t ah[4], al[4];
          for (int i = 0; i < 4; i++) split(vb[(j + t + 4 * (i / 2)) * VS + 16 * m + g + 8 * (i % 2)], ah[i], al[i]);
          mma(acc[m], al, bh);
          mma(acc[m], ah, bl);
          mma(acc[m], ah, bh);
        }
      }
      for (int m = 0; m < 2; m++)
        for (int i = 0; i < 4; i++)
          ot[(size_t)(8 * warp + 2 * t + i % 2) * FEAT + c + 16 * m + g + 8 * (i / 2)] = acc[m][i];
    } else {
      // 8 warps: warp w takes rows 16·(w % 4) and features 16·(w / 4) .. + 16 (2 tiles of n8).
      const int r0 = 16 * (warp % 4), n0 = 16 * (warp / 4);
      float acc[2][4] = {};
      for (int j = 0; j < SRCS; j += 8) {
        uint32_t ah[4], al[4];
        split(s[(r0 + g) * PS + j + t], ah[0], al[0]);
        split(s[(r0 + g + 8) * PS + j + t], ah[1], al[1]);
        split(s[(r0 + g) * PS + j + t + 4], ah[2], al[2]);
        split(s[(r0 + g + 8) * PS + j + t + 4], ah[3], al[3]);
        for (int n = 0; n < 2; n++) {
          uint32_t bh[2], bl[2];
          split(vb[(j + t) * VS + n0 + 8 * n + g], bh[0], bl[0]);
          split(vb[(j + t + 4) * VS + n0 + 8 * n + g], bh[1], bl[1]);
          if (MODE == 3) {
            mma(acc[n], al, bh);
            mma(acc[n], ah, bl);
          }
          mma(acc[n], ah, bh);
        }
      }
      for (int n = 0; n < 2; n++) {
        int col = c + n0 + 8 * n + 2 * t;
        *reinterpret_cast<float2 *>(ot + (size_t)(r0 + g) * FEAT + col) = make_float2(acc[n][0], acc[n][1]);
        *reinterpret_cast<float2 *>(ot + (size_t)(r0 + g + 8) * FEAT + col) = make_float2(acc[n][2], acc[n][3]);
      }
    }
    __syncthreads();
  }
}

int main() {
  const int tiles = 2408;
  const size_t nq = (size_t)tiles * ROWS * FEAT, nk = (size_t)tiles * SRCS * FEAT;
  std::vector<float> hq(nq), hk(nk), hv(nk);
  uint64_t st = 12345;
  auto rnd = [&]() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (float)((st >> 40) * (1.0 / (1 << 24)) * 2.0 - 1.0); };
  for (auto &x : hq) x = rnd();
  for (auto &x : hk) x = rnd();
  for (auto &x : hv) x = rnd();
  const float scale = 1.0f / sqrtf((float)FEAT);
  float *q, *k, *v, *o;
  CHECK(cudaMalloc(&q, nq * 4)); CHECK(cudaMalloc(&k, nk * 4)); CHECK(cudaMalloc(&v, nk * 4)); CHECK(cudaMalloc(&o, nq * 4));
  CHECK(cudaMemcpy(q, hq.data(), nq * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(k, hk.data(), nk * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(v, hv.data(), nk * 4, cudaMemcpyHostToDevice));
  // f64 reference for a few tiles.
  const int check_tiles[3] = {0, 1207, tiles - 1};
  std::vector<double> ref(3 * ROWS * FEAT);
  for (int ci = 0; ci < 3; ci++) {
    size_t tl = check_tiles[ci];
    for (int r = 0; r < ROWS; r++) {
      std::vector<double> srow(SRCS);
      for (int j = 0; j < SRCS; j++) {
        double a = 0;
        for (int f = 0; f < FEAT; f++) a += (double)hq[(tl * ROWS + r) * FEAT + f] * hk[(tl * SRCS + j) * FEAT + f];
        srow[j] = (double)(float)(a) * scale;
      }
      for (int f = 0; f < FEAT; f++) {
        double a = 0;
        for (int j = 0; j < SRCS; j++) a += srow[j] * hv[(tl * SRCS + j) * FEAT + f];
        ref[(ci * ROWS + r) * FEAT + f] = a;
      }
    }
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs; %d tiles of %d rows x %d sources x %d features; %d B shared a block\n",
         prop.name, prop.multiProcessorCount, tiles, ROWS, SRCS, FEAT, SMEM_BYTES);
  auto run = [&](const char *name, void (*kern)(const float *, const float *, const float *, float *, float)) {
    CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    int blocks_per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kern, THREADS, SMEM_BYTES));
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, kern));
    std::vector<float> times;
    for (int i = 0; i < 23; i++) {
      CHECK(cudaEventRecord(e0));
      kern<<<tiles, THREADS, SMEM_BYTES>>>(q, k, v, o, scale);
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      CHECK(cudaGetLastError());
      float ms;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= 3) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    std::vector<float> ho(nq);
    CHECK(cudaMemcpy(ho.data(), o, nq * 4, cudaMemcpyDeviceToHost));
    double worst = 0, norm = 0;
    for (int ci = 0; ci < 3; ci++)
      for (int i = 0; i < ROWS * FEAT; i++) {
        double r = ref[ci * ROWS * FEAT + i];
        double d = ho[(size_t)check_tiles[ci] * ROWS * FEAT + i] - r;
        worst = std::max(worst, fabs(d));
        norm = std::max(norm, fabs(r));
      }
    double flops = 2.0 * 2.0 * tiles * ROWS * SRCS * FEAT;
    printf("%-7s median %.4f ms (min %.4f, max %.4f)  %.1f TFLOP/s useful  regs %d  blocks/SM %d  "
           "max abs err / max |ref| = %.3e\n",
           name, times[times.size() / 2], times.front(), times.back(), flops / times[times.size() / 2] / 1e9,
           fa.numRegs, blocks_per_sm, worst / norm);
  };
  for (int rep = 0; rep < 2; rep++) {
    run("fp32", probe<0>);
    run("tf32x3", probe<3>);
    run("tf32x3t", probe<4>);
    run("tf32x1", probe<1>);
  }
  return 0;
}
