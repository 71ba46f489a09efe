// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The dialect's ops print and parse back; optional inputs are onnx.NoValue.

// CHECK-LABEL: func.func @conv_relu
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: %[[NONE:.*]] = onnx.NoValue
  %none = onnx.NoValue
  // auto_pad has the same default in every Conv version: the dialect fills it in.
  // CHECK: %[[C:.*]] = "onnx.Conv"(%{{.*}}, %{{.*}}, %[[NONE]]) <{auto_pad = "NOTSET", group = 1 : i64}>
  %0 = "onnx.Conv"(%x, %w, %none) {group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  // CHECK: "onnx.Relu"(%[[C]])
  %1 = "onnx.Relu"(%0) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}

// Accessors fall back to the schema's defaults when an attribute is absent.
// CHECK-LABEL: func.func @if_region
func.func @if_region(%c: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: "onnx.If"
  %0 = "onnx.If"(%c) ({
    // CHECK: onnx.Yield %{{.*}} : tensor<3xf32>
    onnx.Yield %x : tensor<3xf32>
  }, {
    %n = "onnx.Neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %n : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// The attributes later phases read: a launch's GPU stages, an interface's element type.
// CHECK-LABEL: kiln.plan @typed
// CHECK: kiln.input 0 "x" {element_type = ui8} : memref<4xi8>
// CHECK: kiln.record event 0 stream 0
// CHECK: kiln.wait event 0 stream 1
// CHECK: kiln.launch @k0(%{{.*}}) scratch(%{{.*}} : memref<256xi8>) stream 1 {flops = 8 : i64, gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [1, 1, 1], block = [32, 1, 1], sync = false>], num_inputs = 1 : i64}
kiln.plan @typed attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64, lower_bound_bytes = 0 : i64, naive_bytes = 0 : i64} {
  %x = kiln.input 0 "x" {element_type = ui8} : memref<4xi8>
  %s = kiln.slice offset 0 size 256 : memref<256xi8>
  kiln.record event 0 stream 0
  kiln.wait event 0 stream 1
  kiln.launch @k0(%x) scratch(%s : memref<256xi8>) stream 1 {num_inputs = 1 : i64, flops = 8 : i64, gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [1, 1, 1], block = [32, 1, 1], sync = false>]} : memref<4xi8>
}

// A branch of an If decided at run time: guarded launches and copies, and the
// tensor-level kiln.if over two branch functions.
// CHECK-LABEL: kiln.plan @guarded
// CHECK: kiln.launch @k0(%{{.*}}) if(%[[G:.*]] : memref<i1>) [true] stream 0 {num_inputs = 1 : i64}
// CHECK: kiln.copy %{{.*}} to %{{.*}} if(%[[G]] : memref<i1>) [false] stream 0
kiln.plan @guarded attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %b = kiln.slice offset 16 size 16 : memref<4xf32>
  %g = kiln.slice offset 32 size 1 : memref<i1>
  kiln.launch @k0(%a) if(%g : memref<i1>) [true] stream 0 {num_inputs = 1 : i64} : memref<4xf32>
  kiln.copy %a to %b if(%g : memref<i1>) [false] stream 0 : memref<4xf32>, memref<4xf32>
}

// CHECK-LABEL: func.func @branch
// CHECK: kiln.if %{{.*}} then @then_branch else @else_branch(%{{.*}}) : tensor<i1>, (tensor<4xf32>) -> tensor<4xf32>
func.func @branch(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.if %c then @then_branch else @else_branch(%x) : tensor<i1>, (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @then_branch(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @else_branch(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
