// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// Data-dependent indexing (passes/lowering/Indexing.cpp).

// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: arith.index_cast
// CHECK: tensor.extract
func.func @gather(%a: tensor<5x6xf32>, %i: tensor<3xi64>) -> tensor<3x6xf32> {
  %0 = "onnx.Gather"(%a, %i) {axis = 0 : i64} : (tensor<5x6xf32>, tensor<3xi64>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// GatherND with one batch dim: out[b, j] = data[b, idx[b, 0], j].
// CHECK-LABEL: func.func @gathernd
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(
// CHECK: %[[B:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: tensor.extract %arg1[%[[B]], %c0] : tensor<2x1xi64>
// CHECK: tensor.extract %arg0[%[[B]], %{{.*}}, %[[J]]] : tensor<2x3x4xf32>
func.func @gathernd(%d: tensor<2x3x4xf32>, %i: tensor<2x1xi64>) -> tensor<2x4xf32> {
  %0 = "onnx.GatherND"(%d, %i) {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// ReverseSequence: the first len[b] steps of sequence b reversed, the rest kept.
// CHECK-LABEL: func.func @reverse_sequence
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<2xi64>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: tensor.extract %arg0
func.func @reverse_sequence(%x: tensor<4x2xf32>, %len: tensor<2xi64>) -> tensor<4x2xf32> {
  %0 = "onnx.ReverseSequence"(%x, %len) {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// ScatterElements as a gather: each output element folds the updates whose index
// names it (here adding them) onto the data, a reduction over the updated axis.
// CHECK-LABEL: func.func @scatter_elements_add
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2xi8>) outs(%arg0 : tensor<3x3xf32>)
// CHECK: tensor.extract %arg1
// CHECK: arith.cmpi eq
// CHECK: tensor.extract %arg2
// CHECK: arith.addf %out
// CHECK: arith.select
func.func @scatter_elements_add(%d: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = "onnx.ScatterElements"(%d, %i, %u) {axis = 0 : i64, reduction = "add"} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// ScatterND: a reduction over the index tuples; without a reduction the last
// update that lands wins.
// CHECK-LABEL: func.func @scatternd
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4xi8>) outs(%arg0 : tensor<8xf32>)
// CHECK: tensor.extract %arg1[%{{.*}}, %c0] : tensor<4x1xi64>
// CHECK: %[[V:.*]] = tensor.extract %arg2
// CHECK: arith.select %{{.*}}, %[[V]], %out
func.func @scatternd(%d: tensor<8xf32>, %i: tensor<4x1xi64>, %u: tensor<4xf32>) -> tensor<8xf32> {
  %0 = "onnx.ScatterND"(%d, %i, %u) : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
