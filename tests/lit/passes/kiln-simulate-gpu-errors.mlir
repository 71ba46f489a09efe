// RUN: kiln-opt --kiln-simulate-gpu --split-input-file --verify-diagnostics %s
// What the SIMT simulator cannot take is an error at the op, not a wrong simulation.

module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    gpu.func @k0_s0(%x: memref<32xf64>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %v = memref.load %x[%c0] : memref<32xf64>
      // expected-error @+1 {{only 32-bit shuffles are simulated}}
      %r, %ok = gpu.shuffle xor %v, %one, %w : f64
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    gpu.func @k0_s0(%x: memref<32xindex>) kernel {
      // expected-error @+1 {{the simulator does not take gpu.lane_id}}
      %l = gpu.lane_id
      %c0 = arith.constant 0 : index
      memref.store %l, %x[%c0] : memref<32xindex>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    // expected-error @+1 {{private attributions are not simulated}}
    gpu.func @k0_s0(%x: memref<4xf32>) private(%p: memref<4xf32, #gpu.address_space<private>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    gpu.func @k0_s0(%x: memref<4xf32>) workgroup(%s: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      // expected-error @+1 {{shared memory used by an op the simulator does not take}}
      %v = memref.subview %s[0] [4] [1] : memref<8xf32, #gpu.address_space<workgroup>> to memref<4xf32, strided<[1]>, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// A stage that meets at a barrier while its launch says it does not would run its
// threads one after another: an error, not a wrong answer.
module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    gpu.func @k0_s0(%x: memref<4xf32>) kernel {
      gpu.barrier
      gpu.return
    }
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %x = kiln.slice offset 0 size 16 : memref<4xf32>
    // expected-error @+1 {{stage "k0_s0" synchronizes but its #kiln.gpu_stage says sync = false}}
    kiln.launch @k0(%x) stream 0 {num_inputs = 1 : i64, gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [1, 1, 1], block = [4, 1, 1], sync = false>]} : memref<4xf32>
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    gpu.func @k0_s0(%a: vector<2x2xf16>, %b: vector<1x2xf16>, %c: vector<2x2xf32>) kernel {
      // expected-error @+1 {{the simulator takes mma.sync m16n8k16 with f16 or bf16 multiplicands, or m16n8k8 with tf32, and f32 accumulators only}}
      %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 8]}
          : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.return
    }
  }
}
