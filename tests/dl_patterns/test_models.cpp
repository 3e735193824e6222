// Built-in models must match torchvision / Hugging Face exactly: counts, totals, shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dl_patterns/models.hpp"

namespace cb::dl {
namespace {

const Tensor& tensor(const Model& m, const std::string& name) {
  for (const Tensor& t : m.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name + " in " + m.name);
}

const Model& model(std::string_view name) {
  const Model* m = find_model(name);
  if (!m) throw std::runtime_error("no model " + std::string(name));
  return *m;
}

TEST(Models, RegistryListsTheFourModelsInOrder) {
  EXPECT_EQ(model_names(), (std::vector<std::string>{"resnet50", "vgg16", "bert-base", "gpt2"}));
  EXPECT_EQ(find_model("nope"), nullptr);
  EXPECT_EQ(find_model(""), nullptr);
  EXPECT_EQ(find_model("ResNet50"), find_model("resnet50"));  // case-insensitive
}

TEST(Models, TensorSizes) {
  const Tensor t{"w", {2, 3, 4}, Dtype::Half};
  EXPECT_EQ(t.numel(), 24u);
  EXPECT_EQ(t.bytes(), 48u);
  EXPECT_EQ((Tensor{"scalar", {}, Dtype::Float}).numel(), 1u);
}

TEST(Models, ResNet50) {
  const Model& m = model("resnet50");
  EXPECT_EQ(m.tensors.size(), 161u);
  EXPECT_EQ(m.total_params(), 25'557'032u);
  EXPECT_EQ(m.total_bytes(), 102'228'128u);
  EXPECT_EQ(m.tensors.front().name, "conv1.weight");
  EXPECT_EQ(m.tensors.front().shape, (std::vector<int64_t>{64, 3, 7, 7}));
  EXPECT_EQ(m.tensors[3].name, "layer1.0.conv1.weight");
  EXPECT_EQ(tensor(m, "layer4.0.conv2.weight").numel(), 2'359'296u);
  EXPECT_EQ(tensor(m, "layer4.0.downsample.0.weight").numel(), 2'097'152u);
  EXPECT_EQ(tensor(m, "layer4.0.downsample.0.weight").shape,
            (std::vector<int64_t>{2048, 1024, 1, 1}));
  EXPECT_EQ(tensor(m, "layer3.5.bn3.bias").shape, (std::vector<int64_t>{1024}));
  EXPECT_EQ(tensor(m, "fc.weight").shape, (std::vector<int64_t>{1000, 2048}));
  EXPECT_EQ(m.tensors.back().name, "fc.bias");
  const auto smallest =
      std::min_element(m.tensors.begin(), m.tensors.end(),
                       [](const Tensor& a, const Tensor& b) { return a.numel() < b.numel(); });
  EXPECT_EQ(smallest->numel(), 64u);
}

TEST(Models, Vgg16) {
  const Model& m = model("vgg16");
  EXPECT_EQ(m.tensors.size(), 32u);
  EXPECT_EQ(m.total_params(), 138'357'544u);
  EXPECT_EQ(tensor(m, "features.0.weight").shape, (std::vector<int64_t>{64, 3, 3, 3}));
  EXPECT_EQ(tensor(m, "features.28.weight").shape, (std::vector<int64_t>{512, 512, 3, 3}));
  EXPECT_EQ(tensor(m, "classifier.0.weight").numel(), 102'760'448u);
  EXPECT_EQ(tensor(m, "classifier.0.weight").bytes(), 392u * 1024 * 1024);
  EXPECT_EQ(m.tensors.back().name, "classifier.6.bias");
}

TEST(Models, BertBase) {
  const Model& m = model("bert-base");
  EXPECT_EQ(m.tensors.size(), 199u);
  EXPECT_EQ(m.total_params(), 109'482'240u);
  EXPECT_EQ(m.tensors.front().name, "embeddings.word_embeddings.weight");
  EXPECT_EQ(m.tensors.front().shape, (std::vector<int64_t>{30522, 768}));
  EXPECT_EQ(tensor(m, "embeddings.position_embeddings.weight").shape,
            (std::vector<int64_t>{512, 768}));
  EXPECT_EQ(tensor(m, "encoder.layer.11.intermediate.dense.weight").shape,
            (std::vector<int64_t>{3072, 768}));
  EXPECT_EQ(tensor(m, "encoder.layer.0.output.dense.weight").shape,
            (std::vector<int64_t>{768, 3072}));
  EXPECT_EQ(m.tensors.back().name, "pooler.dense.bias");
}

TEST(Models, Gpt2) {
  const Model& m = model("gpt2");
  EXPECT_EQ(m.tensors.size(), 148u);
  EXPECT_EQ(m.total_params(), 124'439'808u);
  EXPECT_EQ(m.tensors.front().name, "transformer.wte.weight");
  EXPECT_EQ(m.tensors.front().shape, (std::vector<int64_t>{50257, 768}));
  EXPECT_EQ(tensor(m, "transformer.h.0.attn.c_attn.weight").shape,
            (std::vector<int64_t>{768, 2304}));
  EXPECT_EQ(tensor(m, "transformer.h.11.mlp.c_proj.weight").shape,
            (std::vector<int64_t>{3072, 768}));
  EXPECT_EQ(m.tensors.back().name, "transformer.ln_f.bias");
}

TEST(Models, NamesAreUniqueAndAllFloat) {
  for (const std::string& name : model_names()) {
    const Model& m = model(name);
    std::set<std::string> seen;
    for (const Tensor& t : m.tensors) {
      EXPECT_TRUE(seen.insert(t.name).second) << name << ": duplicate " << t.name;
      EXPECT_EQ(t.dtype, Dtype::Float);
      EXPECT_GT(t.numel(), 0u);
    }
    EXPECT_FALSE(m.description.empty());
  }
}

}  // namespace
}  // namespace cb::dl
