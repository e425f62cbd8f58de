// Grouped GEMM for ragged expert batches through cublasGemmGroupedBatchedEx (BF16 in and out, FP32
// accumulate): expert e computes C_e[m_e, n] = A_e[m_e, k] * W_e[k, n]. Tokens per expert come from two
// distributions over the local experts: "balanced" (equal rows) and "skewed" (Zipf, exponent 1.2, a
// deterministic stand-in for imbalanced routing). Experts that get no rows are not launched; the record's
// "groups" lists the rows of the launched experts and shape.experts the local expert count.
#include <cublas_v2.h>

#include <cmath>
#include <numeric>

#include "calib_common.cuh"

namespace calib {
namespace {

std::vector<long long> split_rows(long long total, int experts, bool skewed) {
  std::vector<double> weight(experts, 1.0);
  if (skewed)
    for (int e = 0; e < experts; ++e) weight[e] = 1.0 / std::pow(e + 1.0, 1.2);
  const double sum = std::accumulate(weight.begin(), weight.end(), 0.0);
  std::vector<long long> rows(experts);
  long long given = 0;
  for (int e = 0; e < experts; ++e) given += rows[e] = static_cast<long long>(std::floor(total * weight[e] / sum));
  for (int e = 0; given < total; e = (e + 1) % experts, ++given) ++rows[e];  // hand out the remainder
  return rows;
}

}  // namespace

void run_grouped_gemm(Writer& w, Timer& timer, const Settings& s) {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasCreate failed\n");
    std::exit(1);
  }
  CALIB_CUDA(cudaStreamSynchronize(timer.stream()));
  cublasSetStream(h, timer.stream());
  const std::vector<int> expert_counts = s.quick ? std::vector<int>{8} : std::vector<int>{4, 8, 32};
  const std::vector<long long> totals =
      s.quick ? std::vector<long long>{16384} : std::vector<long long>{2048, 8192, 32768};
  const std::vector<std::pair<long long, long long>> nks = {{4096, 7168}, {7168, 2048}};  // fc1 (gate+up), fc2
  for (int experts : expert_counts)
    for (long long total : totals)
      for (auto [n, k] : nks)
        for (bool skewed : {false, true}) {
          std::vector<long long> rows = split_rows(total, experts, skewed);
          std::vector<long long> launched;
          for (long long r : rows)
            if (r > 0) launched.push_back(r);
          const int g = static_cast<int>(launched.size());
          DeviceBuffer a(total * k * 2), wts(static_cast<std::size_t>(g) * k * n * 2), c(total * n * 2);
          std::vector<const void*> ap(g), bp(g);
          std::vector<void*> cp(g);
          std::vector<int> m_arr(g), n_arr(g, static_cast<int>(n)), k_arr(g, static_cast<int>(k)),
              lda(g, static_cast<int>(k)), ldb(g, static_cast<int>(k)), ldc(g), group_size(g, 1);
          std::vector<cublasOperation_t> ta(g, CUBLAS_OP_T), tb(g, CUBLAS_OP_N);
          std::vector<float> alpha(g, 1.0f), beta(g, 0.0f);
          long long offset = 0;
          for (int e = 0; e < g; ++e) {
            m_arr[e] = ldc[e] = static_cast<int>(launched[e]);
            ap[e] = a.as<char>() + offset * k * 2;  // A_e^T stored k x m_e
            bp[e] = wts.as<char>() + static_cast<std::size_t>(e) * k * n * 2;
            cp[e] = c.as<char>() + offset * n * 2;
            offset += launched[e];
          }
          DeviceBuffer dap(g * sizeof(void*)), dbp(g * sizeof(void*)), dcp(g * sizeof(void*));
          CALIB_CUDA(cudaMemcpy(dap.p, ap.data(), g * sizeof(void*), cudaMemcpyHostToDevice));
          CALIB_CUDA(cudaMemcpy(dbp.p, bp.data(), g * sizeof(void*), cudaMemcpyHostToDevice));
          CALIB_CUDA(cudaMemcpy(dcp.p, cp.data(), g * sizeof(void*), cudaMemcpyHostToDevice));
          bool ok = true;
          const Stats st = timer.time(
              [&] {
                const cublasStatus_t r = cublasGemmGroupedBatchedEx(
                    h, ta.data(), tb.data(), m_arr.data(), n_arr.data(), k_arr.data(), alpha.data(),
                    dap.as<const void*>(), CUDA_R_16BF, lda.data(), dbp.as<const void*>(), CUDA_R_16BF, ldb.data(),
                    beta.data(), dcp.as<void*>(), CUDA_R_16BF, ldc.data(), g, group_size.data(), CUBLAS_COMPUTE_32F);
                ok = ok && r == CUBLAS_STATUS_SUCCESS;
              },
              s.warmup, s.repeats);
          if (!ok) {
            std::printf("grouped_gemm experts=%d total=%lld: cublasGemmGroupedBatchedEx failed, skipped\n", experts,
                        total);
            continue;
          }
          Record r{"grouped_gemm",
                   "bf16",
                   skewed ? "skewed" : "balanced",
                   {{"n", n}, {"k", k}, {"experts", experts}, {"tokens", total}},
                   launched,
                   0,
                   st};
          w.write("grouped_gemm", r);
        }
  cublasDestroy(h);
}

}  // namespace calib
