// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// The loss family (passes/lowering/Loss.cpp).

// NegativeLogLikelihoodLoss, mean with class weights and ignore_index: per target
// the negated input at its class times its weight (0 where ignored), then the sum
// of losses over the sum of weights.
// CHECK-LABEL: func.func @nll_mean
// CHECK: %[[PER:.*]]:2 = linalg.generic {{.*}} ins(%arg1 : tensor<2x3xi64>)
// CHECK: tensor.extract %arg0
// CHECK: tensor.extract %arg2
// CHECK: arith.cmpi eq
// CHECK: arith.negf
// CHECK: linalg.yield
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[PER]]#0
// CHECK: %[[W:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[PER]]#1
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[W]] : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @nll_mean(%x: tensor<2x4x3xf32>, %t: tensor<2x3xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %w) {ignore_index = -1 : i64} : (tensor<2x4x3xf32>, tensor<2x3xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// reduction = none: the per-target losses.
// CHECK-LABEL: func.func @nll_none
// CHECK: %[[PER:.*]]:2 = linalg.generic
// CHECK: return %[[PER]]#0 : tensor<2xf32>
func.func @nll_none(%x: tensor<2x4xf32>, %t: tensor<2xi32>) -> tensor<2xf32> {
  %none = onnx.NoValue
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %none) {reduction = "none"} : (tensor<2x4xf32>, tensor<2xi32>, none) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// SoftmaxCrossEntropyLoss: LogSoftmax over the classes (also the second output),
// then NegativeLogLikelihoodLoss.
// CHECK-LABEL: func.func @sce
// CHECK: math.exp
// CHECK: math.log
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<2xi64>)
// CHECK: arith.negf
// CHECK: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<2x4xf32>
func.func @sce(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> (tensor<f32>, tensor<2x4xf32>) {
  %none = onnx.NoValue
  %0, %1 = "onnx.SoftmaxCrossEntropyLoss"(%x, %t, %none) {reduction = "sum"} : (tensor<2x4xf32>, tensor<2xi64>, none) -> (tensor<f32>, tensor<2x4xf32>)
  return %0, %1 : tensor<f32>, tensor<2x4xf32>
}
