//===- WeightsTest.cpp - Weights images: header, size and checksum checks ------===//
#include "kiln/runtime/ModelSupport.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

using namespace kiln::rt;

namespace {
/// A weights image as the emitter writes it: header, then the payload.
std::string image(const std::string &payload, uint64_t checksum) {
  std::string text(kWeightsHeaderBytes, '\0');
  encodeWeightsHeader({payload.size(), checksum}, text.data());
  return text + payload;
}
} // namespace

TEST_CASE("an embedded weights image loads when header and checksum agree", "[runtime]") {
  std::string payload = "0123456789abcdef";
  uint64_t sum = weightsChecksum(payload.data(), payload.size());
  std::string img = image(payload, sum);
  AlignedBuffer out;
  Status s = loadWeightsImage(img.data(), img.size(), "the embedded weights", payload.size(),
                              sum, out);
  REQUIRE(s);
  CHECK(std::memcmp(out.data.get(), payload.data(), payload.size()) == 0);
}

TEST_CASE("a bad weights image is refused with a message naming it", "[runtime]") {
  std::string payload = "0123456789abcdef";
  uint64_t sum = weightsChecksum(payload.data(), payload.size());
  AlignedBuffer out;
  auto load = [&](const std::string &img, uint64_t bytes, uint64_t checksum) {
    return loadWeightsImage(img.data(), img.size(), "img", bytes, checksum, out).message();
  };
  std::string good = image(payload, sum);
  CHECK(load(good.substr(0, 10), payload.size(), sum) == "img: not a Kiln weights file");
  CHECK(load("X" + good.substr(1), payload.size(), sum) == "img: not a Kiln weights file");
  std::string older = good;
  older[7] = '1';
  CHECK(load(older, payload.size(), sum) ==
        "img: written by another Kiln version (weights format 1; this runtime reads 2)");
  CHECK(load(good, 8, sum) ==
        "img: holds 16 bytes of weights, the model needs 8 (from another model?)");
  CHECK(load(good.substr(0, good.size() - 1), payload.size(), sum) ==
        "img: truncated weights image");
  std::string flipped = good;
  flipped.back() ^= 1;
  CHECK(load(flipped, payload.size(), sum) ==
        "img: weights checksum mismatch (corrupt or from another model)");
  CHECK(load(good, payload.size(), sum + 1) ==
        "img: weights checksum mismatch (corrupt or from another model)");
}

TEST_CASE("no weights path for a model that needs weights says what to do", "[runtime]") {
  AlignedBuffer out;
  CHECK(loadWeights("", 16, 0, out).message() ==
        "no weights file given (a model compiled with --embed-weights needs none)");
  CHECK(loadWeights("", 0, 0, out)); // a model without weights needs no file
}
