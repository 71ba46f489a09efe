// RUN: kiln-opt --kiln-map-to-gpu=gpu-arch=sm_70 --verify-diagnostics %s
// RUN: not kiln-opt --kiln-cuda-codegen-pipeline=gpu-arch=sm_70 %s 2>&1 | FileCheck %s --check-prefix=PIPE
// PIPE: --gpu-arch 'sm_70' is not supported (sm_80, sm_86, sm_89, sm_90)
// An architecture outside the table (codegen/cuda/GpuArch.h) is an error naming the
// supported ones.

// expected-error @+1 {{kiln-map-to-gpu: gpu-arch 'sm_70' is not supported (sm_80, sm_86, sm_89, sm_90)}}
module {
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  }
}
