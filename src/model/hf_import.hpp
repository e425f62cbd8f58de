#pragma once
// Import of a Hugging Face config.json into a ModelSpec.
//
// Supported layouts (by "architectures"[0], else "model_type"):
//   DeepseekV3ForCausalLM / DeepseekV2ForCausalLM (deepseek_v3, deepseek_v2, kimi_k2): MLA + MoE + MTP
//   Qwen3MoeForCausalLM (qwen3_moe), Qwen3ForCausalLM (qwen3): GQA with QK-norm
//   MixtralForCausalLM (mixtral), GptOssForCausalLM (gpt_oss), LlamaForCausalLM (llama),
//   MistralForCausalLM (mistral)
// Keys moesim does not need are ignored (HF configs carry many: rope scaling, token ids, quantization);
// keys it needs are required, with their usual HF defaults where HF has one. Problems come out as one
// ConfigError with the file and the HF key's JSON pointer.
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/model_spec.hpp"

namespace moesim::config {
struct Document;
}

namespace moesim::model {

// Architectures (HF class names) the importer understands, for error messages and docs.
std::vector<std::string> supported_hf_architectures();

// Reads a parsed config.json, adding problems to `diags`. The spec's name is the folder holding
// "config.json" (HF's repository layout), or the file's stem for any other file name.
ModelSpec read_hf_config(const config::Document& doc, Diagnostics& diags);

}  // namespace moesim::model
