//===- SimRuntimeTest.cpp - The SIMT simulator behind the cuda-sim target ---===//
#include "kiln/runtime/SimRuntime.h"

#include "kiln/runtime/Half.h"

#include <catch2/catch.hpp>

#include <cstring>
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
  CHECK(lanes.message() == "k1_s0: block (0, 0, 0): deadlock: threads wait at a barrier, "
                           "shuffle or mma.sync that not all of their block or warp reach");
  Status undeclared = simLaunch("k2_s0", {1, 1, 1}, {32, 1, 1}, false, [&] {
    kiln_sim_barrier();
  });
  CHECK(undeclared.message() == "k2_s0: block (0, 0, 0): a barrier or shuffle in a kernel "
                                "that was compiled without any");
  CHECK(simLaunch("k3_s0", {1, 1, 1}, {2048, 1, 1}, false, [] {}).message() ==
        "k3_s0: invalid launch geometry");
}

namespace {
/// Small integers and halves, exact in f16 and bf16 and in every f32 sum here.
float aAt(int m, int k) { return static_cast<float>((m * 3 + k * 5) % 7) - 3.0f; }
float bAt(int k, int n) { return static_cast<float>((k * 2 + n * 3) % 5) * 0.5f - 1.0f; }
float cAt(int m, int n) { return static_cast<float>(m - n); }

uint32_t bits16(float v, bool bf16) {
  if (bf16) {
    uint32_t w;
    std::memcpy(&w, &v, sizeof w);
    return w >> 16; // exact: these values have 8 significant bits at most
  }
  uint16_t h;
  narrowToHalves(&v, &h, 1);
  return h;
}

uint32_t pack(float lo, float hi, bool bf16) { return bits16(lo, bf16) | bits16(hi, bf16) << 16; }

/// One warp's m16n8k16 product with each lane's fragments taken from the PTX ISA's
/// table (mma.m16n8k16, .f16/.bf16 A, B and .f32 C/D), written out here independently of
/// the simulator: `swap` exchanges A's registers 1 and 2 (rows +8 and columns +8), a
/// plausible lane-mapping bug.
std::vector<float> warpProduct(bool bf16, bool swap, Status &status) {
  std::vector<float> d(16 * 8, 0.0f);
  status = simLaunch("mma", {1, 1, 1}, {32, 1, 1}, true, [&] {
    int lane = static_cast<int>(kiln_sim_thread_id(0));
    int group = lane >> 2, tig = lane % 4;
    uint32_t a[4];
    for (int i = 0; i < 8; i += 2) {
      // a_i: row groupID for a0, a1, a4, a5, else groupID + 8; column
      // threadID_in_group * 2 + (i & 1), + 8 for i >= 4.
      int row = (i < 2 || (i >= 4 && i < 6)) ? group : group + 8;
      int col = tig * 2 + (i >= 4 ? 8 : 0);
      a[i / 2] = pack(aAt(row, col), aAt(row, col + 1), bf16);
    }
    if (swap)
      std::swap(a[1], a[2]);
    // b_i: row threadID_in_group * 2 + (i & 1), + 8 for i >= 2; column groupID.
    uint32_t b0 = pack(bAt(tig * 2, group), bAt(tig * 2 + 1, group), bf16);
    uint32_t b1 = pack(bAt(tig * 2 + 8, group), bAt(tig * 2 + 9, group), bf16);
    // c_i: row groupID for c0, c1, else groupID + 8; column threadID_in_group * 2 + (i & 1).
    float c[4];
    for (int i = 0; i < 4; ++i)
      c[i] = cAt(i < 2 ? group : group + 8, tig * 2 + (i & 1));
    kiln_sim_mma_sync(bf16 ? 1 : 0, static_cast<int32_t>(a[0]), static_cast<int32_t>(a[1]),
                          static_cast<int32_t>(a[2]), static_cast<int32_t>(a[3]),
                          static_cast<int32_t>(b0), static_cast<int32_t>(b1), c[0], c[1], c[2],
                          c[3]);
    for (int i = 0; i < 4; ++i)
      d[(i < 2 ? group : group + 8) * 8 + tig * 2 + (i & 1)] = kiln_sim_mma_result(i);
  });
  return d;
}
} // namespace

TEST_CASE("sim: mma.sync m16n8k16 by the PTX fragment layout, f16 and bf16", "[runtime][sim]") {
  for (bool bf16 : {false, true}) {
    Status status;
    std::vector<float> d = warpProduct(bf16, /*swap=*/false, status);
    REQUIRE(status);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        float expected = cAt(m, n);
        for (int k = 0; k < 16; ++k)
          expected += aAt(m, k) * bAt(k, n);
        CHECK(d[m * 8 + n] == expected);
      }
    // A fragment register in the wrong place changes the product.
    std::vector<float> wrong = warpProduct(bf16, /*swap=*/true, status);
    REQUIRE(status);
    CHECK(wrong != d);
  }
}

TEST_CASE("sim: mma.sync m16n8k8 .tf32 by the PTX fragment layout", "[runtime][sim]") {
  // TF32 operands are f32 whose low 13 bits the tensor cores ignore: a value with
  // them set reads as its truncation.
  auto a = [](int m, int k) { return aAt(m, k) + (m == 3 && k == 5 ? 1.0f / 65536 : 0.0f); };
  auto bitsOf = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return static_cast<int32_t>(u);
  };
  for (bool swap : {false, true}) {
    std::vector<float> d(16 * 8, 0.0f);
    Status status = simLaunch("tf32", {1, 1, 1}, {32, 1, 1}, true, [&] {
      int lane = static_cast<int>(kiln_sim_thread_id(0));
      int group = lane >> 2, tig = lane % 4;
      // a_i: row groupID for a0, a2, else groupID + 8; column threadID_in_group, + 4
      // for a2, a3. b_i: row threadID_in_group, + 4 for b1; column groupID.
      int32_t ar[4] = {bitsOf(a(group, tig)), bitsOf(a(group + 8, tig)),
                       bitsOf(a(group, tig + 4)), bitsOf(a(group + 8, tig + 4))};
      if (swap)
        std::swap(ar[1], ar[2]);
      float c[4];
      for (int i = 0; i < 4; ++i)
        c[i] = cAt(i < 2 ? group : group + 8, tig * 2 + (i & 1));
      kiln_sim_mma_sync(2, ar[0], ar[1], ar[2], ar[3], bitsOf(bAt(tig, group)),
                        bitsOf(bAt(tig + 4, group)), c[0], c[1], c[2], c[3]);
      for (int i = 0; i < 4; ++i)
        d[(i < 2 ? group : group + 8) * 8 + tig * 2 + (i & 1)] = kiln_sim_mma_result(i);
    });
    REQUIRE(status);
    bool same = true;
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        float expected = cAt(m, n);
        for (int k = 0; k < 8; ++k)
          expected += aAt(m, k) * bAt(k, n); // a(3, 5)'s extra 2^-16 truncated away
        same &= d[m * 8 + n] == expected;
      }
    CHECK(same == !swap);
  }
}

TEST_CASE("sim: mma.sync needs the whole warp", "[runtime][sim]") {
  Status partial = simLaunch("k0_s0", {1, 1, 1}, {32, 1, 1}, true, [&] {
    if (kiln_sim_thread_id(0) < 16)
      kiln_sim_mma_sync(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  });
  CHECK(partial.message() == "k0_s0: block (0, 0, 0): deadlock: threads wait at a barrier, "
                             "shuffle or mma.sync that not all of their block or warp reach");
  Status mixed = simLaunch("k1_s0", {1, 1, 1}, {32, 1, 1}, true, [&] {
    kiln_sim_mma_sync(kiln_sim_thread_id(0) % 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  });
  CHECK(mixed.message() ==
        "k1_s0: block (0, 0, 0): the lanes of a warp run mma.sync on different types");
}
