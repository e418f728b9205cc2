// 6.6's EEVDF run-queue tree (kernel/sched/fair.c of 6.6.y, checked in
// 6.6.31 to 6.6.87, whose pick code is the same): the queued entities
// (curr excluded) in an augmented red-black tree ordered by vruntime
// (6.6's entity_before(); equal vruntimes go right, rb_add_augmented_cached()),
// each node keeping the earliest deadline in its subtree
// (se->min_deadline, min_deadline_update()).
//
// Why a real tree: 6.6's pick_eevdf() is a heap search down this tree, and
// where deadlines tie the entity it returns depends on the tree's shape (a
// tie with a node on the search path keeps the earlier choice; a tie inside
// a left subtree passed on the way goes to that subtree's first node of
// that deadline in pre-order: node, left, right). So the model keeps the kernel's shape: insertion and
// erasure are the red-black algorithms lib/rbtree.c implements (__rb_insert();
// __rb_erase_augmented(), which splices in the in-order successor, then
// ____rb_erase_color()), written here case by case from the algorithm.
// 6.8 sorted the tree by deadline ("sched/eevdf: Sort the rbtree by
// virtual deadline"), which makes the pick shape-independent: versions
// from 6.12 use CfsRq::timeline alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace schedlab {

struct SchedEntity;

// struct rb_node plus the augmented value, embedded in SchedEntity.
struct VruntimeTreeNode {
  SchedEntity* parent = nullptr;
  SchedEntity* child[2] = {nullptr, nullptr};  // [0] rb_left, [1] rb_right
  bool red = false;
  int64_t min_deadline = 0;  // se->min_deadline: min of the subtree's deadlines
};

class VruntimeTree {
 public:
  SchedEntity* root() const { return root_; }
  bool empty() const { return root_ == nullptr; }
  // rb_first_cached(): the smallest vruntime (the first inserted of equals).
  SchedEntity* leftmost() const;
  // __enqueue_entity(): se->min_deadline = se->deadline, then
  // rb_add_augmented_cached(..., __entity_less, &min_deadline_cb).
  void insert(SchedEntity& se);
  // __dequeue_entity(): rb_erase_augmented_cached().
  void erase(SchedEntity& se);

  // __pick_eevdf()'s search (6.6): `curr` is the first choice (null when
  // it is not queued or not eligible); `eligible` is entity_eligible() on
  // the cfs_rq. Returns the choice, null only when nothing is eligible
  // (rounding; 6.6's pick_eevdf() then takes leftmost()). Sets
  // *saw_eligible when some queued entity was eligible.
  using EligibleFn = bool (*)(const void* ctx, const SchedEntity& se);
  SchedEntity* pick_eevdf(SchedEntity* curr, EligibleFn eligible, const void* ctx, bool* saw_eligible) const;

  // For tests: checks the red-black rules (root black, no red node with a
  // red child, equal black height), the parent links, the in-order
  // vruntime order and every min_deadline. Returns the node count, or -1
  // when a rule is broken.
  long check() const;

 private:
  void rotate(SchedEntity* x, int dir);  // dir 0: left rotation (x's right child rises), 1: right
  void replace_child(SchedEntity* parent, SchedEntity* old_child, SchedEntity* new_child);
  void insert_fixup(SchedEntity* node);
  void erase_fixup(SchedEntity* parent);
  SchedEntity* root_ = nullptr;
};

}  // namespace schedlab
