// InlineVec: elements inline up to N, on the heap past it; every element made is destroyed
// once (a counting element type; ASan sees the memory).
#include "core/inline_vec.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace kiln {
namespace {

int g_live = 0;
struct Counted {
  std::string value;  // a heap string: a double destroy or a lost move shows under ASan
  explicit Counted(int v) : value(std::string(40, 'x') + std::to_string(v)) { ++g_live; }
  Counted(const Counted& o) : value(o.value) { ++g_live; }
  Counted(Counted&& o) noexcept : value(std::move(o.value)) { ++g_live; }
  Counted& operator=(const Counted&) = default;
  Counted& operator=(Counted&&) = default;
  ~Counted() { --g_live; }
  int number() const { return std::stoi(value.substr(40)); }
};

std::vector<int> numbers(const InlineVec<Counted, 2>& v) {
  std::vector<int> out;
  for (const Counted& c : v) out.push_back(c.number());
  return out;
}

TEST(InlineVec, KeepsOrderInlineAndOnTheHeap) {
  {
    InlineVec<Counted, 2> v;
    EXPECT_TRUE(v.empty());
    for (int i = 0; i < 7; ++i) {
      v.push_back(Counted(i));
      EXPECT_EQ(v.size(), static_cast<size_t>(i + 1));
      EXPECT_EQ(v[static_cast<size_t>(i)].number(), i);
    }
    EXPECT_EQ(numbers(v), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(g_live, 7);
    v.clear();
    EXPECT_TRUE(v.empty());
    EXPECT_EQ(g_live, 0);
    v.push_back(Counted(9));
    EXPECT_EQ(numbers(v), (std::vector<int>{9}));
  }
  EXPECT_EQ(g_live, 0);
}

TEST(InlineVec, CopiesAndMovesAtEverySize) {
  for (int n = 0; n <= 5; ++n) {
    {
      std::vector<int> want;
      InlineVec<Counted, 2> a;
      for (int i = 0; i < n; ++i) {
        a.push_back(Counted(i));
        want.push_back(i);
      }
      InlineVec<Counted, 2> b(a);
      EXPECT_EQ(numbers(b), want);
      InlineVec<Counted, 2> c(std::move(a));
      EXPECT_EQ(numbers(c), want);
      EXPECT_TRUE(a.empty());  // NOLINT: a moved-from InlineVec is empty
      InlineVec<Counted, 2> d;
      d.push_back(Counted(100));
      d = b;
      EXPECT_EQ(numbers(d), want);
      InlineVec<Counted, 2> e;
      for (int i = 0; i < 4; ++i) e.push_back(Counted(200 + i));
      e = std::move(c);
      EXPECT_EQ(numbers(e), want);
      d = d;  // NOLINT: self-assignment keeps the elements
      EXPECT_EQ(numbers(d), want);
      EXPECT_EQ(g_live, 3 * n);
    }
    EXPECT_EQ(g_live, 0) << n;
  }
}

TEST(InlineVec, TakesAStdVector) {
  for (int n = 0; n <= 4; ++n) {
    {
      std::vector<Counted> source;
      std::vector<int> want;
      for (int i = 0; i < n; ++i) {
        source.emplace_back(i);
        want.push_back(i);
      }
      InlineVec<Counted, 2> copied(source);
      EXPECT_EQ(numbers(copied), want);
      InlineVec<Counted, 2> moved(std::move(source));
      EXPECT_EQ(numbers(moved), want);
      InlineVec<Counted, 2> listed{Counted(1), Counted(2), Counted(3)};
      EXPECT_EQ(numbers(listed), (std::vector<int>{1, 2, 3}));
    }
    EXPECT_EQ(g_live, 0) << n;
  }
}

// A copy that throws part way leaves nothing alive: a constructor that throws is never
// destroyed, so the vector must drop the elements it had made itself.
int g_copies_left = 0;
struct ThrowsOnCopy : Counted {
  explicit ThrowsOnCopy(int v) : Counted(v) {}
  ThrowsOnCopy(const ThrowsOnCopy& o) : Counted(check(o)) {}
  ThrowsOnCopy(ThrowsOnCopy&&) noexcept = default;
  static const Counted& check(const Counted& o) {
    if (g_copies_left-- == 0) throw std::runtime_error("copy refused");
    return o;
  }
};

TEST(InlineVec, ACopyThatThrowsLeavesNothingBehind) {
  using Vec = InlineVec<ThrowsOnCopy, 2>;
  for (int n = 1; n <= 5; ++n)
    for (int allowed = 0; allowed < n; ++allowed) {
      {
        g_copies_left = 1000;  // setting up copies freely
        Vec a;
        for (int i = 0; i < n; ++i) a.push_back(ThrowsOnCopy(i));
        std::vector<ThrowsOnCopy> v(a.begin(), a.end());
        g_copies_left = allowed;
        EXPECT_THROW((void)Vec(a), std::runtime_error);
        g_copies_left = allowed;
        EXPECT_THROW((void)Vec(v), std::runtime_error);
        EXPECT_EQ(g_live, 2 * n) << n << " " << allowed;
      }
      EXPECT_EQ(g_live, 0);
    }
}

}  // namespace
}  // namespace kiln
