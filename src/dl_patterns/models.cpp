#include "dl_patterns/models.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace cb::dl {
namespace {

// Appends parameters under the naming conventions of torch.nn modules.
class Builder {
 public:
  explicit Builder(Model& model) : model_(model) {}

  void param(std::string name, std::vector<int64_t> shape) {
    model_.tensors.push_back({std::move(name), std::move(shape), Dtype::Float});
  }
  // nn.Linear stores weight as (out, in).
  void linear(const std::string& prefix, int64_t in, int64_t out) {
    param(prefix + ".weight", {out, in});
    param(prefix + ".bias", {out});
  }
  // Hugging Face Conv1D (GPT-2) stores weight transposed: (in, out).
  void conv1d(const std::string& prefix, int64_t in, int64_t out) {
    param(prefix + ".weight", {in, out});
    param(prefix + ".bias", {out});
  }
  void conv(const std::string& name, int64_t out, int64_t in, int64_t k) {
    param(name, {out, in, k, k});
  }
  // BatchNorm and LayerNorm both hold an affine weight and bias; running stats are buffers.
  void norm(const std::string& prefix, int64_t channels) {
    param(prefix + ".weight", {channels});
    param(prefix + ".bias", {channels});
  }

 private:
  Model& model_;
};

// torchvision resnet50: Bottleneck blocks [3, 4, 6, 3], bias-free convs, expansion 4.
Model resnet50() {
  Model m{"resnet50", "ResNet-50 (torchvision), 161 tensors, 25.6 M parameters", {}};
  Builder b(m);
  b.conv("conv1.weight", 64, 3, 7);
  b.norm("bn1", 64);
  const int blocks[] = {3, 4, 6, 3};
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i) + ".";
      b.conv(p + "conv1.weight", width, in, 1);
      b.norm(p + "bn1", width);
      b.conv(p + "conv2.weight", width, width, 3);
      b.norm(p + "bn2", width);
      b.conv(p + "conv3.weight", 4 * width, width, 1);
      b.norm(p + "bn3", 4 * width);
      if (i == 0) {  // the first block of each stage changes the channel count
        b.conv(p + "downsample.0.weight", 4 * width, in, 1);
        b.norm(p + "downsample.1", 4 * width);
      }
      in = 4 * width;
    }
  }
  b.linear("fc", 2048, 1000);
  return m;
}

// torchvision vgg16 (cfg "D", no batch norm). Module indices count the ReLU after each
// conv and each max-pool, which is why the names skip numbers.
Model vgg16() {
  Model m{"vgg16", "VGG-16 (torchvision, cfg D), 32 tensors, 138.4 M parameters", {}};
  Builder b(m);
  constexpr int kPool = 0;
  const int cfg[] = {64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                     kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
  int64_t in = 3;
  int index = 0;
  for (int channels : cfg) {
    if (channels == kPool) {
      index += 1;
      continue;
    }
    const std::string p = "features." + std::to_string(index);
    b.conv(p + ".weight", channels, in, 3);
    b.param(p + ".bias", {channels});
    in = channels;
    index += 2;  // conv + ReLU
  }
  b.linear("classifier.0", 512 * 7 * 7, 4096);
  b.linear("classifier.3", 4096, 4096);
  b.linear("classifier.6", 4096, 1000);
  return m;
}

// Hugging Face BertModel (bert-base-uncased): no pre-training heads.
Model bert_base() {
  Model m{"bert-base", "BERT-base (Hugging Face BertModel), 199 tensors, 109.5 M parameters", {}};
  Builder b(m);
  constexpr int64_t kHidden = 768, kFfn = 3072;
  b.param("embeddings.word_embeddings.weight", {30522, kHidden});
  b.param("embeddings.position_embeddings.weight", {512, kHidden});
  b.param("embeddings.token_type_embeddings.weight", {2, kHidden});
  b.norm("embeddings.LayerNorm", kHidden);
  for (int layer = 0; layer < 12; ++layer) {
    const std::string p = "encoder.layer." + std::to_string(layer) + ".";
    b.linear(p + "attention.self.query", kHidden, kHidden);
    b.linear(p + "attention.self.key", kHidden, kHidden);
    b.linear(p + "attention.self.value", kHidden, kHidden);
    b.linear(p + "attention.output.dense", kHidden, kHidden);
    b.norm(p + "attention.output.LayerNorm", kHidden);
    b.linear(p + "intermediate.dense", kHidden, kFfn);
    b.linear(p + "output.dense", kFfn, kHidden);
    b.norm(p + "output.LayerNorm", kHidden);
  }
  b.linear("pooler.dense", kHidden, kHidden);
  return m;
}

// Hugging Face GPT2LMHeadModel (gpt2, "small"). lm_head.weight is tied to wte, so
// named_parameters() reports it once, as transformer.wte.weight.
Model gpt2() {
  Model m{"gpt2", "GPT-2 small (Hugging Face, lm_head tied), 148 tensors, 124.4 M parameters", {}};
  Builder b(m);
  constexpr int64_t kHidden = 768;
  b.param("transformer.wte.weight", {50257, kHidden});
  b.param("transformer.wpe.weight", {1024, kHidden});
  for (int block = 0; block < 12; ++block) {
    const std::string p = "transformer.h." + std::to_string(block) + ".";
    b.norm(p + "ln_1", kHidden);
    b.conv1d(p + "attn.c_attn", kHidden, 3 * kHidden);
    b.conv1d(p + "attn.c_proj", kHidden, kHidden);
    b.norm(p + "ln_2", kHidden);
    b.conv1d(p + "mlp.c_fc", kHidden, 4 * kHidden);
    b.conv1d(p + "mlp.c_proj", 4 * kHidden, kHidden);
  }
  b.norm("transformer.ln_f", kHidden);
  return m;
}

const std::vector<Model>& registry() {
  static const std::vector<Model> models = {resnet50(), vgg16(), bert_base(), gpt2()};
  return models;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](unsigned char x, unsigned char y) {
    return std::tolower(x) == std::tolower(y);
  });
}

}  // namespace

size_t Tensor::numel() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

size_t Tensor::bytes() const {
  return numel() * dtype_size(dtype);
}

size_t Model::total_params() const {
  size_t n = 0;
  for (const Tensor& t : tensors) n += t.numel();
  return n;
}

size_t Model::total_bytes() const {
  size_t n = 0;
  for (const Tensor& t : tensors) n += t.bytes();
  return n;
}

const Model* find_model(std::string_view name) {
  for (const Model& m : registry())
    if (equal_ignoring_case(m.name, name)) return &m;
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const Model& m : registry()) names.push_back(m.name);
  return names;
}

}  // namespace cb::dl
