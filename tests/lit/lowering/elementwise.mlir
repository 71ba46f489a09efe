// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// Elementwise ops become one linalg.generic each; broadcasting is in the maps;
// unsigned integers become signless and pick unsigned arith ops.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK: arith.addf
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @sigmoid
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
func.func @sigmoid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Sigmoid"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @unsigned_max
// CHECK-SAME: tensor<4xi8> {kiln.element_type = ui8}
// CHECK: arith.maxui
func.func @unsigned_max(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "onnx.Max"(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// CHECK-LABEL: func.func @cast_and_compare
// CHECK: arith.fptosi
// CHECK: arith.cmpi slt
func.func @cast_and_compare(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  %0 = "onnx.Cast"(%a) {to = 6 : i64} : (tensor<4xf32>) -> tensor<4xi32>
  %1 = "onnx.Less"(%0, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %1 : tensor<4xi1>
}

// CHECK-LABEL: func.func @clip_max_only
// CHECK: arith.minimumf
// CHECK-NOT: arith.maximumf
func.func @clip_max_only(%a: tensor<4xf32>, %hi: tensor<f32>) -> tensor<4xf32> {
  %none = onnx.NoValue
  %0 = "onnx.Clip"(%a, %none, %hi) : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
