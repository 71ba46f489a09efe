// RUN: kiln-opt %s -split-input-file --kiln-assign-streams="max-streams=2 device=host host-cores=2" --kiln-plan-memory --kiln-verify-plan | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -split-input-file --kiln-assign-streams="max-streams=1 device=host host-cores=2" | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s -split-input-file --kiln-assign-streams="max-streams=4 device=h200" --kiln-plan-memory --kiln-verify-plan | FileCheck %s --check-prefix=GPU

// A diamond: a and b (independent, each with the work of one core of the pool)
// run on two streams; c needs both and
// waits for b's stream once; d needs b and c, and c's wait already ordered b
// before it: no second wait (the transitive reduction). b's stream waits for the
// run's start; c's wait joins it back into stream 0.
// TWO-LABEL: kiln.plan @diamond
// TWO-SAME: estimated_ns = [[EST:[0-9]+]] : i64
// TWO-SAME: sequential_ns = [[SEQ:[0-9]+]] : i64
// TWO: kiln.record event 0 stream 0
// TWO-NEXT: kiln.launch @a({{.*}}) stream 0
// TWO-NEXT: kiln.wait event 0 stream 1
// TWO-NEXT: kiln.launch @b({{.*}}) stream 1
// TWO-NEXT: kiln.record event 1 stream 1
// TWO-NEXT: kiln.wait event 1 stream 0
// TWO-NEXT: kiln.launch @c({{.*}}) stream 0
// TWO-NEXT: kiln.launch @d({{.*}}) stream 0
// TWO-NEXT: {{^ *}$}}
// One stream: plan order, no events.
// ONE-LABEL: kiln.plan @diamond
// ONE-NOT: kiln.record
// ONE: kiln.launch @a({{.*}}) stream 0
// ONE-NEXT: kiln.launch @b({{.*}}) stream 0
// ONE-NEXT: kiln.launch @c({{.*}}) stream 0
// ONE-NEXT: kiln.launch @d({{.*}}) stream 0
// ONE-NOT: kiln.wait
kiln.plan @diamond attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<1024xf32>
  %a = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %b = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %c = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %y = kiln.output 0 "y" : memref<1024xf32>
  kiln.launch @a(%x, %a) stream -1 {num_inputs = 1 : i64, flops = 100000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @b(%x, %b) stream -1 {num_inputs = 1 : i64, flops = 100000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @c(%a, %b, %c) stream -1 {num_inputs = 2 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>
  kiln.launch @d(%b, %c, %y) stream -1 {num_inputs = 2 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>
}

// -----

// Host kernels with the work of every core (a core per 65,536 operations: the
// thread pool splits them) gain nothing from a second stream: one stream.
// TWO-LABEL: kiln.plan @wide_host
// TWO-NOT: kiln.record
// TWO: kiln.launch @a({{.*}}) stream 0
// TWO-NEXT: kiln.launch @b({{.*}}) stream 0
// TWO-NEXT: kiln.launch @c({{.*}}) stream 0
// TWO-NOT: kiln.wait
kiln.plan @wide_host attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<1024xf32>
  %a = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %b = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %y = kiln.output 0 "y" : memref<1024xf32>
  kiln.launch @a(%x, %a) stream -1 {num_inputs = 1 : i64, flops = 100000000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @b(%x, %b) stream -1 {num_inputs = 1 : i64, flops = 100000000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @c(%a, %b, %y) stream -1 {num_inputs = 2 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>
}

// -----

// On the GPU the cost model weighs parallelism: three branches of 8 blocks each
// fill a fraction of 132 SMs and run side by side; three branches of 4096 blocks
// each fill the GPU alone and gain nothing from streams, so they stay on one.
// GPU-LABEL: kiln.plan @narrow
// GPU-DAG: kiln.launch @n0({{.*}}) stream 0
// GPU-DAG: kiln.launch @n1({{.*}}) stream 1
// GPU-DAG: kiln.launch @n2({{.*}}) stream 2
// GPU: kiln.wait event {{[0-9]+}} stream 0
// GPU: kiln.launch @join({{.*}}) stream 0
kiln.plan @narrow attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<1024xf32>
  %a = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %b = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %c = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %y = kiln.output 0 "y" : memref<1024xf32>
  kiln.launch @n0(%x, %a) stream -1 {num_inputs = 1 : i64, flops = 1000000000 : i64, gpu_stages = [#kiln.gpu_stage<"n0_s0", grid = [8, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @n1(%x, %b) stream -1 {num_inputs = 1 : i64, flops = 1000000000 : i64, gpu_stages = [#kiln.gpu_stage<"n1_s0", grid = [8, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @n2(%x, %c) stream -1 {num_inputs = 1 : i64, flops = 1000000000 : i64, gpu_stages = [#kiln.gpu_stage<"n2_s0", grid = [8, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @join(%a, %b, %c, %y) stream -1 {num_inputs = 3 : i64, flops = 1000 : i64, gpu_stages = [#kiln.gpu_stage<"join_s0", grid = [4, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>
}

// -----

// GPU-LABEL: kiln.plan @wide
// GPU-NOT: kiln.record
// GPU-NOT: stream 1
// GPU: kiln.launch @join
kiln.plan @wide attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<1024xf32>
  %a = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %b = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %c = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %y = kiln.output 0 "y" : memref<1024xf32>
  kiln.launch @w0(%x, %a) stream -1 {num_inputs = 1 : i64, flops = 1000000000 : i64, gpu_stages = [#kiln.gpu_stage<"w0_s0", grid = [4096, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @w1(%x, %b) stream -1 {num_inputs = 1 : i64, flops = 1000000000 : i64, gpu_stages = [#kiln.gpu_stage<"w1_s0", grid = [4096, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @w2(%x, %c) stream -1 {num_inputs = 1 : i64, flops = 1000000000 : i64, gpu_stages = [#kiln.gpu_stage<"w2_s0", grid = [4096, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @join(%a, %b, %c, %y) stream -1 {num_inputs = 3 : i64, flops = 1000 : i64, gpu_stages = [#kiln.gpu_stage<"join_s0", grid = [4, 1, 1], block = [256, 1, 1], sync = false>]} : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>
}
