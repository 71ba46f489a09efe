// RUN: kiln-opt %s -split-input-file -verify-diagnostics --kiln-infer-shapes | FileCheck %s

// A shape computed from a shape: Shape -> Gather -> Concat -> Reshape folds to a
// constant, and the Reshape and what follows become static.
// CHECK-LABEL: func.func @shape_chain
// CHECK-SAME: -> tensor<6x4xf32>
// CHECK-NOT: onnx.Shape
// CHECK-NOT: onnx.Gather
// CHECK: %[[S:.*]] = "onnx.Constant"() <{value = dense<[-1, 4]> : tensor<2xi64>}>
// CHECK: "onnx.Reshape"(%arg0, %[[S]]) <{allowzero = 0 : i64}> : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
// CHECK: "onnx.Relu"(%{{.*}}) : (tensor<6x4xf32>) -> tensor<6x4xf32>
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %s = "onnx.Shape"(%x) <{start = 0 : i64}> : (tensor<2x3x4xf32>) -> tensor<?xi64>
  %i = "onnx.Constant"() <{value = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %last = "onnx.Gather"(%s, %i) <{axis = 0 : i64}> : (tensor<?xi64>, tensor<1xi64>) -> tensor<*xi64>
  %m = "onnx.Constant"() <{value = dense<-1> : tensor<1xi64>}> : () -> tensor<1xi64>
  %ns = "onnx.Concat"(%m, %last) <{axis = 0 : i64}> : (tensor<1xi64>, tensor<*xi64>) -> tensor<*xi64>
  %y = "onnx.Reshape"(%x, %ns) <{allowzero = 0 : i64}> : (tensor<2x3x4xf32>, tensor<*xi64>) -> tensor<*xf32>
  %r = "onnx.Relu"(%y) : (tensor<*xf32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// Arithmetic on shapes, ConstantOfShape and Range fold too.
// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-SAME: -> (tensor<2x3xf32>, tensor<3xi64>)
// CHECK-DAG: "onnx.Constant"() <{value = dense<0.000000e+00> : tensor<2x3xf32>}>
// CHECK-DAG: "onnx.Constant"() <{value = dense<[0, 2, 4]> : tensor<3xi64>}>
func.func @shape_arithmetic(%x: tensor<4x6xf32>) -> (tensor<*xf32>, tensor<*xi64>) {
  %s = "onnx.Shape"(%x) <{start = 0 : i64}> : (tensor<4x6xf32>) -> tensor<*xi64>
  %two = "onnx.Constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
  %half = "onnx.Div"(%s, %two) : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %z = "onnx.ConstantOfShape"(%half) : (tensor<*xi64>) -> tensor<*xf32>
  %zero = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
  %six = "onnx.Size"(%half) : (tensor<*xi64>) -> tensor<*xi64>
  %lim = "onnx.Mul"(%six, %two) : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %lim3 = "onnx.Add"(%lim, %two) : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %r = "onnx.Range"(%zero, %lim3, %two) : (tensor<i64>, tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  return %z, %r : tensor<*xf32>, tensor<*xi64>
}

// -----

// An If whose condition is constant is replaced by its branch.
// CHECK-LABEL: func.func @constant_if
// CHECK-NOT: onnx.If
// CHECK: %[[N:.*]] = "onnx.Neg"(%arg0)
// CHECK: return %[[N]] : tensor<3xf32>
func.func @constant_if(%x: tensor<3xf32>) -> tensor<*xf32> {
  %c = "onnx.Constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
  %r = "onnx.If"(%c) ({
    %n = "onnx.Neg"(%x) : (tensor<3xf32>) -> tensor<*xf32>
    onnx.Yield %n : tensor<*xf32>
  }, {
    onnx.Yield %x : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// The model's declared type and the inferred one disagree: an error naming the node.
func.func @contradiction(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{output 0 of onnx.Relu is inferred as tensor<2x3xf32> but the model declares tensor<3x2xf32>}}
  %r = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// A result whose shape depends on run-time values.
func.func @runtime_shape(%x: tensor<4xf32>, %n: tensor<i64>) -> tensor<*xf32> {
  %zero = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
  %one = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
  // expected-error @+1 {{output 0 of onnx.Range has a shape that depends on run-time values (tensor<?xi64>); freeze the inputs it depends on with --input-value}}
  %r = "onnx.Range"(%zero, %n, %one) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %c = "onnx.Cast"(%r) <{to = 1 : i64}> : (tensor<*xi64>) -> tensor<*xf32>
  return %c : tensor<*xf32>
}

// -----

// A run-time length that a declared type pins: Range's length flows through
// element-wise ops (a scalar broadcast, a Cast) into an output the model declares
// as 10 long, so Range gets length 10 (as ONNX's window functions expand).
// CHECK-LABEL: func.func @declared_pins_runtime_length
// CHECK: %[[R:.*]] = "onnx.Range"(%{{.*}}, %arg0, %{{.*}}) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<10xf32>
// CHECK: "onnx.Mul"(%[[R]], %arg1) : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
// CHECK: "onnx.Cos"({{.*}}) : (tensor<10xf32>) -> tensor<10xf32>
// CHECK: "onnx.Cast"({{.*}}) <{to = 11 : i64}> : (tensor<10xf32>) -> tensor<10xf64>
func.func @declared_pins_runtime_length(%n: tensor<f32>, %step: tensor<f32>) -> tensor<10xf64> {
  %zero = "onnx.Constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %one = "onnx.Constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "onnx.Range"(%zero, %n, %one) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<*xf32>
  %a = "onnx.Mul"(%r, %step) : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
  %c = "onnx.Cos"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  %d = "onnx.Cast"(%c) <{to = 11 : i64}> : (tensor<*xf32>) -> tensor<10xf64>
  return %d : tensor<10xf64>
}

// -----

// Two declared types that disagree on the run-time length leave it unknown: the
// error stands.
func.func @declared_lengths_disagree(%n: tensor<i64>) -> (tensor<3xi64>, tensor<4xi64>) {
  %zero = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
  %one = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
  // expected-error @+1 {{output 0 of onnx.Range has a shape that depends on run-time values (tensor<?xi64>)}}
  %r = "onnx.Range"(%zero, %n, %one) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %a = "onnx.Neg"(%r) : (tensor<*xi64>) -> tensor<3xi64>
  %b = "onnx.Abs"(%r) : (tensor<*xi64>) -> tensor<4xi64>
  return %a, %b : tensor<3xi64>, tensor<4xi64>
}

// -----

// Operands that do not broadcast.
func.func @incompatible(%x: tensor<3xf32>, %y: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{cannot infer the shape of onnx.Add: Incompatible dimensions}}
  %r = "onnx.Add"(%x, %y) : (tensor<3xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// An If decided at run time: the branches are inferred, and the result gets the
// type both give.
// CHECK-LABEL: func.func @runtime_if
// CHECK-SAME: -> tensor<3xf32>
// CHECK: "onnx.Neg"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: }) : (tensor<i1>) -> tensor<3xf32>
func.func @runtime_if(%c: tensor<i1>, %x: tensor<3xf32>) -> tensor<*xf32> {
  %r = "onnx.If"(%c) ({
    onnx.Yield %x : tensor<3xf32>
  }, {
    %n = "onnx.Neg"(%x) : (tensor<3xf32>) -> tensor<*xf32>
    onnx.Yield %n : tensor<*xf32>
  }) : (tensor<i1>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// Scan with static shapes is unrolled: a copy of the body per step, the scan
// outputs stacked.
// CHECK-LABEL: func.func @scan_sum
// CHECK-SAME: -> (tensor<2xf32>, tensor<3x2xf32>)
// CHECK-NOT: onnx.Scan
// CHECK-COUNT-3: "onnx.Add"
// CHECK: "onnx.Concat"({{.*}}) <{axis = 0 : i64}> : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
func.func @scan_sum(%init: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s, %o = "onnx.Scan"(%init, %x) <{num_scan_inputs = 1 : i64}> ({
  ^bb0(%sum: tensor<*xf32>, %next: tensor<*xf32>):
    %a = "onnx.Add"(%sum, %next) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    onnx.Yield %a, %a : tensor<*xf32>, tensor<*xf32>
  }) : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return %s, %o : tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @scan_lengths_differ(%init: tensor<2xf32>, %x: tensor<3x2xf32>, %y: tensor<4x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{Scan's inputs differ in length along their scan axes}}
  %s = "onnx.Scan"(%init, %x, %y) <{num_scan_inputs = 2 : i64}> ({
  ^bb0(%sum: tensor<*xf32>, %a: tensor<*xf32>, %b: tensor<*xf32>):
    %r = "onnx.Add"(%sum, %a) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    onnx.Yield %r : tensor<*xf32>
  }) : (tensor<2xf32>, tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<*xf32>
  return %s : tensor<*xf32>
}

// -----

// A constant trip count, but the body's condition depends on the data: three
// guarded copies of the body; each copy's carried value is kept by Where only while
// every condition so far held.
// CHECK-LABEL: func.func @loop_runtime_condition
// CHECK-NOT: onnx.Loop
// CHECK: %[[W1:.*]] = "onnx.Where"(%{{.*}}, %{{.*}}, %arg0)
// CHECK: %[[W2:.*]] = "onnx.Where"(%{{.*}}, %{{.*}}, %[[W1]])
// CHECK: %[[W3:.*]] = "onnx.Where"(%{{.*}}, %{{.*}}, %[[W2]])
// CHECK-NEXT: return %[[W3]] : tensor<f32>
func.func @loop_runtime_condition(%x: tensor<f32>) -> tensor<*xf32> {
  %n = "onnx.Constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
  %t = "onnx.Constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
  %r = "onnx.Loop"(%n, %t, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<*xf32>):
    %zero = "onnx.Constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %go = "onnx.Greater"(%acc, %zero) : (tensor<*xf32>, tensor<f32>) -> tensor<*xi1>
    %half = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
    %next = "onnx.Mul"(%acc, %half) : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
    onnx.Yield %go, %next : tensor<*xi1>, tensor<*xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<f32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// A run-time trip count bounded by the declared scan output (4 rows): four
// copies, each active while its index is below the trip count.
// CHECK-LABEL: func.func @loop_runtime_trips_declared_scan
// CHECK-COUNT-4: "onnx.Less"
// CHECK: "onnx.Concat"({{.*}}) <{axis = 0 : i64}> : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: onnx.Loop
func.func @loop_runtime_trips_declared_scan(%n: tensor<i64>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  %t = "onnx.Constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
  %r:2 = "onnx.Loop"(%n, %t, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<*xf32>):
    %one = "onnx.Constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
    %next = "onnx.Add"(%acc, %one) : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
    onnx.Yield %c, %next, %next : tensor<i1>, tensor<*xf32>, tensor<*xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<4x2xf32>
}

// -----

// A run-time trip count and nothing that bounds it: an error naming the Loop
// (after trying the copies a condition could end).
func.func @loop_runtime_trips_unbounded(%n: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %t = "onnx.Constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
  // expected-error @+1 {{Loop's trip count and condition depend on run-time values and nothing bounds its iterations within 4096 (a constant trip count, a declared scan output length, or a condition that turns false within 256 iterations)}}
  %r = "onnx.Loop"(%n, %t, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<*xf32>):
    onnx.Yield %c, %acc : tensor<i1>, tensor<*xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// A while loop (no trip count) whose condition is `data and i < 3`, written as a
// short-circuit If as PyTorch's scripting exports it: each copy computes on the
// counter an active run carries, so at i = 3 both branches give false, the If
// folds, and the unrolling stops after three copies (each guarded by Where).
// CHECK-LABEL: func.func @loop_while_counter
// CHECK-NOT: "onnx.Loop"
// CHECK-COUNT-3: "onnx.Mul"
// CHECK-NOT: "onnx.Mul"
// CHECK: return
func.func @loop_while_counter(%go: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %none = onnx.NoValue
  %zero = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
  %f = "onnx.Constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
  %r:2 = "onnx.Loop"(%none, %go, %x, %zero) ({
  ^bb0(%it: tensor<i64>, %c: tensor<i1>, %acc: tensor<*xf32>, %i: tensor<*xi64>):
    %half = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
    %next = "onnx.Mul"(%acc, %half) : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
    %one = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %i1 = "onnx.Add"(%i, %one) : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
    %m = "onnx.ReduceMax"(%next, %none) <{keepdims = 0 : i64}> : (tensor<*xf32>, none) -> tensor<*xf32>
    %data = "onnx.Greater"(%m, %half) : (tensor<*xf32>, tensor<f32>) -> tensor<*xi1>
    %cond = "onnx.If"(%data) ({
      onnx.Yield %f : tensor<i1>
    }, {
      %three = "onnx.Constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %lt = "onnx.Less"(%i1, %three) : (tensor<*xi64>, tensor<i64>) -> tensor<*xi1>
      onnx.Yield %lt : tensor<*xi1>
    }) : (tensor<*xi1>) -> tensor<*xi1>
    onnx.Yield %cond, %next, %i1 : tensor<*xi1>, tensor<*xf32>, tensor<*xi64>
  }) : (none, tensor<i1>, tensor<2xf32>, tensor<i64>) -> (tensor<2xf32>, tensor<i64>)
  return %r#0 : tensor<2xf32>
}
