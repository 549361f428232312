// The C API: statuses and messages for every kind of bad argument; round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "lowbit/lowbit.h"
#include "test_util.h"

namespace {

using lowbit::test::Weights;

struct Packed {
  lowbit_packed_weights* w = nullptr;
  ~Packed() { lowbit_free(w); }
};

bool error_mentions(const char* what) { return std::string(lowbit_last_error()).find(what) != std::string::npos; }

lowbit_status pack(const Weights& w, lowbit_packed_weights** out, const char* target = nullptr) {
  return lowbit_pack_weights(w.p.n, w.p.k, w.p.bits, w.p.group_size, w.q.data(), w.scales.data(),
                             w.zeros_ptr(), w.bias_ptr(), target, out);
}

TEST(CApi, PackRunSaveLoad) {
  const Weights w = lowbit::test::random_weights({11, 64, 4, 32, true, true}, 1);
  Packed p;
  ASSERT_EQ(pack(w, &p.w), LOWBIT_OK) << lowbit_last_error();
  lowbit::test::Activations x = lowbit::test::random_activations(2, 64, 2);
  std::vector<float> y(22);
  ASSERT_EQ(lowbit_linear(p.w, 2, x.x, y.data(), nullptr), LOWBIT_OK);
  EXPECT_TRUE(lowbit::test::bits_equal(y.data(), lowbit::test::reference(w, 2, x.x).data(), 22));
  lowbit_linear_options o = {1, -0.1f, 0.1f, 2};
  ASSERT_EQ(lowbit_linear(p.w, 2, x.x, y.data(), &o), LOWBIT_OK);
  EXPECT_TRUE(lowbit::test::bits_equal(y.data(), lowbit::test::reference(w, 2, x.x, {true, -0.1f, 0.1f}).data(), 22));

  const lowbit::test::TempDir tmp("lowbit_c_api");
  const std::string path = tmp.path() + "/c_api.bin";
  ASSERT_EQ(lowbit_save(p.w, path.c_str()), LOWBIT_OK);
  Packed q;
  ASSERT_EQ(lowbit_load(path.c_str(), &q.w), LOWBIT_OK);
  std::vector<float> y2(22);
  ASSERT_EQ(lowbit_linear(q.w, 2, x.x, y2.data(), &o), LOWBIT_OK);
  EXPECT_TRUE(lowbit::test::bits_equal(y.data(), y2.data(), 22));
}

TEST(CApi, BadPackArgumentsNameTheValue) {
  Weights w = lowbit::test::random_weights({4, 64, 4, 32, false, false}, 3);
  lowbit_packed_weights* out = reinterpret_cast<lowbit_packed_weights*>(0x1);
  struct Case {
    int n, k, bits, group;
    const char* mention;
  } cases[] = {
      {4, 64, 0, 32, "bits"}, {4, 64, 9, 32, "bits"}, {4, 64, 4, 24, "group_size"},
      {4, 48, 4, 32, "does not divide"}, {0, 64, 4, 32, "n must"}, {4, 0, 4, 32, "k must"},
      {-3, 64, 4, 32, "n must"}, {65536, 65536, 4, 32, "exceeds 2^31"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(lowbit_pack_weights(c.n, c.k, c.bits, c.group, w.q.data(), w.scales.data(), nullptr,
                                  nullptr, nullptr, &out),
              LOWBIT_INVALID_ARGUMENT)
        << c.mention;
    EXPECT_TRUE(error_mentions(c.mention)) << c.mention << ": " << lowbit_last_error();
    EXPECT_EQ(out, nullptr);
  }
  EXPECT_EQ(lowbit_pack_weights(4, 64, 4, 32, nullptr, w.scales.data(), nullptr, nullptr, nullptr, &out),
            LOWBIT_INVALID_ARGUMENT);
  EXPECT_TRUE(error_mentions("qvals"));
  EXPECT_EQ(lowbit_pack_weights(4, 64, 4, 32, w.q.data(), nullptr, nullptr, nullptr, nullptr, &out),
            LOWBIT_INVALID_ARGUMENT);
  EXPECT_TRUE(error_mentions("scales"));
  EXPECT_EQ(pack(w, nullptr), LOWBIT_INVALID_ARGUMENT);
  w.q[5] = -9;
  EXPECT_EQ(pack(w, &out), LOWBIT_INVALID_ARGUMENT);
  EXPECT_TRUE(error_mentions("qvals[5]")) << lowbit_last_error();
  EXPECT_TRUE(error_mentions("-9")) << lowbit_last_error();
}

TEST(CApi, BadLinearArguments) {
  const Weights w = lowbit::test::random_weights({4, 32, 4, 16, false, false}, 4);
  Packed p;
  ASSERT_EQ(pack(w, &p.w), LOWBIT_OK);
  std::vector<float> x(64, 1.0f), y(8);
  EXPECT_EQ(lowbit_linear(p.w, 0, x.data(), y.data(), nullptr), LOWBIT_INVALID_ARGUMENT);
  EXPECT_TRUE(error_mentions("m must"));
  EXPECT_EQ(lowbit_linear(p.w, -1, x.data(), y.data(), nullptr), LOWBIT_INVALID_ARGUMENT);
  EXPECT_EQ(lowbit_linear(nullptr, 1, x.data(), y.data(), nullptr), LOWBIT_INVALID_ARGUMENT);
  EXPECT_EQ(lowbit_linear(p.w, 1, nullptr, y.data(), nullptr), LOWBIT_INVALID_ARGUMENT);
  EXPECT_TRUE(error_mentions("x is NULL"));
  EXPECT_EQ(lowbit_linear(p.w, 1, x.data(), nullptr, nullptr), LOWBIT_INVALID_ARGUMENT);
  lowbit_linear_options o = {1, 1.0f, -1.0f, 1};
  EXPECT_EQ(lowbit_linear(p.w, 1, x.data(), y.data(), &o), LOWBIT_INVALID_ARGUMENT);
  EXPECT_TRUE(error_mentions("clamp_min"));
  o = {1, NAN, 1.0f, 1};
  EXPECT_EQ(lowbit_linear(p.w, 1, x.data(), y.data(), &o), LOWBIT_INVALID_ARGUMENT);
  o = {0, 0, 0, -5};  // <= 0: all cores
  EXPECT_EQ(lowbit_linear(p.w, 2, x.data(), y.data(), &o), LOWBIT_OK);
  EXPECT_STREQ(lowbit_last_error(), "");
}

TEST(CApi, CorruptBuffersAndFiles) {
  const Weights w = lowbit::test::random_weights({4, 32, 4, 16, false, true}, 5);
  Packed p;
  ASSERT_EQ(pack(w, &p.w), LOWBIT_OK);
  lowbit_packed_weights* out = nullptr;
  const char junk[200] = "not weights";
  EXPECT_EQ(lowbit_from_buffer(junk, sizeof junk, &out), LOWBIT_CORRUPT_DATA);
  EXPECT_TRUE(error_mentions("magic"));
  EXPECT_EQ(lowbit_from_buffer(junk, 3, &out), LOWBIT_CORRUPT_DATA);
  EXPECT_TRUE(error_mentions("truncated"));
  EXPECT_EQ(lowbit_from_buffer(nullptr, 10, &out), LOWBIT_INVALID_ARGUMENT);
  EXPECT_EQ(lowbit_load("/nonexistent/file.bin", &out), LOWBIT_IO_ERROR);
  EXPECT_TRUE(error_mentions("/nonexistent/file.bin"));
  EXPECT_EQ(lowbit_load(nullptr, &out), LOWBIT_INVALID_ARGUMENT);
  EXPECT_EQ(lowbit_save(p.w, nullptr), LOWBIT_INVALID_ARGUMENT);
  EXPECT_EQ(lowbit_save(nullptr, "/tmp/x"), LOWBIT_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  lowbit_free(nullptr);  // allowed
}

TEST(CApi, ErrorsAreThreadLocal) {
  lowbit_packed_weights* out = nullptr;
  EXPECT_EQ(lowbit_load("/nonexistent/a", &out), LOWBIT_IO_ERROR);
  std::string other;
  std::thread t([&] { other = lowbit_last_error(); });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_TRUE(error_mentions("/nonexistent/a"));
}

}  // namespace
