// Fusion on the built-in models, checked against the bucket sizes in the reference
// (DDP defaults, ready order = reverse registration, no compute).
#include <gtest/gtest.h>

#include <set>

#include "dl_patterns/fusion.hpp"

namespace cb::dl {
namespace {

std::vector<double> bucket_mib(const std::string& model_name, const std::string& spec) {
  const Model* m = find_model(model_name);
  if (!m) throw std::runtime_error("no model " + model_name);
  std::vector<double> sizes;
  for (const Message& msg : fuse(backward_order(*m), parse_fusion(spec)))
    sizes.push_back(static_cast<double>(msg.bytes()) / static_cast<double>(kMiB));
  return sizes;
}

void expect_mib(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.005) << "bucket " << i;
}

std::vector<double> repeat(std::vector<double> head, size_t n, double value,
                           std::vector<double> tail) {
  head.insert(head.end(), n, value);
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST(FusionModels, DdpBucketsResNet50) {
  expect_mib(bucket_mib("resnet50", "ddp"), {7.82, 30.04, 25.04, 25.32, 9.27});
}

TEST(FusionModels, DdpBucketsVgg16) {
  expect_mib(bucket_mib("vgg16", "ddp"), {15.63, 64.02, 392.02, 27.01, 27.01, 2.12});
}

TEST(FusionModels, DdpBucketsBertBase) {
  expect_mib(bucket_mib("bert-base", "ddp"), repeat({2.25}, 12, 27.04, {90.93}));
}

TEST(FusionModels, DdpBucketsGpt2) {
  expect_mib(bucket_mib("gpt2", "ddp"), repeat({9.01}, 11, 27.04, {168.27}));
}

TEST(FusionModels, HorovodDefaultFusesResNet50IntoOneMessage) {
  // 97.5 MiB of gradients, all ready in the first cycle, under the 128 MiB threshold.
  const auto sizes = bucket_mib("resnet50", "horovod");
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_NEAR(sizes[0], 102'228'128.0 / kMiB, 1e-9);
  // VGG-16's 392 MiB classifier.0.weight cannot fuse with anything at 128 MiB.
  const Model& vgg = *find_model("vgg16");
  for (const Message& m : fuse(backward_order(vgg), parse_fusion("horovod")))
    if (m.bytes() > kHorovodDefaultThreshold) {
      EXPECT_EQ(m.name, "classifier.0.weight");
    }
}

TEST(FusionModels, EveryGradientIsSentExactlyOnce) {
  for (const std::string& name : model_names()) {
    const Model& m = *find_model(name);
    const auto grads = backward_order(m, 50.0);
    for (const char* spec :
         {"none", "horovod", "horovod:16:0.5", "horovod:0", "ddp", "ddp:5:0.25"}) {
      std::multiset<size_t> seen;
      size_t elements = 0;
      double previous_ready = 0;
      for (const Message& msg : fuse(grads, parse_fusion(spec))) {
        seen.insert(msg.members.begin(), msg.members.end());
        elements += msg.count;
        EXPECT_GE(msg.ready_us, previous_ready) << name << " " << spec;  // launch order
        previous_ready = msg.ready_us;
        for (size_t i : msg.members)
          EXPECT_GE(msg.ready_us, grads[i].ready_us) << name << " " << spec;
      }
      EXPECT_EQ(elements, m.total_params()) << name << " " << spec;
      EXPECT_EQ(seen.size(), grads.size()) << name << " " << spec;
      EXPECT_EQ(std::set<size_t>(seen.begin(), seen.end()).size(), grads.size())
          << name << " " << spec;
    }
  }
}

TEST(FusionModels, BackwardOrderReversesRegistrationWithCumulativeCompute) {
  const Model& m = *find_model("resnet50");
  EXPECT_EQ(backward_order(m).front().name, "fc.bias");
  EXPECT_EQ(backward_order(m).back().name, "conv1.weight");
  EXPECT_EQ(backward_order(m).back().ready_us, 0.0);
  const auto grads = backward_order(m, 10.0);  // 10 us per MiB of gradient
  ASSERT_EQ(grads.size(), 161u);
  EXPECT_DOUBLE_EQ(grads[0].ready_us, 10.0 * 4000 / kMiB);
  EXPECT_DOUBLE_EQ(grads[1].ready_us, 10.0 * (4000 + 8'192'000) / kMiB);
  EXPECT_NEAR(grads.back().ready_us, 10.0 * 102'228'128 / kMiB, 1e-6);
  EXPECT_EQ(grads[1].count, 2'048'000u);
  EXPECT_THROW(backward_order(m, -1), std::invalid_argument);
}

TEST(FusionModels, ModelTraceCarriesTheWholeRecipe) {
  const Model& m = *find_model("vgg16");
  const Trace t = model_trace(m, parse_fusion("ddp"), 100.0);
  EXPECT_EQ(t.name, "vgg16");
  EXPECT_EQ(t.source, "model:vgg16");
  ASSERT_EQ(t.ops.size(), 6u);
  EXPECT_EQ(t.ops[2].name, "bucket 2: classifier.0.bias .. classifier.0.weight (2 tensors)");
  double total_compute = 0;
  size_t total_count = 0;
  for (const TraceOp& op : t.ops) {
    total_compute += op.compute_us;
    total_count += op.count;
  }
  EXPECT_NEAR(total_compute, 100.0 * m.total_bytes() / kMiB,
              1e-6);  // the last bucket ends backward
  EXPECT_EQ(total_count, m.total_params());
  EXPECT_EQ(model_trace(m, FusionConfig{}).ops.size(), 32u);
}

}  // namespace
}  // namespace cb::dl
