// RUN: kiln-opt %s -split-input-file --kiln-convert-to-fp16 | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-convert-to-fp16="keep-input-types=false keep-output-types=false" | FileCheck %s --check-prefix=IO
// RUN: kiln-opt %s -split-input-file --kiln-convert-to-fp16="keep-f32=mm" | FileCheck %s --check-prefix=KEEP
// The printed result parses again (weights-sized f16 constants are resource blobs
// whose keys must be bare identifiers).
// RUN: kiln-opt %s -split-input-file --kiln-convert-to-fp16 | kiln-opt -split-input-file | FileCheck %s --check-prefix=ROUND

// A MatMul and its bias in f16 with an f16 weight constant; Softmax (keep-list:
// precision) reads an f32 copy; Relu is f16 again; the graph's types stay f32
// (casts at both edges). The weight's f32 constant is gone.
// CHECK-LABEL: func.func @mlp(%arg0: tensor<2x3xf32>) -> tensor<2x2xf32>
// CHECK-DAG: %[[X:.*]] = "onnx.Cast"(%arg0) <{to = 10 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK-DAG: %[[W:.*]] = "onnx.Constant"() <{value = dense<{{.*}}> : tensor<3x2xf16>}>
// CHECK-DAG: %[[B:.*]] = "onnx.Constant"() <{value = dense<[2.500000e-01, -4.000000e+00]> : tensor<2xf16>}>
// CHECK: %[[M:.*]] = "onnx.MatMul"(%[[X]], %[[W]]) {{.*}} -> tensor<2x2xf16>
// CHECK: %[[A:.*]] = "onnx.Add"(%[[M]], %[[B]]) {{.*}} -> tensor<2x2xf16>
// CHECK: %[[A32:.*]] = "onnx.Cast"(%[[A]]) <{to = 1 : i64}> : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK: %[[S:.*]] = "onnx.Softmax"(%[[A32]]) {{.*}} -> tensor<2x2xf32>
// CHECK: %[[S16:.*]] = "onnx.Cast"(%[[S]]) <{to = 10 : i64}>
// CHECK: %[[R:.*]] = "onnx.Relu"(%[[S16]]) : (tensor<2x2xf16>) -> tensor<2x2xf16>
// CHECK: %[[Y:.*]] = "onnx.Cast"(%[[R]]) <{to = 1 : i64}>
// CHECK: return %[[Y]] : tensor<2x2xf32>
// CHECK-NOT: tensor<3x2xf32>

// Without keep-input-types and keep-output-types the graph's input and output are f16.
// IO-LABEL: func.func @mlp(%arg0: tensor<2x3xf16>) -> tensor<2x2xf16>
// IO: "onnx.MatMul"(%arg0,
// IO: return {{.*}} : tensor<2x2xf16>

// keep-f32 names the MatMul: it reads the f32 input and the f32 weight.
// KEEP-LABEL: func.func @mlp
// KEEP: %[[M:.*]] = "onnx.MatMul"(%arg0, %{{.*}}) {{.*}} -> tensor<2x2xf32>
// KEEP: "onnx.Cast"(%[[M]]) <{to = 10 : i64}>
func.func @mlp(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = "onnx.Constant"() {value = dense<[[1.0, -1.0], [2.0, 0.5], [-3.0, 1.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %b = "onnx.Constant"() {value = dense<[0.25, -4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "onnx.MatMul"(%x, %w) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32> loc("mm")
  %a = "onnx.Add"(%m, %b) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %s = "onnx.Softmax"(%a) {axis = -1 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = "onnx.Relu"(%s) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// A constant outside f16's finite range keeps f32 and is cast where read in f16;
// integer tensors (Shape, the Reshape's shape) are untouched.
// CHECK-LABEL: func.func @range
// CHECK: %[[C:.*]] = "onnx.Constant"() <{value = dense<7.000000e+04> : tensor<4xf32>}>
// CHECK: %[[C16:.*]] = "onnx.Cast"(%[[C]]) <{to = 10 : i64}>
// CHECK: "onnx.Mul"(%{{.*}}, %[[C16]]) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
// CHECK: "onnx.Shape"(%{{.*}}) : (tensor<4xf16>) -> tensor<1xi64>
// CHECK: "onnx.Reshape"(%{{.*}}, %{{.*}}) : (tensor<4xf16>, tensor<1xi64>) -> tensor<4xf16>
func.func @range(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "onnx.Constant"() {value = dense<70000.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %m = "onnx.Mul"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = "onnx.Shape"(%m) : (tensor<4xf32>) -> tensor<1xi64>
  %r = "onnx.Reshape"(%m, %s) : (tensor<4xf32>, tensor<1xi64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A model already f16 (or mixed) keeps its own f16 values as they are: nothing
// is cast up for the keep-list's Exp, which computes in the model's f16.
// CHECK-LABEL: func.func @mixed
// CHECK: %[[E:.*]] = "onnx.Exp"(%arg0) : (tensor<4xf16>) -> tensor<4xf16>
// CHECK: %[[E32:.*]] = "onnx.Cast"(%[[E]]) <{to = 1 : i64}>
// CHECK: "onnx.Exp"(%[[E32]]) : (tensor<4xf32>) -> tensor<4xf32>
func.func @mixed(%x: tensor<4xf16>) -> tensor<4xf32> {
  %e = "onnx.Exp"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  %c = "onnx.Cast"(%e) {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
  %f = "onnx.Exp"(%c) : (tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

// A weights blob becomes an f16 blob named after its node, the name made a bare
// key ("onnx::W" -> "onnx__W_f16"); a weights-sized constant of one value (a
// folded zero bias, say) becomes an f16 splat, not a blob.
// CHECK-LABEL: func.func @blob
// CHECK-DAG: "onnx.Constant"() <{value = dense_resource<onnx__W_f16> : tensor<2xf16>}>
// CHECK-DAG: "onnx.Constant"() <{value = dense<5.000000e-01> : tensor<4x32xf16>}>
// ROUND-LABEL: func.func @blob
// ROUND: dense_resource<onnx__W_f16> : tensor<2xf16>
func.func @blob(%x: tensor<2xf32>, %y: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2x32xf32>) {
  %w = "onnx.Constant"() {value = dense_resource<W> : tensor<2xf32>} : () -> tensor<2xf32> loc("onnx::W")
  %m = "onnx.Mul"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %s = "onnx.Constant"() {value = dense<0.5> : tensor<4x32xf32>} : () -> tensor<4x32xf32> loc("S")
  %n = "onnx.MatMul"(%y, %s) : (tensor<2x4xf32>, tensor<4x32xf32>) -> tensor<2x32xf32>
  return %m, %n : tensor<2xf32>, tensor<2x32xf32>
}
{-#
  dialect_resources: {
    builtin: {
      W: "0x040000000000803F0000C03F"
    }
  }
#-}

// -----

// Weights round to nearest, ties to even, subnormals included (bytes little-endian,
// after the blob's alignment, 16, as 4 bytes): 1 + 2^-11 (3F801000) -> 1.0 (3C00),
// 1 + 3 * 2^-11 (3F803000) -> 1 + 2^-9 (3C02), 1.5 * 2^-24 (33C00000) -> 2^-23 (0002).
// CHECK-LABEL: func.func @rounding
// CHECK: T_f16: "0x10000000003C023C0200"
func.func @rounding(%x: tensor<3xf32>) -> tensor<3xf32> {
  %t = "onnx.Constant"() {value = dense_resource<T> : tensor<3xf32>} : () -> tensor<3xf32> loc("T")
  %m = "onnx.Mul"(%x, %t) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}
{-#
  dialect_resources: {
    builtin: {
      T: "0x040000000010803F0030803F0000C033"
    }
  }
#-}

// -----

// An f32 weights blob (as the importer writes them) converts straight to an f16
// blob: 1.0 (3F800000) -> 3C00, 2^-24 (33800000) -> 0001.
// CHECK-LABEL: func.func @f32_blob
// CHECK: "onnx.Constant"() <{value = dense_resource<Wb_f16> : tensor<2xf16>}>
// CHECK: Wb_f16: "0x10000000003C0100"
func.func @f32_blob(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = "onnx.Constant"() {value = dense_resource<Wb> : tensor<2xf32>} : () -> tensor<2xf32> loc("Wb")
  %m = "onnx.Mul"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %m : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      Wb: "0x040000000000803F00008033"
    }
  }
#-}

// -----

// An f32 blob with a value past f16's range (1e5) keeps f32 and is cast where read.
// CHECK-LABEL: func.func @f32_blob_range
// CHECK: %[[W:.*]] = "onnx.Constant"() <{value = dense_resource<Wr> : tensor<2xf32>}>
// CHECK: "onnx.Cast"(%[[W]]) <{to = 10 : i64}>
func.func @f32_blob_range(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = "onnx.Constant"() {value = dense_resource<Wr> : tensor<2xf32>} : () -> tensor<2xf32> loc("Wr")
  %m = "onnx.Mul"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %m : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      Wr: "0x040000000000803F0050C347"
    }
  }
#-}
