// RUN: kiln-opt %s --kiln-build-plan | FileCheck %s

// CHECK-LABEL: func.func @k0
// CHECK-SAME: (%[[IN:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-SAME: attributes {kiln.kernel}
// CHECK: bufferization.to_tensor %[[IN]] restrict
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[OUT]]
// CHECK-LABEL: func.func @k1
// CHECK: kiln.plan @main_graph
// CHECK: %[[I:.*]] = kiln.input 0 "x" : memref<4xf32>
// CHECK: %[[C:.*]] = kiln.weight offset -1 {{.*}}: memref<4xf32>
// CHECK: %[[S:.*]] = kiln.slice offset -1 size 16 : memref<4xf32>
// k0 multiplies elementwise: its result may be written over its first input.
// CHECK: kiln.launch @k0(%[[I]], %[[C]], %[[S]]) stream -1 {flops = 4 : i64, in_place = array<i64: 0>, num_inputs = 2 : i64}
// CHECK: %[[O:.*]] = kiln.output 0 "y" : memref<4xf32>
// CHECK: kiln.launch @k1(%[[S]], %[[O]]) stream -1
// The graph input returned as an output is a copy.
// CHECK: %[[O2:.*]] = kiln.output 1 "x_again" : memref<4xf32>
// CHECK: kiln.copy %[[I]] to %[[O2]] stream -1
// CHECK-NOT: func.func @main_graph
#id = affine_map<(d0) -> (d0)>
func.func @main_graph(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}, tensor<4xf32> {onnx.name = "x_again"}) {
  %w = arith.constant dense<2.0> : tensor<4xf32>
  %0 = kiln.kernel "k0"(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %r = arith.mulf %p, %q : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  %1 = kiln.kernel "k1"(%0) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %r = arith.negf %p : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  return %1, %x : tensor<4xf32>, tensor<4xf32>
}
