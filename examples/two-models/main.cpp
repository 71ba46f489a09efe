//===- main.cpp - Two Kiln models in one program --------------------------===//
//
// usage: two_models INPUT.raw
//   INPUT.raw  the input, raw float32 of the models' input shape
//
// Runs the same input through `first` (host) and `second` (cuda-sim, weights built
// in), each on a context of its own and both at once on two threads, and prints
// each model's output values, one line per model.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Model.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

KILN_DECLARE_MODEL(first);
KILN_DECLARE_MODEL(second);

namespace {

/// Runs `model` once on `input`; false with a message on stderr.
bool runOnce(const char *label, const kiln::Model &model, std::vector<float> &input,
             std::vector<float> &output) {
  kiln_tensor_info in{}, out{};
  if (!model.ok() || kiln_model_input_info(model.get(), 0, &in) != KILN_OK ||
      kiln_model_output_info(model.get(), 0, &out) != KILN_OK) {
    std::fprintf(stderr, "two_models: %s: %s\n", label, model.error().c_str());
    return false;
  }
  size_t outCount = 1;
  for (int32_t d = 0; d < out.rank; ++d)
    outCount *= static_cast<size_t>(out.shape[d]);
  output.assign(outCount, 0.0f);
  kiln::Context context(model);
  kiln_tensor x{KILN_F32, in.rank, in.shape, input.data()};
  kiln_tensor y{KILN_F32, out.rank, out.shape, output.data()};
  if (!context.setInput(in.name, x) || !context.setOutput(out.name, y) ||
      !context.execute()) {
    std::fprintf(stderr, "two_models: %s: %s\n", label, context.error().c_str());
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s INPUT.raw\n", argv[0]);
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  std::vector<float> input(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + input.size() * sizeof(float),
            reinterpret_cast<char *>(input.data()));

  kiln::Model first(KILN_MODEL(first), FIRST_WEIGHTS);
  kiln::Model second(KILN_MODEL(second), ""); // its weights are built in
  std::vector<float> a, b;
  bool okA = false, okB = false;
  std::thread ta([&] { okA = runOnce("first", first, input, a); });
  std::thread tb([&] { okB = runOnce("second", second, input, b); });
  ta.join();
  tb.join();
  if (!okA || !okB)
    return 1;
  for (const std::vector<float> *v : {&a, &b}) {
    for (size_t i = 0; i < v->size(); ++i)
      std::printf("%s%.7g", i ? " " : "", (*v)[i]);
    std::printf("\n");
  }
  return 0;
}
