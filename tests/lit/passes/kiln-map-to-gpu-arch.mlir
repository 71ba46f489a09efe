// RUN: kiln-opt --kiln-map-to-gpu=gpu-arch=sm_70 --verify-diagnostics %s
// An architecture outside the table (codegen/cuda/GpuArch.h) is an error naming the
// supported ones.

// expected-error @+1 {{kiln-map-to-gpu: gpu-arch 'sm_70' is not supported (sm_80, sm_86, sm_89, sm_90)}}
module {
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  }
}
