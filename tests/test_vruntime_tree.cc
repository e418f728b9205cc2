// 6.6's vruntime-ordered, min_deadline-augmented red-black tree
// (models/kernel/sched/vruntime_tree.h): the red-black rules and the
// augmented value under random insertions and erasures, shapes worked out
// by hand from the red-black algorithms of lib/rbtree.c, and 6.6
// __pick_eevdf()'s choice on ties.
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "models/kernel/sched/task.h"
#include "models/kernel/sched/vruntime_tree.h"

using namespace schedlab;

namespace {

// Entities with a name, vruntime and deadline (all in the test's units).
struct Entities {
  std::vector<std::unique_ptr<Task>> tasks;
  SchedEntity& add(const std::string& name, int64_t vruntime, int64_t deadline) {
    auto t = std::make_unique<Task>();
    t->comm = name;
    t->se.task = t.get();
    t->se.vruntime = vruntime;
    t->se.deadline = deadline;
    tasks.push_back(std::move(t));
    return tasks.back()->se;
  }
};

// Pre-order: name, colour (r/b), then the left and right subtrees ("." for
// none).
std::string shape(const SchedEntity* t) {
  if (!t) return ".";
  return "(" + t->task->comm + (t->tree.red ? "r " : "b ") + shape(t->tree.child[0]) + " " +
         shape(t->tree.child[1]) + ")";
}

// Eligible: vruntime at most V (the test's stand-in for entity_eligible()).
SchedEntity* pick(const VruntimeTree& tree, SchedEntity* curr, int64_t v) {
  bool saw = false;
  return tree.pick_eevdf(
      curr, [](const void* ctx, const SchedEntity& t) { return t.vruntime <= *static_cast<const int64_t*>(ctx); }, &v,
      &saw);
}

}  // namespace

// Ascending keys: each insertion lands rightmost. 1, 2, 3: a rotation left
// at 1. 4: red uncle, recolour (root stays black). 5: rotation left at 3.
// 6: recolour at 5's parent 4 (4 red, 3 and 5 black). 7: rotation left at
// 5.
TEST_CASE("insertions in vruntime order give the red-black shapes of lib/rbtree.c", "[fair][eevdf][rbtree]") {
  Entities e;
  VruntimeTree tree;
  for (int i = 1; i <= 7; ++i) tree.insert(e.add(std::to_string(i), i, 100));
  CHECK(shape(tree.root()) == "(2b (1b . .) (4r (3b . .) (6b (5r . .) (7r . .))))");
  CHECK(tree.check() == 7);
  // Equal vruntimes go right: a third 4 lands after both 4s in order.
  Entities f;
  VruntimeTree ties;
  ties.insert(f.add("a", 4, 100));
  ties.insert(f.add("b", 4, 100));
  ties.insert(f.add("c", 4, 100));
  CHECK(shape(ties.root()) == "(bb (ar . .) (cr . .))");
  CHECK(ties.leftmost()->task->comm == "a");
}

// Erasing a node with two children splices in its in-order successor,
// which takes its colour; erasing a black leaf rebalances.
TEST_CASE("erasures splice in the in-order successor and rebalance as lib/rbtree.c", "[fair][eevdf][rbtree]") {
  Entities e;
  VruntimeTree tree;
  std::vector<SchedEntity*> t;
  for (int i = 1; i <= 7; ++i) t.push_back(&e.add(std::to_string(i), i, 100));
  for (SchedEntity* p : t) tree.insert(*p);
  // (2b (1b) (4r (3b) (6b (5r) (7r)))): erase 4 -> successor 5 (leftmost of
  // 6's subtree, a red leaf: no rebalance) takes 4's place and colour.
  tree.erase(*t[3]);
  CHECK(shape(tree.root()) == "(2b (1b . .) (5r (3b . .) (6b . (7r . .))))");
  // Erase 1, a black leaf: its sibling 5 is red (case 1: rotation left at
  // 2, 5 the root); the new sibling 3 has black (no) children (case 2): 3
  // turns red and red 2 turns black.
  tree.erase(*t[0]);
  CHECK(shape(tree.root()) == "(5b (2b . (3r . .)) (6b . (7r . .)))");
  CHECK(tree.check() == 5);
}

TEST_CASE("the tree keeps its rules and every subtree's earliest deadline through random changes",
          "[fair][eevdf][rbtree]") {
  std::mt19937_64 rng(12345);
  Entities e;
  for (int i = 0; i < 64; ++i) e.add(std::to_string(i), 0, 0);
  VruntimeTree tree;
  std::vector<SchedEntity*> in, out;
  for (auto& t : e.tasks) out.push_back(&t->se);
  for (int step = 0; step < 20000; ++step) {
    const bool insert = in.empty() || (!out.empty() && rng() % 2 == 0);
    std::vector<SchedEntity*>& from = insert ? out : in;
    const size_t i = rng() % from.size();
    SchedEntity* t = from[i];
    from[i] = from.back();
    from.pop_back();
    if (insert) {
      t->vruntime = static_cast<int64_t>(rng() % 16);  // many equal vruntimes
      t->deadline = static_cast<int64_t>(rng() % 1000);
      tree.insert(*t);
      in.push_back(t);
    } else {
      tree.erase(*t);
      out.push_back(t);
    }
    REQUIRE(tree.check() == static_cast<long>(in.size()));
  }
}

// 6.6's __pick_eevdf() on equal deadlines.
TEST_CASE("6.6's tree search keeps curr on a tie with the nodes it visits, not with a left subtree",
          "[fair][eevdf][rbtree]") {
  Entities e;
  SchedEntity& curr = e.add("curr", 15, 10);
  {
    // Root Y (v=20, d=10) with left X (v=10, d=30): the search visits Y,
    // whose deadline ties curr's -> curr.
    VruntimeTree tree;
    tree.insert(e.add("Y", 20, 10));
    tree.insert(e.add("X", 10, 30));
    CHECK(pick(tree, &curr, 20)->task->comm == "curr");
    CHECK(pick(tree, nullptr, 20)->task->comm == "Y");
  }
  {
    // Root Y (v=20, d=20) with left X (v=10, d=10): X's subtree is
    // eligible as a whole and its min_deadline ties curr's -> X.
    VruntimeTree tree;
    tree.insert(e.add("Y", 20, 20));
    tree.insert(e.add("X", 10, 10));
    CHECK(pick(tree, &curr, 20)->task->comm == "X");
    // Y not eligible: the search goes left and visits X itself, a node on
    // its path, whose tie keeps curr (eligible at V=16).
    CHECK(pick(tree, &curr, 16)->task->comm == "curr");
    // Nothing queued is eligible: curr (eligible itself), or nothing.
    SchedEntity& early = e.add("early curr", 4, 40);
    CHECK(pick(tree, &early, 5)->task->comm == "early curr");
    CHECK(pick(tree, nullptr, 5) == nullptr);
  }
  {
    // Two queued entities with one deadline, root A (v=1) and right B
    // (v=2): the root is found first -> A.
    VruntimeTree tree;
    tree.insert(e.add("A", 1, 10));
    tree.insert(e.add("B", 2, 10));
    CHECK(pick(tree, nullptr, 5)->task->comm == "A");
  }
}
