//===- ModelLoaderTest.cpp - Loader: parsing, external data, pins ---------===//
#include "compiler/import/ModelLoader.h"
#include "TestUtil.h"

#include "onnx/onnx_pb.h"

#include <catch2/catch.hpp>

using kiln::test::TempDir;

namespace {

/// A model `Y = Add(X, W)` whose initializer W (4 floats) lives in external data.
onnx::ModelProto externalModel(const std::string &location, int64_t length = -1) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto *g = model.mutable_graph();
  g->set_name("g");
  auto addValue = [](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *list,
                     const std::string &name) {
    onnx::ValueInfoProto *v = list->Add();
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(4);
  };
  addValue(g->mutable_input(), "X");
  addValue(g->mutable_output(), "Y");
  onnx::TensorProto *w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value(location);
  if (length >= 0) {
    auto *len = w->add_external_data();
    len->set_key("length");
    len->set_value(std::to_string(length));
  }
  onnx::NodeProto *n = g->add_node();
  n->set_op_type("Add");
  n->set_name("add");
  n->add_input("X");
  n->add_input("W");
  n->add_output("Y");
  return model;
}

std::string floats(std::initializer_list<float> values) {
  std::string bytes;
  for (float v : values)
    bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
  return bytes;
}

bool load(const std::string &path, std::string &error,
          kiln::LoadOptions options = {}) {
  onnx::ModelProto model;
  return kiln::loadOnnxModel(path, options, model, error);
}

} // namespace

TEST_CASE("parseInputShape accepts NAME=DxD and rejects the rest", "[loader]") {
  std::string name;
  std::vector<int64_t> dims;
  REQUIRE(kiln::parseInputShape("input=1x3x224x224", name, dims));
  CHECK(name == "input");
  CHECK(dims == std::vector<int64_t>{1, 3, 224, 224});
  REQUIRE(kiln::parseInputShape("a=b=7", name, dims));
  CHECK(name == "a=b");
  CHECK(dims == std::vector<int64_t>{7});
  CHECK_FALSE(kiln::parseInputShape("input", name, dims));
  CHECK_FALSE(kiln::parseInputShape("input=", name, dims));
  CHECK_FALSE(kiln::parseInputShape("=1x2", name, dims));
  CHECK_FALSE(kiln::parseInputShape("x=1xx2", name, dims));
  CHECK_FALSE(kiln::parseInputShape("x=-1", name, dims));
  CHECK_FALSE(kiln::parseInputShape("x=99999999999999999999", name, dims));
}

TEST_CASE("external data inside the model folder loads", "[loader]") {
  TempDir dir;
  dir.write("weights/w.bin", floats({1, 2, 3, 4}));
  std::string path = dir.write(
      "model.onnx", externalModel("weights/w.bin", 16).SerializeAsString());
  onnx::ModelProto model;
  std::string error;
  REQUIRE(kiln::loadOnnxModel(path, {}, model, error));
  const onnx::TensorProto &w = model.graph().initializer(0);
  CHECK(w.data_location() == onnx::TensorProto::DEFAULT);
  CHECK(w.raw_data() == floats({1, 2, 3, 4}));
}

TEST_CASE("external data may not leave the model folder", "[loader]") {
  TempDir dir;
  dir.write("secret.bin", floats({1, 2, 3, 4}));
  std::string error;
  SECTION("dot-dot") {
    std::string path = dir.write(
        "m/model.onnx", externalModel("../secret.bin").SerializeAsString());
    CHECK_FALSE(load(path, error));
    CHECK_THAT(error, Catch::Contains("leaves the model's folder"));
  }
  SECTION("absolute") {
    std::string abs = (dir.path / "secret.bin").string();
    std::string path =
        dir.write("m/model.onnx", externalModel(abs).SerializeAsString());
    CHECK_FALSE(load(path, error));
    CHECK_THAT(error, Catch::Contains("is absolute"));
  }
  SECTION("symlink escaping the folder") {
    std::filesystem::create_directories(dir.path / "m");
    std::filesystem::create_symlink(dir.path / "secret.bin",
                                    dir.path / "m" / "link.bin");
    std::string path =
        dir.write("m/model.onnx", externalModel("link.bin").SerializeAsString());
    CHECK_FALSE(load(path, error));
    CHECK_THAT(error, Catch::Contains("resolves outside"));
  }
}

TEST_CASE("external data shorter than declared is rejected", "[loader]") {
  TempDir dir;
  dir.write("w.bin", floats({1, 2, 3})); // 12 bytes, 16 needed
  std::string path =
      dir.write("model.onnx", externalModel("w.bin").SerializeAsString());
  std::string error;
  CHECK_FALSE(load(path, error));
  CHECK_THAT(error, Catch::Contains("holds 12 bytes") && Catch::Contains("16 needed"));

  std::string wrongLength =
      dir.write("model2.onnx", externalModel("w.bin", 8).SerializeAsString());
  CHECK_FALSE(load(wrongLength, error));
  CHECK_THAT(error, Catch::Contains("length 8 does not match"));
}

TEST_CASE("corrupt and truncated protobufs fail cleanly", "[loader]") {
  TempDir dir;
  std::string bytes = externalModel("w.bin").SerializeAsString();
  std::string error;
  for (size_t cut : {size_t(1), bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    std::string path = dir.write("t.onnx", bytes.substr(0, cut));
    CHECK_FALSE(load(path, error));
    CHECK_THAT(error, Catch::StartsWith(path));
  }
  CHECK_FALSE(load(dir.write("garbage.onnx", std::string(100, '\xff')), error));
  CHECK_THAT(error, Catch::Contains("not a valid ONNX model"));
  CHECK_FALSE(load((dir.path / "missing.onnx").string(), error));
  CHECK_THAT(error, Catch::Contains("no such file"));
}

TEST_CASE("input shapes are pinned before shape inference", "[loader]") {
  TempDir dir;
  std::string path = dir.write("m.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] X) => (float[M, 3] Y) { Y = Relu(X) })");
  onnx::ModelProto model;
  std::string error;
  kiln::LoadOptions options;
  options.inputShapes["X"] = {5, 3};
  REQUIRE(kiln::loadOnnxModel(path, options, model, error));
  const auto &y = model.graph().output(0).type().tensor_type().shape();
  REQUIRE(y.dim_size() == 2);
  CHECK(y.dim(0).dim_value() == 5);

  options.inputShapes["X"] = {5, 4};
  CHECK_FALSE(kiln::loadOnnxModel(path, options, model, error));
  CHECK_THAT(error, Catch::Contains("model fixes it to 3"));
  options.inputShapes = {{"Z", {1}}};
  CHECK_FALSE(kiln::loadOnnxModel(path, options, model, error));
  CHECK_THAT(error, Catch::Contains("not an input of the graph"));
}
