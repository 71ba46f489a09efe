//===- ArtifactRun.cpp - Running a compiled artifact from the compiler ----===//
//
// This file implements ArtifactRun.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/ArtifactRun.h"
#include "compiler/import/TensorFiles.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

namespace kiln {
namespace {

/// IEEE half bits to float.
float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

} // namespace

bool PreparedRun::prepare(const std::string &dir, const std::vector<std::string> &specs,
                          std::string &err) {
  if (kiln::rt::Status s = lib.open(dir); !s) {
    err = s.message();
    return false;
  }
  inInfo = lib.inputs();
  outInfo = lib.outputs();
  numInputs = static_cast<int32_t>(inInfo.size());
  numOutputs = static_cast<int32_t>(outInfo.size());
  std::map<std::string, int32_t> inputIndex;
  for (int32_t i = 0; i < numInputs; ++i)
    inputIndex[inInfo[i].name] = i;
  host.resize(numInputs);
  std::vector<bool> given(numInputs, false);
  int32_t position = 0;
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    int32_t index;
    std::string path;
    if (eq != std::string::npos && inputIndex.count(spec.substr(0, eq))) {
      index = inputIndex[spec.substr(0, eq)];
      path = spec.substr(eq + 1);
    } else if (eq != std::string::npos && !std::filesystem::exists(spec)) {
      err = "--input names '" + spec.substr(0, eq) + "', which is not an input of the model";
      return false;
    } else {
      index = position++;
      path = spec;
      if (index >= numInputs) {
        err = "more --input files than the model's " + std::to_string(numInputs) +
              " inputs";
        return false;
      }
    }
    if (given[index]) {
      err = "input '" + std::string(inInfo[index].name) + "' given twice";
      return false;
    }
    if (!readTensorFile(path, host[index], err))
      return false;
    given[index] = true;
  }
  for (int32_t i = 0; i < numInputs; ++i) {
    if (!given[i]) {
      err = "missing --input for '" + std::string(inInfo[i].name) + "'";
      return false;
    }
    // NumPy and ONNX's test data carry bfloat16 as uint16 bit patterns.
    if (host[i].desc.dtype == kiln::rt::DType::U16 && inInfo[i].dtype == KILN_BF16)
      host[i].desc.dtype = kiln::rt::DType::BF16;
  }
  inputs.resize(numInputs);
  outputs.resize(numOutputs);
  for (int32_t i = 0; i < numInputs; ++i)
    inputs[i] = {static_cast<int32_t>(host[i].desc.dtype),
                 static_cast<int32_t>(host[i].desc.shape.size()),
                 host[i].desc.shape.data(), host[i].data.data()};
  results.resize(numOutputs);
  for (int32_t i = 0; i < numOutputs; ++i) {
    results[i].desc.dtype = static_cast<kiln::rt::DType>(outInfo[i].dtype);
    results[i].desc.shape.assign(outInfo[i].shape, outInfo[i].shape + outInfo[i].rank);
    results[i].data.assign(kiln::rt::tensorBytes(outInfo[i]), 0);
    outputs[i] = {outInfo[i].dtype, outInfo[i].rank, outInfo[i].shape,
                  results[i].data.data()};
  }
  return true;
}

bool PreparedRun::execute(ContextHandle &ctx, std::string &err) {
  const kiln::rt::ModelAbi &abi = lib.abi();
  bool ok = !ctx.failed();
  for (int32_t i = 0; ok && i < numInputs; ++i)
    ok = abi.kiln_context_set_input(ctx.context, inInfo[i].name, &inputs[i]) == KILN_OK;
  for (int32_t i = 0; ok && i < numOutputs; ++i)
    ok = abi.kiln_context_set_output(ctx.context, outInfo[i].name, &outputs[i]) == KILN_OK;
  ok = ok && abi.kiln_context_execute(ctx.context) == KILN_OK;
  if (!ok)
    err = ctx.error();
  return ok;
}

bool artifactInputs(const std::string &dir, std::vector<NamedTensor> &inputs,
                    std::string &err) {
  kiln::rt::Artifact lib;
  if (kiln::rt::Status s = lib.open(dir); !s) {
    err = s.message();
    return false;
  }
  inputs.clear();
  for (const kiln_tensor_info &info : lib.inputs()) {
    NamedTensor t;
    t.name = info.name;
    t.tensor.desc.dtype = static_cast<kiln::rt::DType>(info.dtype);
    t.tensor.desc.shape.assign(info.shape, info.shape + info.rank);
    t.tensor.data.assign(kiln::rt::tensorBytes(info), 0);
    inputs.push_back(std::move(t));
  }
  return true;
}

bool runArtifact(const std::string &dir, const std::vector<std::string> &inputs,
                 std::vector<NamedTensor> &outputs, std::string &err) {
  PreparedRun run;
  if (!run.prepare(dir, inputs, err))
    return false;
  ContextHandle ctx(run.lib);
  if (!run.execute(ctx, err))
    return false;
  outputs.clear();
  for (int32_t i = 0; i < run.numOutputs; ++i)
    outputs.push_back({run.outInfo[i].name, std::move(run.results[i])});
  return true;
}

std::vector<double> tensorValues(const rt::HostTensor &t) {
  size_t n = static_cast<size_t>(std::max<int64_t>(0, t.desc.numElements()));
  std::vector<double> out(n);
  const char *p = t.data.data();
  auto read = [&](auto zero) {
    using T = decltype(zero);
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * sizeof(T), sizeof(T));
      out[i] = static_cast<double>(v);
    }
  };
  switch (t.desc.dtype) {
  case rt::DType::F32: read(float()); break;
  case rt::DType::F64: read(double()); break;
  case rt::DType::I8: read(int8_t()); break;
  case rt::DType::I16: read(int16_t()); break;
  case rt::DType::I32: read(int32_t()); break;
  case rt::DType::I64: read(int64_t()); break;
  case rt::DType::U8: read(uint8_t()); break;
  case rt::DType::U16: read(uint16_t()); break;
  case rt::DType::U32: read(uint32_t()); break;
  case rt::DType::U64: read(uint64_t()); break;
  case rt::DType::Bool: read(uint8_t()); break;
  case rt::DType::F16:
  case rt::DType::BF16:
    for (size_t i = 0; i < n; ++i) {
      uint16_t bits;
      std::memcpy(&bits, p + i * 2, 2);
      if (t.desc.dtype == rt::DType::F16) {
        out[i] = halfToFloat(bits);
      } else {
        uint32_t f = static_cast<uint32_t>(bits) << 16;
        float v;
        std::memcpy(&v, &f, 4);
        out[i] = v;
      }
    }
    break;
  }
  return out;
}

bool isFloat(rt::DType t) {
  return t == rt::DType::F32 || t == rt::DType::F64 || t == rt::DType::F16 ||
         t == rt::DType::BF16;
}

bool prepareInputs(const std::string &artifacts, const std::vector<std::string> &givenSpecs,
                   uint64_t seed, const std::string &dir, std::vector<std::string> &specs,
                   std::string &err) {
  std::vector<NamedTensor> inputs;
  if (!artifactInputs(artifacts, inputs, err))
    return false;
  std::map<std::string, std::string> given;
  for (const std::string &spec : givenSpecs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      err = "--input '" + spec + "' is not of the form NAME=file.npy|file.pb";
      return false;
    }
    given[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  for (NamedTensor &t : inputs) {
    auto it = given.find(t.name);
    if (it != given.end()) {
      specs.push_back(t.name + "=" + it->second);
      given.erase(it);
      continue;
    }
    size_t n = static_cast<size_t>(t.tensor.desc.numElements());
    char *p = t.tensor.data.data();
    for (size_t i = 0; i < n; ++i) {
      auto put = [&](auto v) { std::memcpy(p + i * sizeof(v), &v, sizeof(v)); };
      switch (t.tensor.desc.dtype) {
      case rt::DType::F32: put(normal(rng)); break;
      case rt::DType::F64: put(static_cast<double>(normal(rng))); break;
      case rt::DType::I64: put(static_cast<int64_t>(rng() % 8)); break;
      case rt::DType::I32: put(static_cast<int32_t>(rng() % 8)); break;
      case rt::DType::Bool: put(static_cast<uint8_t>(rng() % 2)); break;
      case rt::DType::U8: case rt::DType::I8: put(static_cast<uint8_t>(rng() % 8)); break;
      default:
        err = "cannot generate input '" + t.name + "' of type " +
              rt::dtypeName(t.tensor.desc.dtype) + ": give it with --input";
        return false;
      }
    }
    std::string path = dir + "/" + std::to_string(specs.size()) + ".npy";
    rt::Status s = rt::writeNpy(path, t.tensor);
    if (!s) {
      err = s.message();
      return false;
    }
    specs.push_back(t.name + "=" + path);
  }
  if (!given.empty()) {
    err = "--input names '" + given.begin()->first + "', which is not an input of the model";
    return false;
  }
  return true;
}

} // namespace kiln
