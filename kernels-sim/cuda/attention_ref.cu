// Reference attention forward (causal), written here because cuDNN fused attention is not wired up yet (see
// README.md). It is a plain SIMT kernel: one warp per query row, online softmax over keys, FP32 math, BF16
// tensors in [batch, seq, heads, dim] layout, no tensor cores. It is far slower than FlashAttention or cuDNN
// and its records say so: dtype "bf16_reference", so the fitter keeps it in its own family
// ("attention_fwd/bf16_reference") and never mixes it with tensor-core attention. Its use is to show the
// harness and the attention features work end to end, not to calibrate production attention.
#include <cuda_bf16.h>

#include "calib_common.cuh"

namespace calib {
namespace {

constexpr int kMaxDim = 256;  // head dims up to 256: 8 values per lane

__global__ void attention_fwd_ref(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                  __nv_bfloat16* o, int seq, int heads, int dqk, int dv, float scale) {
  const int warps_per_block = blockDim.x / 32;
  const int row = blockIdx.x * warps_per_block + threadIdx.x / 32;  // query index
  const int head = blockIdx.y, batch = blockIdx.z, lane = threadIdx.x % 32;
  if (row >= seq) return;
  const auto at = [&](int s, int dim) { return ((static_cast<long long>(batch) * seq + s) * heads + head) * dim; };
  float qr[kMaxDim / 32], acc[kMaxDim / 32];
  for (int i = 0; i < kMaxDim / 32; ++i) {
    const int d = lane + 32 * i;
    qr[i] = d < dqk ? __bfloat162float(q[at(row, dqk) + d]) : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -1e30f, l = 0.0f;
  for (int j = 0; j <= row; ++j) {  // causal
    float dot = 0.0f;
    for (int i = 0; i < kMaxDim / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < dqk) dot += qr[i] * __bfloat162float(k[at(j, dqk) + d]);
    }
    for (int off = 16; off; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    const float s = dot * scale, m_new = fmaxf(m, s), corr = __expf(m - m_new), p = __expf(s - m_new);
    l = l * corr + p;
    for (int i = 0; i < kMaxDim / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < dv) acc[i] = acc[i] * corr + p * __bfloat162float(v[at(j, dv) + d]);
    }
    m = m_new;
  }
  for (int i = 0; i < kMaxDim / 32; ++i) {
    const int d = lane + 32 * i;
    if (d < dv) o[at(row, dv) + d] = __float2bfloat16(acc[i] / l);
  }
}

}  // namespace

void run_attention(Writer& w, Timer& timer, const Settings& s) {
  const int batch = 1, heads = 16;
  const std::vector<int> seqs = s.quick ? std::vector<int>{1024} : std::vector<int>{512, 1024, 2048, 4096};
  const std::vector<std::pair<int, int>> dims = {{128, 128}, {192, 128}};  // GQA-style, MLA (DeepSeek-V3)
  for (int seq : seqs)
    for (const auto& dim : dims) {
      const int dqk = dim.first, dv = dim.second;  // named copies: lambdas cannot capture bindings in C++17
      const long long rows = static_cast<long long>(batch) * seq * heads;
      DeviceBuffer q(rows * dqk * 2), k(rows * dqk * 2), v(rows * dv * 2), o(rows * dv * 2);
      const dim3 grid((seq + 3) / 4, heads, batch);
      const Stats st = timer.time(
          [&] {
            attention_fwd_ref<<<grid, 128, 0, timer.stream()>>>(q.as<__nv_bfloat16>(), k.as<__nv_bfloat16>(),
                                                                v.as<__nv_bfloat16>(), o.as<__nv_bfloat16>(), seq,
                                                                heads, dqk, dv, 1.0f / sqrtf(static_cast<float>(dqk)));
          },
          2, s.quick ? 3 : 5);
      w.write("attention", {"attention_fwd",
                            "bf16_reference",
                            "simt_reference",
                            {{"batch", batch},
                             {"heads", heads},
                             {"seq_q", seq},
                             {"seq_kv", seq},
                             {"head_dim_qk", dqk},
                             {"head_dim_v", dv},
                             {"causal", 1}},
                            {},
                            0,
                            st});
    }
}

}  // namespace calib
