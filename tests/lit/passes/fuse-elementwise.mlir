// RUN: kiln-opt %s --kiln-fuse-elementwise | FileCheck %s

#id = affine_map<(d0) -> (d0)>
#mk = affine_map<(d0, d1) -> (d0, d1)>
#kn = affine_map<(d0, d1) -> (d1)>
#m = affine_map<(d0, d1) -> (d0)>

// An elementwise chain becomes one generic.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.maximumf %p, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// A producer with two users, or feeding a reduction, stays separate: fusing
// would compute it twice, or once per reduction step.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-3: linalg.generic
func.func @not_fused(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#mk, #mk], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.negf %p : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#mk, #m], iterator_types = ["parallel", "reduction"]}
      ins(%n : tensor<4x8xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#mk, #mk], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.absf %p : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %a, %s : tensor<4x8xf32>, tensor<4xf32>
}
