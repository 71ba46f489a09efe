// RUN: kiln-opt %s --kiln-build-plan | FileCheck %s

// kiln.if: both branch functions are laid into the plan, then before else, each
// launch and copy guarded by the condition; both write the If's results into the
// same buffers (here the graph's outputs). The then branch returns its input as
// its second result: a guarded copy. The else branch returns one value twice: the
// second time a copy from the first. A branch's kernels take its name as a prefix;
// the branch functions are gone.
// CHECK-LABEL: kiln.plan @main_graph
// CHECK: %[[C:.*]] = kiln.input 0 "c" : memref<i1>
// CHECK: %[[X:.*]] = kiln.input 1 "x" : memref<4xf32>
// CHECK: %[[Y:.*]] = kiln.output 0 "y" : memref<4xf32>
// CHECK: %[[Z:.*]] = kiln.output 1 "z" : memref<4xf32>
// CHECK: kiln.launch @main_graph_if0_then_k0(%[[X]], %[[Y]]) if(%[[C]] : memref<i1>) [true] stream -1
// CHECK: kiln.copy %[[X]] to %[[Z]] if(%[[C]] : memref<i1>) [true] stream -1
// CHECK: kiln.launch @main_graph_if0_else_k0(%[[X]], %[[Y]]) if(%[[C]] : memref<i1>) [false] stream -1
// CHECK: kiln.copy %[[Y]] to %[[Z]] if(%[[C]] : memref<i1>) [false] stream -1
// CHECK-NOT: kiln.copy
// CHECK-NOT: func.func private @main_graph_if0
#id = affine_map<(d0) -> (d0)>
func.func @main_graph(%c: tensor<i1> {onnx.name = "c"}, %x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}, tensor<4xf32> {onnx.name = "z"}) {
  %r:2 = kiln.if %c then @main_graph_if0_then else @main_graph_if0_else(%x) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @main_graph_if0_then(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.kernel "k0"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %n = arith.negf %p : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  return %0, %x : tensor<4xf32>, tensor<4xf32>
}
func.func private @main_graph_if0_else(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.kernel "k0"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %n = math.absf %p : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  return %0, %0 : tensor<4xf32>, tensor<4xf32>
}
