// RUN: kiln-opt --kiln-expand-host-bf16 %s | FileCheck %s
// bf16 conversions become integer arithmetic: no __truncsfbf2 call on the host.

// CHECK-LABEL: func.func @to_bf16
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.addi
// CHECK: arith.shrui
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
func.func @to_bf16(%x: f32) -> bf16 {
  %0 = arith.truncf %x : f32 to bf16
  return %0 : bf16
}

// CHECK-LABEL: func.func @from_bf16
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
func.func @from_bf16(%x: bf16) -> f32 {
  %0 = arith.extf %x : bf16 to f32
  return %0 : f32
}

// Other widths are left to LLVM.
// CHECK-LABEL: func.func @to_f16
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @to_f16(%x: f32) -> f16 {
  %0 = arith.truncf %x : f32 to f16
  return %0 : f16
}
