// Built-in gradient tensor lists of well-known models, so collective patterns of
// data-parallel training can be generated without PyTorch. Shapes and names follow
// torchvision / Hugging Face exactly (see docs/trace-format.md for the sources).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"

namespace cb::dl {

struct Tensor {
  std::string name;            // e.g. "layer1.0.conv1.weight"
  std::vector<int64_t> shape;  // as torch reports it
  Dtype dtype = Dtype::Float;

  size_t numel() const;
  size_t bytes() const;
};

struct Model {
  std::string name;  // registry key, e.g. "resnet50"
  std::string description;
  std::vector<Tensor> tensors;  // registration order, as model.parameters() yields them

  size_t total_params() const;
  size_t total_bytes() const;
};

// nullptr if unknown; the lookup ignores case. The pointer stays valid for the program's life.
const Model* find_model(std::string_view name);
// Registry keys in a stable order: resnet50, vgg16, bert-base, gpt2.
std::vector<std::string> model_names();

}  // namespace cb::dl
