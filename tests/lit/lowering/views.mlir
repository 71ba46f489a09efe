// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// Views and copies (passes/lowering/Views.cpp).

// CHECK-DAG: #[[REV:.*]] = affine_map<(d0) -> (-d0 + 4)>

// CHECK-LABEL: func.func @reshape
// CHECK: tensor.collapse_shape
// CHECK: tensor.expand_shape
func.func @reshape(%a: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %s = "onnx.Constant"() {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Reshape"(%a, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "onnx.Transpose"(%a) {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @concat
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [2, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 3] [2, 3] [1, 1]
func.func @concat(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = "onnx.Concat"(%a, %a) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// A negative step reads backwards: index = start + step * i.
// CHECK-LABEL: func.func @slice_reverse
// CHECK: linalg.generic {indexing_maps = [#[[REV]]
func.func @slice_reverse(%a: tensor<5xf32>) -> tensor<5xf32> {
  %st = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = "onnx.Constant"() {value = dense<-9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %sp = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%a, %st, %en, %ax, %sp) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// Pad with run-time pads or a non-constant mode: a generic that computes each
// element's source coordinate (reflect: mirrored at the edges).
// CHECK-LABEL: func.func @reflect_pad
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<2xi64>
// CHECK: linalg.generic
// CHECK: arith.subi
// CHECK: tensor.extract
func.func @reflect_pad(%a: tensor<4xf32>, %pads: tensor<2xi64>) -> tensor<7xf32> {
  %none = onnx.NoValue
  %0 = "onnx.Pad"(%a, %pads, %none, %none) {mode = "reflect"} : (tensor<4xf32>, tensor<2xi64>, none, none) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// A forward slice is a strided extract_slice, also where it starts at 0 with step 1
// (a generic reading input[d] would take the input's larger extent as its range).
// CHECK-LABEL: func.func @slice_prefix
// CHECK: tensor.extract_slice %arg0[0] [1] [1] : tensor<2xi64> to tensor<1xi64>
// CHECK-NOT: linalg.generic
func.func @slice_prefix(%a: tensor<2xi64>) -> tensor<1xi64> {
  %st = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.NoValue
  %0 = "onnx.Slice"(%a, %st, %en, %none, %none) : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<1xi64>
  return %0 : tensor<1xi64>
}

// Steps of 2 from 1: extract_slice with offset 1, stride 2.
// CHECK-LABEL: func.func @slice_strided
// CHECK: tensor.extract_slice %arg0[0, 1] [4, 3] [1, 2] : tensor<4x6xf32> to tensor<4x3xf32>
func.func @slice_strided(%a: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %st = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = "onnx.Constant"() {value = dense<6> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %sp = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%a, %st, %en, %ax, %sp) : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
