// RUN: kiln-opt %s --kiln-form-kernels | FileCheck %s

#id = affine_map<(d0) -> (d0)>
// Each compute op is its own kernel; tensor.empty, fill and scalar constants are
// cloned into the kernel that uses them; tensor constants stay outside as inputs.
// CHECK-LABEL: func.func @two_kernels
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[W:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[K0:.*]] = kiln.kernel "k0"(%[[X]], %[[W]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK: tensor.empty
// CHECK: linalg.generic
// CHECK: kiln.yield
// CHECK: %[[K1:.*]] = kiln.kernel "k1"(%[[K0]])
// CHECK: linalg.fill
// CHECK: return %[[K1]]
func.func @two_kernels(%x: tensor<4xf32>) -> tensor<f32> {
  %w = arith.constant dense<2.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%m : tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
