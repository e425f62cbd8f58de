#include "comm/volumes.hpp"

#include "core/error.hpp"

namespace moesim::comm {

std::vector<CollectiveVolume> tp_layer_volumes(const ActivationShape& a, int tp, int cp, bool sp, bool moe_etp1,
                                               Pass pass) {
  if (tp < 1 || cp < 1) throw InternalError("tp and cp must be >= 1");
  if (tp == 1) return {};
  const double s_act = a.seq / cp * a.micro_batch * a.hidden * a.bytes_per_element;
  const int regions = moe_etp1 ? 1 : 2;
  if (!sp) return {{"tp all-reduce", Collective::all_reduce, tp, s_act, regions}};
  if (pass == Pass::forward)
    return {{"tp all-gather before QKV / FC1", Collective::all_gather, tp, s_act, regions},
            {"tp reduce-scatter after o_proj / FC2", Collective::reduce_scatter, tp, s_act, regions}};
  return {{"tp all-gather (transpose of the forward reduce-scatter)", Collective::all_gather, tp, s_act, regions},
          {"tp reduce-scatter (transpose of the forward all-gather)", Collective::reduce_scatter, tp, s_act, regions},
          {"tp re-all-gather of the saved sharded input for wgrad", Collective::all_gather, tp, s_act, regions}};
}

std::vector<CollectiveVolume> cp_layer_volumes(const ActivationShape& a, int cp, CpComm kind, double kv, double dim,
                                               Pass pass) {
  if (cp < 1) throw InternalError("cp must be >= 1");
  if (cp == 1) return {};
  const double local_tokens = a.seq / cp * a.micro_batch;
  switch (kind) {
    case CpComm::p2p: {
      const double chunk = local_tokens * kv * a.bytes_per_element;
      const int steps = (cp - 1) * (pass == Pass::forward ? 1 : 2);
      return {{pass == Pass::forward ? "cp ring send of K,V" : "cp ring send of K,V and dK,dV", Collective::send_recv,
               cp, chunk, steps}};
    }
    case CpComm::all_gather: {
      const double full = a.seq * a.micro_batch * kv * a.bytes_per_element;
      if (pass == Pass::forward) return {{"cp all-gather of K,V", Collective::all_gather, cp, full, 1}};
      return {{"cp reduce-scatter of dK,dV", Collective::reduce_scatter, cp, full, 1}};
    }
    case CpComm::a2a:
      return {{"cp (Ulysses) all-to-all of Q, K, V in and O out", Collective::all_to_all, cp,
               local_tokens * dim * a.bytes_per_element, 4}};
  }
  throw InternalError("cp_layer_volumes: bad kind");
}

CollectiveVolume pp_boundary_volume(const ActivationShape& a, int tp, int cp, bool sp) {
  const double tokens = a.seq / cp / (sp ? tp : 1) * a.micro_batch;
  return {"pp stage boundary send/recv", Collective::send_recv, 2, tokens * a.hidden * a.bytes_per_element, 1};
}

std::vector<CollectiveVolume> dp_step_volumes(double params_local, int dp, double grad_bytes, double param_bytes) {
  if (dp <= 1) return {};
  return {{"dp reduce-scatter of gradients", Collective::reduce_scatter, dp, params_local * grad_bytes, 1},
          {"dp all-gather of parameters", Collective::all_gather, dp, params_local * param_bytes, 1}};
}

int ep_all_to_alls_per_layer(bool moe_recompute) { return moe_recompute ? 6 : 4; }

}  // namespace moesim::comm
