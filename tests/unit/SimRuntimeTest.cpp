//===- SimRuntimeTest.cpp - The SIMT simulator behind the cuda-sim target ---===//
#include "kiln/runtime/SimRuntime.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace kiln::rt;

TEST_CASE("sim: every thread of every block runs once with its ids", "[runtime][sim]") {
  std::vector<int> seen(2 * 3 * 64, 0);
  Status s = simLaunch("ids", {2, 3, 1}, {32, 2, 1}, /*synchronizes=*/false, [&] {
    int64_t block = kiln_sim_block_id(1) * kiln_sim_grid_dim(0) + kiln_sim_block_id(0);
    int64_t thread = kiln_sim_thread_id(1) * kiln_sim_block_dim(0) + kiln_sim_thread_id(0);
    ++seen[block * 64 + thread];
  });
  REQUIRE(s);
  for (int count : seen)
    CHECK(count == 1);
}

TEST_CASE("sim: a barrier orders shared writes before reads", "[runtime][sim]") {
  // Each thread writes its slot, waits, then reads its neighbour's: wrong without
  // the barrier, since threads run one after the other up to it.
  std::vector<int> shared(64), out(64);
  Status s = simLaunch("barrier", {1, 1, 1}, {64, 1, 1}, true, [&] {
    int64_t t = kiln_sim_thread_id(0);
    shared[t] = static_cast<int>(t) * 10;
    kiln_sim_barrier();
    out[t] = shared[(t + 1) % 64];
  });
  REQUIRE(s);
  for (int t = 0; t < 64; ++t)
    CHECK(out[t] == ((t + 1) % 64) * 10);
}

TEST_CASE("sim: shuffles exchange within a warp, per gpu.shuffle's modes", "[runtime][sim]") {
  std::vector<int32_t> x(64), down(64), valid(64), idx(64);
  Status s = simLaunch("shuffle", {1, 1, 1}, {64, 1, 1}, true, [&] {
    auto t = static_cast<int32_t>(kiln_sim_thread_id(0));
    x[t] = kiln_sim_shuffle(t, 1, 32, /*xor=*/0);
    down[t] = kiln_sim_shuffle(t, 4, 32, /*down=*/1);
    valid[t] = kiln_sim_shuffle_valid();
    idx[t] = kiln_sim_shuffle(t * 2, 5, 32, /*idx=*/3);
  });
  REQUIRE(s);
  for (int t = 0; t < 64; ++t) {
    int lane = t % 32, warp = t / 32 * 32;
    CHECK(x[t] == warp + (lane ^ 1));
    CHECK(down[t] == (lane + 4 < 32 ? t + 4 : t)); // out of range: own value
    CHECK(valid[t] == (lane + 4 < 32));
    CHECK(idx[t] == (warp + 5) * 2);
  }
}

TEST_CASE("sim: a partial-width shuffle needs only the warp's first lanes", "[runtime][sim]") {
  // As in a block reduction's second level: 4 lanes shuffle, the rest go on to a barrier.
  std::vector<int32_t> got(64, -1);
  Status s = simLaunch("partial", {1, 1, 1}, {64, 1, 1}, true, [&] {
    auto t = static_cast<int32_t>(kiln_sim_thread_id(0));
    if (t < 4)
      got[t] = kiln_sim_shuffle(t, 2, 4, /*xor=*/0);
    kiln_sim_barrier();
  });
  REQUIRE(s);
  CHECK(got[0] == 2);
  CHECK(got[1] == 3);
  CHECK(got[2] == 0);
  CHECK(got[3] == 1);
  CHECK(got[4] == -1);
}

TEST_CASE("sim: mapping bugs are errors, not hangs", "[runtime][sim]") {
  Status divergent = simLaunch("k0_s0", {2, 1, 1}, {64, 1, 1}, true, [&] {
    if (kiln_sim_thread_id(0) < 32)
      kiln_sim_barrier();
  });
  CHECK(divergent.message() ==
        "k0_s0: block (0, 0, 0): threads returned while others wait at a barrier");
  Status lanes = simLaunch("k1_s0", {1, 1, 1}, {32, 1, 1}, true, [&] {
    if (kiln_sim_thread_id(0) % 2)
      kiln_sim_shuffle(1, 1, 32, 0);
    else
      kiln_sim_barrier();
  });
  CHECK(lanes.message() == "k1_s0: block (0, 0, 0): deadlock: threads wait at a barrier or "
                           "shuffle that not all of their block or warp reach");
  Status undeclared = simLaunch("k2_s0", {1, 1, 1}, {32, 1, 1}, false, [&] {
    kiln_sim_barrier();
  });
  CHECK(undeclared.message() == "k2_s0: block (0, 0, 0): a barrier or shuffle in a kernel "
                                "that was compiled without any");
  CHECK(simLaunch("k3_s0", {1, 1, 1}, {2048, 1, 1}, false, [] {}).message() ==
        "k3_s0: invalid launch geometry");
}
