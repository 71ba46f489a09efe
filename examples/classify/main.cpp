//===- main.cpp - Top-5 classes of one input, by a Kiln-compiled model ----===//
//
// usage: classify INPUT [WEIGHTS]
//   INPUT   the model's single input: a .npy file, or raw little-endian float32
//           (any other name) holding exactly as many values as the input has
//   WEIGHTS the model.weights file (default: where the build put it; none needed
//           when the weights are embedded)
// Prints the five highest scores of the first output, one "class score" per line.
//
//===----------------------------------------------------------------------===//
#include "model.h"

#include "kiln/runtime/Npy.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

namespace {

/// The input tensor from INPUT, checked against the model's first input.
bool readInput(const std::string &path, const kiln_tensor_info &info,
               kiln::rt::HostTensor &input, std::string &error) {
  if (info.dtype != KILN_F32) {
    error = "the model's input is not float32";
    return false;
  }
  int64_t count = 1;
  for (int32_t d = 0; d < info.rank; ++d)
    count *= info.shape[d];
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    kiln::rt::Status s = kiln::rt::readNpy(path, input);
    if (!s) {
      error = s.message();
      return false;
    }
    if (input.desc.numElements() != count || input.desc.dtype != kiln::rt::DType::F32) {
      error = path + ": expected " + std::to_string(count) + " float32 values";
      return false;
    }
    return true;
  }
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!f.good() && !f.eof()) {
    error = "cannot read " + path;
    return false;
  }
  if (static_cast<int64_t>(bytes.size()) != count * 4) {
    error = path + ": " + std::to_string(bytes.size()) + " bytes, expected " +
            std::to_string(count * 4) + " (raw float32)";
    return false;
  }
  input.data.assign(bytes.begin(), bytes.end());
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s INPUT.npy|INPUT.raw [model.weights]\n", argv[0]);
    return 2;
  }
#ifdef CLASSIFY_EMBEDDED_WEIGHTS
  kiln::Model model(KILN_MODEL(classifier), argc == 3 ? argv[2] : "");
#else
  kiln::Model model(KILN_MODEL(classifier), argc == 3 ? argv[2] : CLASSIFIER_WEIGHTS);
#endif
  if (!model.ok()) {
    std::fprintf(stderr, "classify: %s\n", model.error().c_str());
    return 1;
  }
  kiln_tensor_info in{}, out{};
  if (kiln_model_input_info(model.get(), 0, &in) != KILN_OK ||
      kiln_model_output_info(model.get(), 0, &out) != KILN_OK) {
    std::fprintf(stderr, "classify: %s\n", model.error().c_str());
    return 1;
  }
  kiln::rt::HostTensor input;
  std::string error;
  if (!readInput(argv[1], in, input, error)) {
    std::fprintf(stderr, "classify: %s\n", error.c_str());
    return 1;
  }
  if (out.dtype != KILN_F32) {
    std::fprintf(stderr, "classify: the model's output is not float32\n");
    return 1;
  }
  int64_t classes = 1;
  for (int32_t d = 0; d < out.rank; ++d)
    classes *= out.shape[d];
  std::vector<float> scores(static_cast<size_t>(classes));
  kiln_tensor x{in.dtype, in.rank, in.shape, input.data.data()};
  kiln_tensor y{out.dtype, out.rank, out.shape, scores.data()};
  kiln::Context context(model);
  if (!context.setInput(in.name, x) || !context.setOutput(out.name, y) ||
      !context.execute()) {
    std::fprintf(stderr, "classify: %s\n", context.error().c_str());
    return 1;
  }
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  size_t top = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [&](int64_t a, int64_t b) {
                      return scores[static_cast<size_t>(a)] > scores[static_cast<size_t>(b)] ||
                             (scores[static_cast<size_t>(a)] == scores[static_cast<size_t>(b)] &&
                              a < b);
                    });
  for (size_t i = 0; i < top; ++i)
    std::printf("%lld %.6g\n", static_cast<long long>(order[i]),
                static_cast<double>(scores[static_cast<size_t>(order[i])]));
  return 0;
}
