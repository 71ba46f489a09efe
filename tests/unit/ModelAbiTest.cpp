//===- ModelAbiTest.cpp - The C ABI compiled into kiln_runtime ------------===//
//
// The C ABI (model_abi.h, runtime/src/ModelAbi.cpp) on definitions written here,
// as a generated model.cpp writes them: a host program whose one stream adds the
// weights to the input. Lifetime, status and messages, binding by name, the
// argument checks, the weights' checks, two models side by side; and the
// artifact manifest's reader (Artifact.h).
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Artifact.h"
#include "kiln/runtime/HostModel.h"
#include "kiln/runtime/Model.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace kiln::rt;

namespace {

const int64_t kShape[] = {2, 3};
const kiln_tensor_info kInputs[] = {{"x", KILN_F32, 2, kShape}};
const kiln_tensor_info kOutputs[] = {{"y", KILN_F32, 2, kShape}};

/// y = x + w (6 floats of weights), through the arena as a generated stream does.
Status addWeights(HostRun &c, int stream, const kiln_tensor *in, kiln_tensor *out) {
  if (stream != 0)
    return Status::error("no stream " + std::to_string(stream));
  auto *a = reinterpret_cast<float *>(c.arena);
  auto *w = reinterpret_cast<const float *>(c.weights);
  for (int i = 0; i < 6; ++i)
    a[i] = static_cast<const float *>(in[0].data)[i] + w[i];
  for (int i = 0; i < 6; ++i)
    static_cast<float *>(out[0].data)[i] = a[i];
  return Status::ok();
}

const HostProgram kProgram = {6 * sizeof(float), 1, 0, 0, addWeights};

const float kWeights[6] = {1, 2, 3, 4, 5, 6};

/// The checksum of `count` floats (as a run-time size: GCC misjudges the
/// checksum's tail loop for a constant one).
uint64_t checksumOf(const float *values, size_t count) {
  std::string payload(reinterpret_cast<const char *>(values), count * sizeof(float));
  return weightsChecksum(payload.data(), payload.size());
}

/// A weights image (header and payload) of `values`.
std::string weightsImage(const float *values, size_t count) {
  std::string payload(reinterpret_cast<const char *>(values), count * sizeof(float));
  std::string text(kWeightsHeaderBytes, '\0');
  encodeWeightsHeader({payload.size(), weightsChecksum(payload.data(), payload.size())},
                      text.data());
  return text + payload;
}

const std::string kImage = weightsImage(kWeights, 6);

kiln_model_definition definition(const char *name, bool embedded = true) {
  kiln_model_definition d{KILN_ABI_VERSION,
                          name,
                          kInputs,
                          1,
                          kOutputs,
                          1,
                          sizeof kWeights,
                          checksumOf(kWeights, 6),
                          embedded ? kImage.data() : nullptr,
                          embedded ? kImage.data() + kImage.size() : nullptr,
                          &kHostHooks,
                          &kProgram};
  return d;
}

std::string temporaryFile(const std::string &name, const std::string &contents) {
  std::string path = std::string(P_tmpdir) + "/kiln-abi-test-" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

} // namespace

TEST_CASE("a model runs by name and by position through the runtime's C ABI", "[abi]") {
  kiln_model_definition d = definition("adder");
  kiln_model *m = kiln_model_create_from(&d, nullptr); // the embedded weights
  REQUIRE(kiln_model_status(m) == KILN_OK);
  CHECK(kiln_model_error(m) == nullptr);
  CHECK(kiln_model_num_inputs(m) == 1);
  CHECK(kiln_model_num_outputs(m) == 1);
  CHECK(kiln_model_input_index(m, "x") == 0);
  CHECK(kiln_model_input_index(m, "y") == -1);
  CHECK(kiln_model_output_index(m, "y") == 0);
  kiln_tensor_info info{};
  REQUIRE(kiln_model_input_info(m, 0, &info) == KILN_OK);
  CHECK(std::string(info.name) == "x");
  CHECK(kiln_model_input_info(m, 1, &info) == KILN_ERROR_ARGUMENT);

  kiln_context *c = kiln_context_create(m);
  REQUIRE(kiln_context_status(c) == KILN_OK);
  std::vector<float> x = {10, 20, 30, 40, 50, 60}, y(6, 0);
  kiln_tensor tx{KILN_F32, 2, kShape, x.data()}, ty{KILN_F32, 2, kShape, y.data()};
  CHECK(kiln_context_execute(c) == KILN_ERROR_UNBOUND);
  CHECK(std::string(kiln_context_error(c)) == "input 'x' is not set");
  REQUIRE(kiln_context_set_input(c, "x", &tx) == KILN_OK);
  CHECK(kiln_context_set_output(c, "x", &ty) == KILN_ERROR_ARGUMENT);
  CHECK(std::string(kiln_context_error(c)) == "the model has no output 'x'");
  REQUIRE(kiln_context_set_output(c, "y", &ty) == KILN_OK);
  REQUIRE(kiln_context_execute(c) == KILN_OK);
  CHECK(y == std::vector<float>{11, 22, 33, 44, 55, 66});
  CHECK(kiln_context_error(c) == nullptr);

  std::fill(y.begin(), y.end(), 0.0f);
  REQUIRE(kiln_context_run(c, &tx, 1, &ty, 1) == KILN_OK);
  CHECK(y[5] == 66);
  CHECK(kiln_context_run(c, &tx, 2, &ty, 1) == KILN_ERROR_MISMATCH);
  const int64_t wrong[] = {3, 2};
  kiln_tensor tw{KILN_F32, 2, wrong, x.data()};
  CHECK(kiln_context_run(c, &tw, 1, &ty, 1) == KILN_ERROR_MISMATCH);
  CHECK(std::string(kiln_context_error(c)).find("expected [2x3]") != std::string::npos);
  kiln_context_destroy(c);
  kiln_model_destroy(m);
}

TEST_CASE("two models live side by side, each with its own weights", "[abi]") {
  kiln_model_definition a = definition("a");
  // b reads its weights from a file of other values.
  kiln_model_definition b = definition("b", /*embedded=*/false);
  const float other[6] = {-1, -1, -1, -1, -1, -1};
  b.weightsChecksum = checksumOf(other, 6);
  std::string path = temporaryFile("b.weights", weightsImage(other, 6));
  kiln::Model ma(&a, ""), mb(&b, path);
  REQUIRE(ma.ok());
  REQUIRE(mb.ok());
  kiln::Context ca(ma), cb(mb);
  std::vector<float> x(6, 1.0f), ya(6), yb(6);
  kiln_tensor tx{KILN_F32, 2, kShape, x.data()};
  kiln_tensor tya{KILN_F32, 2, kShape, ya.data()}, tyb{KILN_F32, 2, kShape, yb.data()};
  REQUIRE(ca.run(&tx, 1, &tya, 1));
  REQUIRE(cb.run(&tx, 1, &tyb, 1));
  CHECK(ya == std::vector<float>{2, 3, 4, 5, 6, 7});
  CHECK(yb == std::vector<float>(6, 0.0f));
  std::remove(path.c_str());
}

TEST_CASE("a model that cannot load says why, and so do its contexts", "[abi]") {
  SECTION("no definition") {
    kiln_model *m = kiln_model_create_from(nullptr, nullptr);
    CHECK(kiln_model_status(m) == KILN_ERROR_ARGUMENT);
    kiln_model_destroy(m);
  }
  SECTION("another ABI version") {
    kiln_model_definition d = definition("old");
    d.abiVersion = KILN_ABI_VERSION - 1;
    kiln_model *m = kiln_model_create_from(&d, nullptr);
    CHECK(kiln_model_status(m) == KILN_ERROR_LOAD);
    CHECK(std::string(kiln_model_error(m)).find("recompile it") != std::string::npos);
    kiln_model_destroy(m);
  }
  SECTION("weights of another model") {
    kiln_model_definition d = definition("w", /*embedded=*/false);
    const float seven[7] = {};
    std::string path = temporaryFile("seven.weights", weightsImage(seven, 7));
    kiln_model *m = kiln_model_create_from(&d, path.c_str());
    CHECK(kiln_model_status(m) == KILN_ERROR_LOAD);
    CHECK(std::string(kiln_model_error(m)).find("the model needs 24") != std::string::npos);
    kiln_context *c = kiln_context_create(m);
    CHECK(kiln_context_status(c) == KILN_ERROR_LOAD);
    std::vector<float> x(6);
    kiln_tensor tx{KILN_F32, 2, kShape, x.data()};
    CHECK(kiln_context_set_input(c, "x", &tx) == KILN_ERROR_LOAD);
    CHECK(kiln_context_run(c, &tx, 1, &tx, 1) == KILN_ERROR_LOAD);
    kiln_context_destroy(c);
    kiln_model_destroy(m);
    std::remove(path.c_str());
  }
  SECTION("no weights file and none built in") {
    kiln_model_definition d = definition("none", /*embedded=*/false);
    kiln_model *m = kiln_model_create_from(&d, nullptr);
    CHECK(kiln_model_status(m) == KILN_ERROR_LOAD);
    kiln_model_destroy(m);
  }
  kiln_context *c = kiln_context_create(nullptr); // a failed context, not a crash
  REQUIRE(c != nullptr);
  CHECK(kiln_context_status(c) == KILN_ERROR_ARGUMENT);
  CHECK(kiln_context_execute(c) == KILN_ERROR_ARGUMENT);
  kiln_context_destroy(c);
  CHECK(kiln_context_execute(nullptr) == KILN_ERROR_ARGUMENT);
  CHECK(kiln_model_status(nullptr) == KILN_ERROR_ARGUMENT);
}

TEST_CASE("the manifest reader takes what the emitter writes and refuses the rest",
          "[abi]") {
  std::string dir = std::string(P_tmpdir) + "/kiln-abi-test-manifest";
  std::string mkdir = "mkdir -p " + dir;
  REQUIRE(std::system(mkdir.c_str()) == 0);
  auto write = [&](const std::string &text) {
    std::ofstream(dir + "/manifest.json") << text;
  };
  write(R"({"kiln_manifest": 1, "name": "m\"x", "target": "cuda", "gpu_arch": "sm_90",
    "abi_version": 3, "weights_format": 2, "precision": "fp16", "embedded_weights": true,
    "inputs": [{"name": "in", "dtype": "float16", "shape": [1, 3, 224, 224]}],
    "outputs": [{"name": "out", "dtype": "float32", "shape": []}],
    "library_calls": {"count": 53, "engine": "cuda"}})");
  Manifest m;
  REQUIRE(readManifest(dir, m));
  CHECK(m.name == "m\"x");
  CHECK(m.target == "cuda");
  CHECK(m.gpuArch == "sm_90");
  CHECK(m.abiVersion == 3);
  CHECK(m.precision == "fp16");
  CHECK(m.embeddedWeights);
  CHECK(m.libraryCalls == 53);
  CHECK(m.libraryEngine == "cuda");
  REQUIRE(m.inputs.size() == 1);
  CHECK(m.inputs[0].shape == std::vector<int64_t>{1, 3, 224, 224});
  CHECK(m.outputs[0].shape.empty());

  write(R"({"kiln_manifest": 1, "inputs": [)");
  CHECK(readManifest(dir, m).message().find("invalid JSON") != std::string::npos);
  write(R"({"kiln_manifest": 2, "inputs": [], "outputs": []})");
  CHECK(readManifest(dir, m).message().find("not a Kiln manifest") != std::string::npos);
  write(R"({"kiln_manifest": 1, "outputs": []})");
  CHECK(readManifest(dir, m).message().find("malformed") != std::string::npos);
  std::remove((dir + "/manifest.json").c_str());
  CHECK(readManifest(dir, m).code() == KILN_ERROR_LOAD);
  Artifact artifact;
  CHECK(artifact.open(dir).message().find("manifest.json not found") != std::string::npos);
}
