// STAND-INS for Transformer Engine's memory-bound MoE kernels, written here (straightforward, coalesced, 16-byte
// accesses where rows allow). They are not TE's kernels, and every record and the provenance say so
// (calib_plan.cpp); a fit of them is a lower bound for tuned production kernels.
//   permute      gathers token rows into expert order: a true permutation of all T x top_k routed copies
//                (each token routed to top_k distinct experts at random, copies sorted by expert)
//   unpermute    probability-weighted sum of each token's top_k copies back into token order, through the
//                inverse of that permutation
//   router_topk  sigmoid or softmax over expert logits, then top-k, one warp per token
//   rmsnorm      y = x / rms(x) * w, one block per token
//   swiglu       y = silu(gate) * up over [T, 2F] -> [T, F]
//   quantize_fp8 per-row 1x128 block scales (amax/448) and E4M3 values
// BF16 unless noted; inputs are random. The fitter's byte counts are in kernels-sim/kernels/fit/features.cpp
// (permute and unpermute: the step builder's count, kernels-sim/kernels/token_pass_bytes.hpp).
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "calib_cuda.cuh"

namespace calib {
namespace {

constexpr int kVec = 8;  // bf16 per 16-byte access

__global__ void permute_kernel(const uint4* in, uint4* out, const int* src_token, int hidden_vec) {
  const long long row = blockIdx.x;
  const uint4* s = in + static_cast<long long>(src_token[row]) * hidden_vec;
  uint4* d = out + row * hidden_vec;
  for (int i = threadIdx.x; i < hidden_vec; i += blockDim.x) d[i] = s[i];
}

__global__ void unpermute_kernel(const __nv_bfloat16* in, __nv_bfloat16* out, const int* row_of, const float* prob,
                                 int hidden, int top_k) {
  const long long t = blockIdx.x;
  for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
    float acc = 0;
    for (int j = 0; j < top_k; ++j)
      acc += prob[t * top_k + j] * __bfloat162float(in[static_cast<long long>(row_of[t * top_k + j]) * hidden + h]);
    out[t * hidden + h] = __float2bfloat16(acc);
  }
}

// One warp per token; experts <= 32 * 16.
__global__ void router_topk_kernel(const float* logits, int* idx, float* weight, int tokens, int experts, int top_k,
                                   bool softmax) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= tokens) return;
  float score[16];
  const int per_lane = (experts + 31) / 32;
  float mx = -1e30f;
  for (int i = 0; i < per_lane; ++i) {
    const int e = lane + 32 * i;
    score[i] = e < experts ? logits[static_cast<long long>(warp) * experts + e] : -1e30f;
    mx = fmaxf(mx, score[i]);
  }
  for (int o = 16; o; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  float sum = 0;
  for (int i = 0; i < per_lane; ++i) {
    const int e = lane + 32 * i;
    score[i] = e >= experts ? -1.0f : softmax ? __expf(score[i] - mx) : 1.0f / (1.0f + __expf(-score[i]));
    if (e < experts) sum += score[i];
  }
  for (int o = 16; o; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  for (int j = 0; j < top_k; ++j) {
    float best = -1.0f;
    int best_e = -1;
    for (int i = 0; i < per_lane; ++i)
      if (score[i] > best) best = score[i], best_e = lane + 32 * i;
    for (int o = 16; o; o /= 2) {
      const float ob = __shfl_xor_sync(0xffffffffu, best, o);
      const int oe = __shfl_xor_sync(0xffffffffu, best_e, o);
      if (ob > best || (ob == best && oe < best_e)) best = ob, best_e = oe;
    }
    if (lane == 0) {
      idx[warp * top_k + j] = best_e;
      weight[warp * top_k + j] = softmax ? best / sum : best;
    }
    if (best_e >= 0 && best_e % 32 == lane) score[best_e / 32] = -2.0f;  // taken
  }
}

__global__ void rmsnorm_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int hidden) {
  __shared__ float partial[32];
  const long long base = static_cast<long long>(blockIdx.x) * hidden;
  float ss = 0;
  for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
    const float v = __bfloat162float(x[base + h]);
    ss += v * v;
  }
  for (int o = 16; o; o /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    ss = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0;
    for (int o = 16; o; o /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (threadIdx.x == 0) partial[0] = rsqrtf(ss / hidden + 1e-6f);
  }
  __syncthreads();
  const float inv = partial[0];
  for (int h = threadIdx.x; h < hidden; h += blockDim.x)
    y[base + h] = __float2bfloat16(__bfloat162float(x[base + h]) * inv * __bfloat162float(w[h]));
}

__global__ void swiglu_kernel(const __nv_bfloat16* gate_up, __nv_bfloat16* out, long long tokens, int ffn) {
  const long long n = tokens * ffn;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long t = i / ffn, f = i % ffn;
    const float g = __bfloat162float(gate_up[t * 2 * ffn + f]);
    const float u = __bfloat162float(gate_up[t * 2 * ffn + ffn + f]);
    out[i] = __float2bfloat16(g / (1.0f + __expf(-g)) * u);
  }
}

// One warp per 128-element block of a row: 4 values per lane.
__global__ void quantize_fp8_kernel(const __nv_bfloat16* x, __nv_fp8_e4m3* q, float* scale, long long blocks) {
  const long long blk = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (blk >= blocks) return;
  float v[4], amax = 0;
  for (int i = 0; i < 4; ++i) {
    v[i] = __bfloat162float(x[blk * 128 + lane * 4 + i]);
    amax = fmaxf(amax, fabsf(v[i]));
  }
  for (int o = 16; o; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float s = amax > 0 ? amax / 448.0f : 1.0f;  // 448 = largest E4M3 value
  for (int i = 0; i < 4; ++i) q[blk * 128 + lane * 4 + i] = __nv_fp8_e4m3(v[i] / s);
  if (lane == 0) scale[blk] = s;
}

// A routing of every token to top_k distinct experts (uniform, fixed seed), its copies sorted by expert (stable):
// src_token[row] is the token of permuted row `row`, and row_of[t * top_k + j] the row of token t's j-th copy.
struct Routing {
  std::vector<int> src_token, row_of;
};

Routing route(long long tokens, int top_k, int experts) {
  std::mt19937 rng(1234);
  std::vector<int> expert_ids(static_cast<std::size_t>(experts));
  std::iota(expert_ids.begin(), expert_ids.end(), 0);
  std::vector<int> expert_of(static_cast<std::size_t>(tokens * top_k));
  for (long long t = 0; t < tokens; ++t)
    for (int j = 0; j < top_k; ++j) {  // partial Fisher-Yates: the first top_k of a shuffle are distinct
      std::uniform_int_distribution<int> pick(j, experts - 1);
      std::swap(expert_ids[j], expert_ids[pick(rng)]);
      expert_of[t * top_k + j] = expert_ids[j];
    }
  std::vector<int> copies(expert_of.size());
  std::iota(copies.begin(), copies.end(), 0);
  std::stable_sort(copies.begin(), copies.end(), [&](int a, int b) { return expert_of[a] < expert_of[b]; });
  Routing r;
  r.src_token.resize(copies.size());
  r.row_of.resize(copies.size());
  for (std::size_t row = 0; row < copies.size(); ++row) {
    r.src_token[row] = copies[row] / top_k;
    r.row_of[copies[row]] = static_cast<int>(row);
  }
  return r;
}

void upload(const DeviceBuffer& b, const std::vector<int>& v, cudaStream_t st) {
  CALIB_CUDA(cudaMemcpyAsync(b.p, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice, st));
  CALIB_CUDA(cudaStreamSynchronize(st));  // v is pageable host memory owned by the caller
}

unsigned blocks_of(long long n) { return static_cast<unsigned>(n); }

}  // namespace

Stats run_moe_case(Timer& timer, const Record& r, const Settings& s) {
  cudaStream_t st = timer.stream();
  const auto bf16 = [](long long elements) { return static_cast<std::size_t>(elements) * 2; };
  if (r.kernel == "permute" || r.kernel == "unpermute") {
    const long long tokens = dim(r, "tokens"), hidden = dim(r, "hidden");
    const int top_k = static_cast<int>(dim(r, "top_k")), experts = static_cast<int>(dim(r, "experts"));
    if (hidden % kVec != 0) throw Failure("hidden must be a multiple of 8 (16-byte rows)");
    if (top_k > experts) throw Failure("top_k exceeds experts");
    const Routing routing = route(tokens, top_k, experts);
    DeviceBuffer tok(bf16(tokens * hidden)), copies(bf16(tokens * top_k * hidden)),
        map(routing.src_token.size() * sizeof(int)), prob(routing.src_token.size() * sizeof(float));
    fill_random(tok, Fill::bf16, 5, st);
    fill_random(copies, Fill::bf16, 6, st);
    fill_random(prob, Fill::fp32, 7, st);
    if (r.kernel == "permute") {
      upload(map, routing.src_token, st);
      return timer.time(
          [&] {
            permute_kernel<<<blocks_of(tokens * top_k), 128, 0, st>>>(tok.as<uint4>(), copies.as<uint4>(),
                                                                      map.as<int>(), static_cast<int>(hidden / kVec));
            CALIB_LAUNCHED();
          },
          s.warmup, s.repeats);
    }
    upload(map, routing.row_of, st);
    return timer.time(
        [&] {
          unpermute_kernel<<<blocks_of(tokens), 256, 0, st>>>(copies.as<__nv_bfloat16>(), tok.as<__nv_bfloat16>(),
                                                              map.as<int>(), prob.as<float>(), static_cast<int>(hidden),
                                                              top_k);
          CALIB_LAUNCHED();
        },
        s.warmup, s.repeats);
  }
  if (r.kernel == "router_topk") {
    const long long tokens = dim(r, "tokens");
    const int experts = static_cast<int>(dim(r, "experts")), top_k = static_cast<int>(dim(r, "top_k"));
    if (experts > 32 * 16) throw Failure("router_topk stand-in handles at most 512 experts");
    DeviceBuffer logits(static_cast<std::size_t>(tokens * experts) * 4),
        idx(static_cast<std::size_t>(tokens * top_k) * 4), wts(static_cast<std::size_t>(tokens * top_k) * 4);
    fill_random(logits, Fill::fp32, 8, st);
    const bool softmax = r.variant == "softmax";
    return timer.time(
        [&] {
          router_topk_kernel<<<blocks_of((tokens * 32 + 255) / 256), 256, 0, st>>>(
              logits.as<float>(), idx.as<int>(), wts.as<float>(), static_cast<int>(tokens), experts, top_k, softmax);
          CALIB_LAUNCHED();
        },
        s.warmup, s.repeats);
  }
  if (r.kernel == "rmsnorm") {
    const long long tokens = dim(r, "tokens"), hidden = dim(r, "hidden");
    DeviceBuffer x(bf16(tokens * hidden)), w(bf16(hidden)), y(bf16(tokens * hidden));
    fill_random(x, Fill::bf16, 9, st);
    fill_random(w, Fill::bf16, 10, st);
    return timer.time(
        [&] {
          rmsnorm_kernel<<<blocks_of(tokens), 256, 0, st>>>(x.as<__nv_bfloat16>(), w.as<__nv_bfloat16>(),
                                                            y.as<__nv_bfloat16>(), static_cast<int>(hidden));
          CALIB_LAUNCHED();
        },
        s.warmup, s.repeats);
  }
  if (r.kernel == "swiglu") {
    const long long tokens = dim(r, "tokens"), ffn = dim(r, "ffn");
    DeviceBuffer gu(bf16(tokens * 2 * ffn)), o(bf16(tokens * ffn));
    fill_random(gu, Fill::bf16, 11, st);
    return timer.time(
        [&] {
          swiglu_kernel<<<4 * 132 * 8, 256, 0, st>>>(gu.as<__nv_bfloat16>(), o.as<__nv_bfloat16>(), tokens,
                                                     static_cast<int>(ffn));
          CALIB_LAUNCHED();
        },
        s.warmup, s.repeats);
  }
  if (r.kernel == "quantize_fp8") {
    const long long rows = dim(r, "rows"), cols = dim(r, "cols");
    if (cols % 128 != 0) throw Failure("cols must be a multiple of 128 (1x128 blocks)");
    const long long blocks = rows * cols / 128;
    DeviceBuffer x(bf16(rows * cols)), q(static_cast<std::size_t>(rows * cols)),
        sc(static_cast<std::size_t>(blocks) * 4);
    fill_random(x, Fill::bf16, 12, st);
    return timer.time(
        [&] {
          quantize_fp8_kernel<<<blocks_of((blocks * 32 + 255) / 256), 256, 0, st>>>(
              x.as<__nv_bfloat16>(), q.as<__nv_fp8_e4m3>(), sc.as<float>(), blocks);
          CALIB_LAUNCHED();
        },
        s.warmup, s.repeats);
  }
  throw Failure("no stand-in kernel for \"" + r.kernel + "\"");
}

}  // namespace calib
