// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// The control-flow family (passes/lowering/ControlFlow.cpp).

// A Scan (as kiln-decompose makes of a recurrent op) becomes an scf.for over the
// scan length: the state carried and its new value copied into it, the scan input
// sliced at the step (from the end: reverse), the body lowered in place, the scan
// output inserted at its (reversed) position.
// CHECK-LABEL: func.func @scan_reverse
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[YS:.*]] = tensor.empty() : tensor<3x2xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[H:.*]] = %arg0, %[[Y:.*]] = %[[YS]]) -> (tensor<2xf32>, tensor<3x2xf32>) {
// CHECK:   %[[C2:.*]] = arith.constant 2 : index
// CHECK:   %[[T:.*]] = arith.subi %[[C2]], %[[I]] : index
// CHECK:   %[[XT:.*]] = tensor.extract_slice %arg1[%[[T]], 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
// CHECK:   %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[XT]] : tensor<2xf32>, tensor<2xf32>)
// CHECK:     arith.addf
// CHECK:   %[[NEXT:.*]] = linalg.copy ins(%[[SUM]] : tensor<2xf32>) outs(%[[H]] : tensor<2xf32>)
// CHECK:   %[[INS:.*]] = tensor.insert_slice %[[SUM]] into %[[Y]][%[[T]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
// CHECK:   scf.yield %[[NEXT]], %[[INS]] : tensor<2xf32>, tensor<3x2xf32>
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
func.func @scan_reverse(%h0: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %h, %ys = "onnx.Scan"(%h0, %xs) <{num_scan_inputs = 1 : i64, scan_input_directions = [1], scan_output_directions = [1]}> ({
  ^bb0(%s: tensor<2xf32>, %x: tensor<2xf32>):
    %n = "onnx.Add"(%s, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %n, %n : tensor<2xf32>, tensor<2xf32>
  }) : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %h, %ys : tensor<2xf32>, tensor<3x2xf32>
}

// Scan axes other than 0: the input sliced along axis 1, the output stacked along
// axis 1, in order.
// CHECK-LABEL: func.func @scan_axes
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[H:.*]] = %arg0, %[[Y:.*]] = %{{.*}}) -> (tensor<2xf32>, tensor<2x4xf32>)
// CHECK:   tensor.extract_slice %arg1[0, %[[I]]] [2, 1] [1, 1] : tensor<2x4xf32> to tensor<2xf32>
// CHECK:   tensor.insert_slice %{{.*}} into %[[Y]][0, %[[I]]] [2, 1] [1, 1] : tensor<2xf32> into tensor<2x4xf32>
func.func @scan_axes(%h0: tensor<2xf32>, %xs: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2x4xf32>) {
  %h, %ys = "onnx.Scan"(%h0, %xs) <{num_scan_inputs = 1 : i64, scan_input_axes = [1], scan_output_axes = [-1]}> ({
  ^bb0(%s: tensor<2xf32>, %x: tensor<2xf32>):
    %n = "onnx.Mul"(%s, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %n, %x : tensor<2xf32>, tensor<2xf32>
  }) : (tensor<2xf32>, tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2x4xf32>)
  return %h, %ys : tensor<2xf32>, tensor<2x4xf32>
}
