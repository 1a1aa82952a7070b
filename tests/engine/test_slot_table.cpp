#include "engine/slot_table.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace vramsim {
namespace {

// Slots are handed out 0, 1, 2, ... while none is free; a value stays at its
// slot while others come and go; take() returns what was stored.
TEST(SlotTable, AValueKeepsItsSlotWhileOthersComeAndGo) {
  SlotTable<std::string> t;
  EXPECT_TRUE(t.empty());
  const auto a = t.insert("a"), b = t.insert("b"), c = t.insert("c");
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(c, 2u);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.take(b), "b");
  EXPECT_FALSE(t.holds(b));
  EXPECT_TRUE(t.holds(a));
  EXPECT_TRUE(t.holds(c));
  EXPECT_FALSE(t.holds(3)) << "never handed out";
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t[a], "a");
  EXPECT_EQ(t[c], "c");
}

// The most recently freed slot is reused first, so the table stays at its
// peak size: 3 values in, 2 out, 2 in again use slots 2 and 0 (freed 0 then
// 2), no fourth slot.
TEST(SlotTable, FreedSlotsAreReusedLastFreedFirst) {
  SlotTable<int> t;
  for (int v : {10, 11, 12}) t.insert(v);
  t.take(0);
  t.take(2);
  EXPECT_EQ(t.insert(20), 2u);
  EXPECT_EQ(t.insert(21), 0u);
  EXPECT_EQ(t.insert(22), 3u) << "none free: a new slot";
  EXPECT_EQ(t[0], 21);
  EXPECT_EQ(t[1], 11);
  EXPECT_EQ(t[2], 20);
  EXPECT_EQ(t.size(), 4u);
}

// find_if sees held values only, in slot order.
TEST(SlotTable, FindIfSkipsFreedSlots) {
  SlotTable<int> t;
  for (int v : {5, 7, 5, 9}) t.insert(v);
  EXPECT_EQ(t.find_if([](int v) { return v == 5; }), 0u);
  t.take(0);
  EXPECT_EQ(t.find_if([](int v) { return v == 5; }), 2u);
  t.take(2);
  EXPECT_FALSE(t.find_if([](int v) { return v == 5; }).has_value());
  EXPECT_EQ(t.find_if([](int v) { return v > 8; }), 3u);
}

// A taken value is destroyed in the table at once (not when its slot is
// reused): the table holds no second owner.
TEST(SlotTable, ATakenValueLeavesNothingBehind) {
  SlotTable<std::shared_ptr<int>> t;
  auto p = std::make_shared<int>(1);
  const auto s = t.insert(p);
  EXPECT_EQ(p.use_count(), 2);
  auto back = t.take(s);
  EXPECT_EQ(p.use_count(), 2) << "moved out, not copied";
  back.reset();
  EXPECT_EQ(p.use_count(), 1);
}

}  // namespace
}  // namespace vramsim
