// See vruntime_tree.h: 6.6's vruntime-ordered, min_deadline-augmented
// red-black tree, with the kernel's shapes.
#include "models/kernel/sched/vruntime_tree.h"

#include "models/kernel/sched/task.h"

namespace schedlab {
namespace {

VruntimeTreeNode& node(SchedEntity* t) { return t->tree; }
const VruntimeTreeNode& node(const SchedEntity* t) { return t->tree; }
bool is_red(const SchedEntity* t) { return t && node(t).red; }

// 6.6's entity_before(): vruntime order, wrapping as the kernel's s64
// difference does.
bool entity_before(const SchedEntity& a, const SchedEntity& b) { return a.vruntime - b.vruntime < 0; }

// min_deadline_update(): the earliest deadline of the node and its
// children's subtrees (the kernel's deadline_gt() compares by s64
// difference too).
void update_min_deadline(SchedEntity* t) {
  int64_t m = t->deadline;
  for (const SchedEntity* c : node(t).child)
    if (c && m - node(c).min_deadline > 0) m = node(c).min_deadline;
  node(t).min_deadline = m;
}

}  // namespace

SchedEntity* VruntimeTree::leftmost() const {
  SchedEntity* t = root_;
  while (t && node(t).child[0]) t = node(t).child[0];
  return t;
}

void VruntimeTree::replace_child(SchedEntity* parent, SchedEntity* old_child, SchedEntity* new_child) {
  if (!parent)
    root_ = new_child;
  else
    node(parent).child[node(parent).child[0] == old_child ? 0 : 1] = new_child;
}

// A rotation at x towards `dir`: x's child on the other side takes x's
// place, and x becomes its child on side `dir`. The two nodes whose
// subtrees changed get their min_deadline again (the augment_rotate
// callback).
void VruntimeTree::rotate(SchedEntity* x, int dir) {
  SchedEntity* y = node(x).child[1 - dir];
  SchedEntity* inner = node(y).child[dir];
  node(x).child[1 - dir] = inner;
  if (inner) node(inner).parent = x;
  node(y).parent = node(x).parent;
  replace_child(node(x).parent, x, y);
  node(y).child[dir] = x;
  node(x).parent = y;
  update_min_deadline(x);
  update_min_deadline(y);
}

void VruntimeTree::insert(SchedEntity& se) {
  VruntimeTreeNode& n = node(&se);
  n = VruntimeTreeNode{};
  n.red = true;
  n.min_deadline = se.deadline;
  SchedEntity* parent = nullptr;
  SchedEntity** link = &root_;
  while (*link) {
    parent = *link;
    link = &node(parent).child[entity_before(se, *parent) ? 0 : 1];
  }
  n.parent = parent;
  *link = &se;
  // The new leaf's deadline reaches every ancestor's min_deadline
  // (augment->propagate(parent, NULL) before the rebalancing).
  for (SchedEntity* a = parent; a; a = node(a).parent) update_min_deadline(a);
  insert_fixup(&se);
}

// __rb_insert(): a red leaf under a red parent. A red uncle: recolour and
// carry the problem two levels up. A black (or no) uncle: at most two
// rotations end it -- the first turns an inner grandchild into an outer
// one.
void VruntimeTree::insert_fixup(SchedEntity* t) {
  for (;;) {
    SchedEntity* parent = node(t).parent;
    if (!parent) {
      node(t).red = false;  // the root is black
      return;
    }
    if (!node(parent).red) return;
    SchedEntity* gparent = node(parent).parent;  // a red node is never the root
    const int side = node(gparent).child[0] == parent ? 0 : 1;
    SchedEntity* uncle = node(gparent).child[1 - side];
    if (is_red(uncle)) {
      node(parent).red = false;
      node(uncle).red = false;
      node(gparent).red = true;
      t = gparent;
      continue;
    }
    if (node(parent).child[1 - side] == t) {
      rotate(parent, side);
      t = parent;
      parent = node(t).parent;
    }
    rotate(gparent, 1 - side);
    node(parent).red = false;
    node(gparent).red = true;
    return;
  }
}

// __rb_erase_augmented(): a node with at most one child is replaced by
// that child; otherwise its in-order successor (the leftmost node of its
// right subtree) takes its place and colour, the successor's right child
// taking the successor's old place. Removing a black node without a red
// child to recolour leaves one subtree a black node short: rebalanced from
// that subtree's parent.
void VruntimeTree::erase(SchedEntity& se) {
  VruntimeTreeNode& n = node(&se);
  SchedEntity* left = n.child[0];
  SchedEntity* right = n.child[1];
  SchedEntity* rebalance = nullptr;
  SchedEntity* changed_from = nullptr;  // the lowest node whose subtree lost se
  if (!left || !right) {
    SchedEntity* only = left ? left : right;
    replace_child(n.parent, &se, only);
    if (only) {
      // A lone child is a red leaf under a black node: it takes the
      // node's place and colour.
      node(only).parent = n.parent;
      node(only).red = n.red;
    } else if (!n.red) {
      rebalance = n.parent;
    }
    changed_from = n.parent;
  } else {
    SchedEntity* successor = right;
    SchedEntity* parent = right;
    SchedEntity* child2;  // the successor's right child, moving up
    if (!node(successor).child[0]) {
      child2 = node(successor).child[1];
    } else {
      do {
        parent = successor;
        successor = node(successor).child[0];
      } while (node(successor).child[0]);
      child2 = node(successor).child[1];
      node(parent).child[0] = child2;
      node(successor).child[1] = right;
      node(right).parent = successor;
    }
    node(successor).child[0] = left;
    node(left).parent = successor;
    replace_child(n.parent, &se, successor);
    const bool successor_was_red = node(successor).red;
    node(successor).parent = n.parent;
    node(successor).red = n.red;
    if (child2) {
      node(child2).parent = parent;
      node(child2).red = false;
    } else if (!successor_was_red) {
      rebalance = parent;
    }
    changed_from = parent;
  }
  for (SchedEntity* a = changed_from; a; a = node(a).parent) update_min_deadline(a);
  n = VruntimeTreeNode{};
  if (rebalance) erase_fixup(rebalance);
}

// ____rb_erase_color(): the subtree on one side of `parent` (starting
// empty, at the removed node's place) is a black node short. Case 1: a red
// sibling is rotated up so the sibling is black. Case 2: a black sibling
// with black children turns red -- done if the parent was red (it turns
// black), else the shortage moves up to the parent. Case 3: the sibling's
// near child is red, its far one black: a rotation at the sibling makes the
// far child red. Case 4: the far child is red: a rotation at the parent
// ends it, the sibling taking the parent's colour.
void VruntimeTree::erase_fixup(SchedEntity* parent) {
  SchedEntity* t = nullptr;
  for (;;) {
    // t is parent's left child unless it is its right one (t starts as the
    // empty place: the side with no child, when the other has one).
    const int side = t != node(parent).child[1] ? 0 : 1;
    SchedEntity* sibling = node(parent).child[1 - side];
    if (node(sibling).red) {  // case 1
      rotate(parent, side);
      node(sibling).red = false;
      node(parent).red = true;
      sibling = node(parent).child[1 - side];
    }
    SchedEntity* far = node(sibling).child[1 - side];
    if (!is_red(far)) {
      SchedEntity* near = node(sibling).child[side];
      if (!is_red(near)) {  // case 2
        node(sibling).red = true;
        if (node(parent).red) {
          node(parent).red = false;
          return;
        }
        t = parent;
        parent = node(t).parent;
        if (!parent) return;
        continue;
      }
      // case 3
      rotate(sibling, 1 - side);
      node(near).red = false;
      node(sibling).red = true;
      far = sibling;
      sibling = near;
    }
    // case 4
    rotate(parent, side);
    node(sibling).red = node(parent).red;
    node(parent).red = false;
    node(far).red = false;
    return;
  }
}

// With curr (if eligible) as the first choice, a heap search down the
// tree: an ineligible node sends the search left (everything to its right
// has a larger vruntime); an eligible node replaces the choice only with a
// strictly earlier deadline, and its left subtree -- eligible as a whole --
// is remembered if its min_deadline is strictly earlier than the one
// remembered so far. The walk stops where the node's subtree minimum is in
// its left subtree or at the node itself, else goes right. A remembered
// subtree whose min_deadline is not later than the choice's deadline wins:
// the first node going down it whose deadline is its subtree's minimum.
SchedEntity* VruntimeTree::pick_eevdf(SchedEntity* curr, EligibleFn eligible, const void* ctx, bool* saw_eligible) const {
  SchedEntity* best = curr;
  SchedEntity* best_left = nullptr;
  *saw_eligible = false;
  for (SchedEntity* t = root_; t;) {
    if (!eligible(ctx, *t)) {
      t = node(t).child[0];
      continue;
    }
    *saw_eligible = true;
    if (!best || best->deadline - t->deadline > 0) best = t;
    if (SchedEntity* left = node(t).child[0]) {
      if (!best_left || node(best_left).min_deadline - node(left).min_deadline > 0) best_left = left;
      if (node(left).min_deadline == node(t).min_deadline) break;
    }
    if (t->deadline == node(t).min_deadline) break;
    t = node(t).child[1];
  }
  if (!best_left || node(best_left).min_deadline - best->deadline > 0) return best;
  for (SchedEntity* t = best_left; t;) {
    if (t->deadline == node(t).min_deadline) return t;
    SchedEntity* left = node(t).child[0];
    t = left && node(left).min_deadline == node(t).min_deadline ? left : node(t).child[1];
  }
  return nullptr;
}

namespace {

// Black height of t's subtree, or -1 when a rule is broken below t.
long check_subtree(const SchedEntity* t, const SchedEntity* parent, long* count) {
  if (!t) return 1;
  const VruntimeTreeNode& n = node(t);
  if (n.parent != parent) return -1;
  if (n.red && (is_red(n.child[0]) || is_red(n.child[1]))) return -1;
  if (n.child[0] && entity_before(*t, *n.child[0])) return -1;
  if (n.child[1] && entity_before(*n.child[1], *t)) return -1;
  int64_t m = t->deadline;
  for (const SchedEntity* c : n.child)
    if (c && node(c).min_deadline - m < 0) m = node(c).min_deadline;
  if (m != n.min_deadline) return -1;
  const long l = check_subtree(n.child[0], t, count);
  const long r = check_subtree(n.child[1], t, count);
  if (l < 0 || r < 0 || l != r) return -1;
  ++*count;
  return l + (n.red ? 0 : 1);
}

}  // namespace

long VruntimeTree::check() const {
  if (root_ && node(root_).red) return -1;
  long count = 0;
  if (check_subtree(root_, nullptr, &count) < 0) return -1;
  // In-order: vruntimes never decrease (a parent-child check misses a
  // deeper violation).
  const SchedEntity* prev = nullptr;
  const SchedEntity* t = leftmost();
  while (t) {
    if (prev && entity_before(*t, *prev)) return -1;
    prev = t;
    // In-order successor.
    if (node(t).child[1]) {
      t = node(t).child[1];
      while (node(t).child[0]) t = node(t).child[0];
    } else {
      const SchedEntity* c = t;
      t = node(t).parent;
      while (t && node(t).child[1] == c) {
        c = t;
        t = node(t).parent;
      }
    }
  }
  return count;
}

}  // namespace schedlab
