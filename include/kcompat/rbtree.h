/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A red-black tree with the interface of the kernel's <linux/rbtree.h>
 * (the subset that code shared with gpusched.ko uses), for its user-space
 * builds. The kernel build uses lib/rbtree.c. Users see rb_left, rb_right,
 * rb_node and rb_leftmost as in the kernel; the parent and the colour are
 * this file's own.
 *
 * Invariants: the root and every NULL leaf are black; a red node has no
 * red child; every path from a node down to a leaf passes the same number
 * of black nodes. So the height is at most 2 log2(n + 1).
 */
#ifndef KCOMPAT_RBTREE_H
#define KCOMPAT_RBTREE_H

#include "types.h"

struct rb_node {
	struct rb_node *rb_parent_;	/* itself while off every tree */
	struct rb_node *rb_right;
	struct rb_node *rb_left;
	bool rb_red_;
};

struct rb_root {
	struct rb_node *rb_node;
};

/* A tree that keeps its leftmost (least) node at hand. */
struct rb_root_cached {
	struct rb_root rb_root;
	struct rb_node *rb_leftmost;
};

#define RB_ROOT ((struct rb_root) { NULL })
#define RB_ROOT_CACHED ((struct rb_root_cached) { { NULL }, NULL })
#define rb_entry(ptr, type, member) kcompat_container_of(ptr, type, member)
#define rb_entry_safe(ptr, type, member) \
	({ __typeof__(ptr) ____ptr = (ptr); \
	   ____ptr ? rb_entry(____ptr, type, member) : NULL; })
#define RB_EMPTY_ROOT(root) ((root)->rb_node == NULL)
#define RB_EMPTY_NODE(node) ((node)->rb_parent_ == (node))
#define RB_CLEAR_NODE(node) ((node)->rb_parent_ = (node))
#define rb_first_cached(root) ((root)->rb_leftmost)
#define rb_parent(node) ((node)->rb_parent_)

static inline void rb_link_node(struct rb_node *node, struct rb_node *parent,
				struct rb_node **link)
{
	node->rb_parent_ = parent;
	node->rb_left = NULL;
	node->rb_right = NULL;
	node->rb_red_ = true;
	*link = node;
}

static inline bool rb_is_red_(const struct rb_node *n)
{
	return n && n->rb_red_;
}

/* Put @to where @from hangs (under @from's parent, or as the root). */
static inline void rb_replace_child_(struct rb_node *from, struct rb_node *to,
				     struct rb_node *parent,
				     struct rb_root *root)
{
	if (!parent)
		root->rb_node = to;
	else if (parent->rb_left == from)
		parent->rb_left = to;
	else
		parent->rb_right = to;
}

/* @x's right child takes @x's place; @x becomes its left child. */
static inline void rb_rotate_left_(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->rb_right;

	x->rb_right = y->rb_left;
	if (y->rb_left)
		y->rb_left->rb_parent_ = x;
	y->rb_parent_ = x->rb_parent_;
	rb_replace_child_(x, y, x->rb_parent_, root);
	y->rb_left = x;
	x->rb_parent_ = y;
}

/* The mirror of rb_rotate_left_(). */
static inline void rb_rotate_right_(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->rb_left;

	x->rb_left = y->rb_right;
	if (y->rb_right)
		y->rb_right->rb_parent_ = x;
	y->rb_parent_ = x->rb_parent_;
	rb_replace_child_(x, y, x->rb_parent_, root);
	y->rb_right = x;
	x->rb_parent_ = y;
}

/* Restore the invariants after rb_link_node() hung the red @n. */
static inline void rb_insert_color(struct rb_node *n, struct rb_root *root)
{
	struct rb_node *p, *g, *u;

	while ((p = n->rb_parent_) && p->rb_red_) {
		g = p->rb_parent_;	/* a red node is never the root */
		if (p == g->rb_left) {
			u = g->rb_right;
			if (rb_is_red_(u)) {
				p->rb_red_ = false;
				u->rb_red_ = false;
				g->rb_red_ = true;
				n = g;
				continue;
			}
			if (n == p->rb_right) {
				rb_rotate_left_(p, root);
				n = p;
				p = n->rb_parent_;
			}
			p->rb_red_ = false;
			g->rb_red_ = true;
			rb_rotate_right_(g, root);
		} else {
			u = g->rb_left;
			if (rb_is_red_(u)) {
				p->rb_red_ = false;
				u->rb_red_ = false;
				g->rb_red_ = true;
				n = g;
				continue;
			}
			if (n == p->rb_left) {
				rb_rotate_right_(p, root);
				n = p;
				p = n->rb_parent_;
			}
			p->rb_red_ = false;
			g->rb_red_ = true;
			rb_rotate_left_(g, root);
		}
	}
	root->rb_node->rb_red_ = false;
}

/*
 * A black node was taken out above @x (NULL: a leaf), child of @parent:
 * the paths through @x are one black short. Borrow from the sibling.
 */
static inline void rb_erase_fixup_(struct rb_node *x, struct rb_node *parent,
				   struct rb_root *root)
{
	struct rb_node *w;

	while (x != root->rb_node && !rb_is_red_(x)) {
		if (x == parent->rb_left) {
			w = parent->rb_right;
			if (w->rb_red_) {
				w->rb_red_ = false;
				parent->rb_red_ = true;
				rb_rotate_left_(parent, root);
				w = parent->rb_right;
			}
			if (!rb_is_red_(w->rb_left) && !rb_is_red_(w->rb_right)) {
				w->rb_red_ = true;
				x = parent;
				parent = x->rb_parent_;
				continue;
			}
			if (!rb_is_red_(w->rb_right)) {
				w->rb_left->rb_red_ = false;
				w->rb_red_ = true;
				rb_rotate_right_(w, root);
				w = parent->rb_right;
			}
			w->rb_red_ = parent->rb_red_;
			parent->rb_red_ = false;
			w->rb_right->rb_red_ = false;
			rb_rotate_left_(parent, root);
		} else {
			w = parent->rb_left;
			if (w->rb_red_) {
				w->rb_red_ = false;
				parent->rb_red_ = true;
				rb_rotate_right_(parent, root);
				w = parent->rb_left;
			}
			if (!rb_is_red_(w->rb_left) && !rb_is_red_(w->rb_right)) {
				w->rb_red_ = true;
				x = parent;
				parent = x->rb_parent_;
				continue;
			}
			if (!rb_is_red_(w->rb_left)) {
				w->rb_right->rb_red_ = false;
				w->rb_red_ = true;
				rb_rotate_left_(w, root);
				w = parent->rb_left;
			}
			w->rb_red_ = parent->rb_red_;
			parent->rb_red_ = false;
			w->rb_left->rb_red_ = false;
			rb_rotate_right_(parent, root);
		}
		x = root->rb_node;
		break;
	}
	if (x)
		x->rb_red_ = false;
}

static inline void rb_erase(struct rb_node *z, struct rb_root *root)
{
	struct rb_node *child, *parent, *y;
	bool was_red;

	if (!z->rb_left || !z->rb_right) {
		child = z->rb_left ? z->rb_left : z->rb_right;
		parent = z->rb_parent_;
		was_red = z->rb_red_;
		rb_replace_child_(z, child, parent, root);
		if (child)
			child->rb_parent_ = parent;
	} else {
		/* z's successor y, which has no left child, takes its place. */
		y = z->rb_right;
		while (y->rb_left)
			y = y->rb_left;
		was_red = y->rb_red_;
		child = y->rb_right;
		if (y->rb_parent_ == z) {
			parent = y;
		} else {
			parent = y->rb_parent_;
			parent->rb_left = child;
			if (child)
				child->rb_parent_ = parent;
			y->rb_right = z->rb_right;
			z->rb_right->rb_parent_ = y;
		}
		y->rb_left = z->rb_left;
		z->rb_left->rb_parent_ = y;
		rb_replace_child_(z, y, z->rb_parent_, root);
		y->rb_parent_ = z->rb_parent_;
		y->rb_red_ = z->rb_red_;
	}
	if (!was_red)
		rb_erase_fixup_(child, parent, root);
}

static inline struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;

	if (!n)
		return NULL;
	while (n->rb_left)
		n = n->rb_left;
	return n;
}

static inline struct rb_node *rb_last(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;

	if (!n)
		return NULL;
	while (n->rb_right)
		n = n->rb_right;
	return n;
}

static inline struct rb_node *rb_next(const struct rb_node *node)
{
	struct rb_node *p;

	if (node->rb_right) {
		node = node->rb_right;
		while (node->rb_left)
			node = node->rb_left;
		return (struct rb_node *)node;
	}
	while ((p = node->rb_parent_) && node == p->rb_right)
		node = p;
	return p;
}

static inline struct rb_node *rb_prev(const struct rb_node *node)
{
	struct rb_node *p;

	if (node->rb_left) {
		node = node->rb_left;
		while (node->rb_right)
			node = node->rb_right;
		return (struct rb_node *)node;
	}
	while ((p = node->rb_parent_) && node == p->rb_left)
		node = p;
	return p;
}

static inline void rb_insert_color_cached(struct rb_node *node,
					  struct rb_root_cached *root,
					  bool leftmost)
{
	if (leftmost)
		root->rb_leftmost = node;
	rb_insert_color(node, &root->rb_root);
}

static inline void rb_erase_cached(struct rb_node *node,
				   struct rb_root_cached *root)
{
	if (root->rb_leftmost == node)
		root->rb_leftmost = rb_next(node);
	rb_erase(node, &root->rb_root);
}

/* Insert @node after every node that is not more than it (by @less). */
static inline void rb_add_cached(struct rb_node *node,
				 struct rb_root_cached *tree,
				 bool (*less)(struct rb_node *,
					      const struct rb_node *))
{
	struct rb_node **link = &tree->rb_root.rb_node, *parent = NULL;
	bool leftmost = true;

	while (*link) {
		parent = *link;
		if (less(node, parent)) {
			link = &parent->rb_left;
		} else {
			link = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(node, parent, link);
	rb_insert_color_cached(node, tree, leftmost);
}

#endif /* KCOMPAT_RBTREE_H */
