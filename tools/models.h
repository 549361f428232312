// Linear-layer shapes of model presets (one transformer block; weights are random).
#pragma once

#include <string>
#include <vector>

namespace lowbit::cli {

struct Layer {
  std::string name;
  int n, k;
};

struct Model {
  std::string name;
  int blocks;  // transformer blocks: per-token cost = blocks × one block
  std::vector<Layer> layers;
};

inline Model transformer(const std::string& name, int blocks, int hidden, int inter, int heads,
                         int kv_heads, int head_dim) {
  return {name, blocks,
          {{"attn.q", heads * head_dim, hidden},
           {"attn.k", kv_heads * head_dim, hidden},
           {"attn.v", kv_heads * head_dim, hidden},
           {"attn.o", hidden, heads * head_dim},
           {"mlp.gate", inter, hidden},
           {"mlp.up", inter, hidden},
           {"mlp.down", hidden, inter}}};
}

inline const std::vector<Model>& models() {
  static const std::vector<Model> m = {
      transformer("llama3-8b", 32, 4096, 14336, 32, 8, 128),
      transformer("llama3.2-1b", 16, 2048, 8192, 32, 8, 64),
      transformer("qwen2.5-0.5b", 24, 896, 4864, 14, 2, 64),
  };
  return m;
}

}  // namespace lowbit::cli
