// Memory-bound MoE steps, written here (straightforward, coalesced, 16-byte accesses where rows allow):
//   permute      gather token rows into expert order by a routing map (T*top_k output rows)
//   unpermute    weighted sum of each token's top_k expert outputs back into token order
//   router_topk  sigmoid or softmax over expert logits, then top-k, one warp per token
//   rmsnorm      y = x / rms(x) * w, one block per token
//   swiglu       y = silu(gate) * up over [T, 2F] -> [T, F]
//   quantize_fp8 per-row 1x128 block scales (amax/448) and E4M3 values
// All BF16 unless noted; the fitter's byte counts for each are in kernels-sim/kernels/fit/features.cpp.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "calib_common.cuh"

namespace calib {
namespace {

constexpr int kVec = 8;  // bf16 per 16-byte access

__global__ void permute_kernel(const uint4* in, uint4* out, const int* src_row, int hidden_vec) {
  const int row = blockIdx.x;
  const uint4* s = in + static_cast<long long>(src_row[row]) * hidden_vec;
  uint4* d = out + static_cast<long long>(row) * hidden_vec;
  for (int i = threadIdx.x; i < hidden_vec; i += blockDim.x) d[i] = s[i];
}

__global__ void unpermute_kernel(const __nv_bfloat16* in, __nv_bfloat16* out, const int* pos, const float* weight,
                                 int hidden, int top_k) {
  const int t = blockIdx.x;
  for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
    float acc = 0;
    for (int j = 0; j < top_k; ++j)
      acc += weight[t * top_k + j] * __bfloat162float(in[static_cast<long long>(pos[t * top_k + j]) * hidden + h]);
    out[static_cast<long long>(t) * hidden + h] = __float2bfloat16(acc);
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
    if (best_e % 32 == lane) score[best_e / 32] = -2.0f;  // taken
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

std::vector<int> routing_rows(long long tokens, int top_k, std::mt19937& rng) {
  // A random routing, then sorted by expert: each output row reads a random earlier token.
  std::vector<int> src(tokens * top_k);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(tokens) - 1);
  for (auto& s : src) s = pick(rng);
  return src;
}

}  // namespace

void run_moe_kernels(Writer& w, Timer& timer, const Settings& s) {
  cudaStream_t st = timer.stream();
  std::mt19937 rng(1234);
  const std::vector<long long> token_counts =
      s.quick ? std::vector<long long>{4096} : std::vector<long long>{1024, 4096, 16384};
  const std::vector<int> hiddens = s.quick ? std::vector<int>{7168} : std::vector<int>{2048, 4096, 7168};
  for (long long tokens : token_counts)
    for (int hidden : hiddens)
      for (int top_k : {2, 8}) {
        const std::vector<int> src = routing_rows(tokens, top_k, rng);
        DeviceBuffer in(tokens * hidden * 2), out(tokens * top_k * hidden * 2), map(src.size() * 4),
            wts(src.size() * 4);
        CALIB_CUDA(cudaMemcpy(map.p, src.data(), src.size() * 4, cudaMemcpyHostToDevice));
        const Stats p = timer.time(
            [&] {
              permute_kernel<<<static_cast<unsigned>(tokens * top_k), 128, 0, st>>>(in.as<uint4>(), out.as<uint4>(),
                                                                                    map.as<int>(), hidden / kVec);
            },
            s.warmup, s.repeats);
        w.write("memory_bound",
                {"permute", "bf16", "", {{"tokens", tokens}, {"hidden", hidden}, {"top_k", top_k}}, {}, 0, p});
        // Unpermute reads the permuted rows back: position of (t, j) is a random row of the permuted buffer.
        const Stats u = timer.time(
            [&] {
              unpermute_kernel<<<static_cast<unsigned>(tokens), 256, 0, st>>>(
                  out.as<__nv_bfloat16>(), in.as<__nv_bfloat16>(), map.as<int>(), wts.as<float>(), hidden, top_k);
            },
            s.warmup, s.repeats);
        w.write("memory_bound",
                {"unpermute", "bf16", "", {{"tokens", tokens}, {"hidden", hidden}, {"top_k", top_k}}, {}, 0, u});
      }
  for (long long tokens : token_counts)
    for (int experts : {64, 256})
      for (bool softmax : {false, true}) {
        const int top_k = 8;
        DeviceBuffer logits(tokens * experts * 4), idx(tokens * top_k * 4), wts(tokens * top_k * 4);
        const Stats r = timer.time(
            [&] {
              router_topk_kernel<<<static_cast<unsigned>((tokens * 32 + 255) / 256), 256, 0, st>>>(
                  logits.as<float>(), idx.as<int>(), wts.as<float>(), static_cast<int>(tokens), experts, top_k,
                  softmax);
            },
            s.warmup, s.repeats);
        w.write("memory_bound", {"router_topk",
                                 "fp32",
                                 softmax ? "softmax" : "sigmoid",
                                 {{"tokens", tokens}, {"experts", experts}, {"top_k", top_k}},
                                 {},
                                 0,
                                 r});
      }
  for (long long tokens : token_counts)
    for (int hidden : hiddens) {
      DeviceBuffer x(tokens * hidden * 2), wt(hidden * 2), y(tokens * hidden * 2);
      const Stats r = timer.time(
          [&] {
            rmsnorm_kernel<<<static_cast<unsigned>(tokens), 256, 0, st>>>(x.as<__nv_bfloat16>(), wt.as<__nv_bfloat16>(),
                                                                          y.as<__nv_bfloat16>(), hidden);
          },
          s.warmup, s.repeats);
      w.write("memory_bound", {"rmsnorm", "bf16", "", {{"tokens", tokens}, {"hidden", hidden}}, {}, 0, r});
    }
  for (long long tokens : token_counts)
    for (int ffn : {2048, 4096, 18432}) {
      DeviceBuffer gu(tokens * 2 * ffn * 2), o(tokens * ffn * 2);
      const Stats r = timer.time(
          [&] {
            swiglu_kernel<<<4 * 132 * 8, 256, 0, st>>>(gu.as<__nv_bfloat16>(), o.as<__nv_bfloat16>(), tokens, ffn);
          },
          s.warmup, s.repeats);
      w.write("memory_bound", {"swiglu", "bf16", "", {{"tokens", tokens}, {"ffn", ffn}}, {}, 0, r});
    }
  for (long long rows : token_counts)
    for (int cols : {2048, 7168, 18432}) {
      const long long blocks = rows * cols / 128;
      DeviceBuffer x(rows * cols * 2), q(rows * cols), sc(blocks * 4);
      const Stats r = timer.time(
          [&] {
            quantize_fp8_kernel<<<static_cast<unsigned>((blocks * 32 + 255) / 256), 256, 0, st>>>(
                x.as<__nv_bfloat16>(), q.as<__nv_fp8_e4m3>(), sc.as<float>(), blocks);
          },
          s.warmup, s.repeats);
      w.write("memory_bound", {"quantize_fp8", "fp8_e4m3", "block128", {{"rows", rows}, {"cols", cols}}, {}, 0, r});
    }
}

void run_memcpy(Writer& w, Timer& timer, const Settings& s) {
  for (long long mib : s.quick ? std::vector<long long>{64, 512} : std::vector<long long>{1, 4, 16, 64, 256, 1024}) {
    const long long bytes = mib << 20;
    DeviceBuffer a(bytes), b(bytes);
    const Stats r =
        timer.time([&] { CALIB_CUDA(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, timer.stream())); },
                   s.warmup, s.repeats);
    w.write("memcpy", {"memcpy", "bytes", "d2d", {{"bytes", bytes}}, {}, 0, r});
  }
}

}  // namespace calib
