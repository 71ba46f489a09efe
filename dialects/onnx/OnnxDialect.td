//===- OnnxDialect.td - Entry point for the onnx dialect's TableGen -*- tablegen -*-===//
include "dialects/onnx/OnnxBase.td"
include "dialects/onnx/OnnxOps.td"
