#include "kernels/kernel.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"

namespace moesim::kernels {
namespace {

// Output of GEMMs and attention is BF16 (assumption: Megatron/TE keep activations in BF16 between kernels).
constexpr double kOutputBytes = 2.0;

double gemm_bytes(double m, double n, double k, DType d) {
  return (m * k + k * n) * bytes_per_element(d) + m * n * kOutputBytes;
}

std::int64_t kv_heads_of(const AttentionShape& a) { return a.kv_heads > 0 ? a.kv_heads : a.heads; }

double attention_fwd_flops(const AttentionShape& a) {
  return 2.0 * static_cast<double>(a.batch * a.heads * a.seq_q) * attended_keys_per_query(a) *
         static_cast<double>(a.d_qk + a.d_v);
}

double attention_fwd_bytes(const AttentionShape& a) {
  const double e = bytes_per_element(a.dtype);
  const double q = static_cast<double>(a.batch * a.heads * a.seq_q);
  const double kv = static_cast<double>(a.batch * kv_heads_of(a) * a.seq_kv);
  return q * a.d_qk * e + kv * (a.d_qk + a.d_v) * e + q * a.d_v * kOutputBytes;
}

}  // namespace

double attended_keys_per_query(const AttentionShape& a) {
  if (a.seq_q <= 0 || a.seq_kv <= 0) return 0;
  const double skv = static_cast<double>(a.seq_kv);
  const double w = a.window > 0 ? static_cast<double>(a.window) : skv;
  if (!a.causal) return std::min(w, skv);
  // Query i (0-based among seq_q) sits at position p = seq_kv - seq_q + i and sees min(p + 1, w) keys.
  // Sum over p in [p0, p1] of min(p + 1, w), in closed form.
  const double p0 = std::max<double>(0, skv - static_cast<double>(a.seq_q));
  const double p1 = skv - 1;
  auto sum_linear = [](double from, double to) {  // sum of (p + 1) for p in [from, to]
    return to < from ? 0.0 : (to - from + 1) * (from + to + 2) / 2;
  };
  const double split = std::min(p1, w - 1);  // positions p <= w-1 see p+1 keys; later ones see w
  double total = sum_linear(p0, split);
  const double capped_from = std::max(p0, split + 1);
  if (p1 >= capped_from) total += (p1 - capped_from + 1) * w;
  return total / static_cast<double>(p1 - p0 + 1);
}

double flops(const Kernel& k) {
  struct V {
    double operator()(const Gemm& g) const { return 2.0 * g.m * g.n * g.k; }
    double operator()(const GroupedGemm& g) const {
      double rows = 0;
      for (auto t : g.tokens_per_expert) rows += static_cast<double>(t);
      return 2.0 * rows * g.n * g.k;
    }
    double operator()(const AttentionFwd& a) const { return attention_fwd_flops(a); }
    double operator()(const AttentionBwd& a) const { return 2.5 * attention_fwd_flops(a); }
    double operator()(const MemoryBound&) const { return 0; }
  };
  return std::visit(V{}, k);
}

double hbm_bytes(const Kernel& k) {
  struct V {
    double operator()(const Gemm& g) const {
      return gemm_bytes(static_cast<double>(g.m), static_cast<double>(g.n), static_cast<double>(g.k), g.dtype);
    }
    double operator()(const GroupedGemm& g) const {
      double total = 0;
      for (auto t : g.tokens_per_expert)
        if (t > 0)
          total += gemm_bytes(static_cast<double>(t), static_cast<double>(g.n), static_cast<double>(g.k), g.dtype);
      return total;
    }
    double operator()(const AttentionFwd& a) const { return attention_fwd_bytes(a); }
    // Backward reads Q, K, V, O, dO and writes dQ, dK, dV: about twice the forward traffic.
    double operator()(const AttentionBwd& a) const { return 2.0 * attention_fwd_bytes(a); }
    double operator()(const MemoryBound& m) const { return m.bytes; }
  };
  return std::visit(V{}, k);
}

std::string describe(const Kernel& k) {
  std::ostringstream os;
  struct V {
    std::ostringstream& os;
    void operator()(const Gemm& g) const {
      os << "gemm " << g.m << "x" << g.n << "x" << g.k << " " << to_string(g.dtype);
    }
    void operator()(const GroupedGemm& g) const {
      std::int64_t rows = 0;
      for (auto t : g.tokens_per_expert) rows += t;
      os << "grouped_gemm " << g.tokens_per_expert.size() << " experts, " << rows << " rows, n=" << g.n << " k=" << g.k
         << " " << to_string(g.dtype) << (g.per_expert_kernels ? " per-expert kernels" : "");
    }
    void attention(const char* dir, const AttentionShape& a) const {
      os << "attention_" << dir << " b=" << a.batch << " h=" << a.heads << " sq=" << a.seq_q << " skv=" << a.seq_kv
         << " d=" << a.d_qk << "/" << a.d_v << (a.causal ? " causal" : "");
      if (a.window > 0) os << " window=" << a.window;
      if (a.keys_per_call > 0) os << " keys_per_call=" << a.keys_per_call;
      os << " " << to_string(a.dtype);
    }
    void operator()(const AttentionFwd& a) const { attention("fwd", a); }
    void operator()(const AttentionBwd& a) const { attention("bwd", a); }
    void operator()(const MemoryBound& m) const { os << "memory_bound " << m.name << " " << m.bytes << " B"; }
  };
  std::visit(V{os}, k);
  return os.str();
}

}  // namespace moesim::kernels
