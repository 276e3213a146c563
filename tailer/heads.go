package tailer

import (
	"bytes"
	"sort"
	"sync"
)

// Heads: the first bytes of the followed files, indexed to tell a new
// file that begins with one of them (a copy) or whose whole content is a
// prefix of one (a copy being written) in time proportional to the new
// file's first bytes. Comparing each new file with every followed file's
// head made a start with 10,000 new files quadratic (issue 29).

// headIndex is a radix tree of the heads of the followed files (the
// followers claimed in the registry), each counted once per follower.
// Its labels refer to the heads' bytes, which are never modified once
// published.
type headIndex struct {
	mu   sync.Mutex
	root headNode
}

// headNode is a node of the tree: the heads that go through it begin
// with the labels from the root to it.
type headNode struct {
	label []byte      // the bytes on the edge into the node (the root: none)
	kids  []*headNode // by the first byte of their labels
	ends  int         // heads that end at the node
	below int         // heads that end at the node or below it
}

// set indexes h as fl's head in place of the one indexed before, if any.
func (x *headIndex) set(fl *follower, h []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if fl.indexed {
		x.root.remove(fl.idxHead)
	}
	fl.indexed, fl.idxHead = true, h
	if len(h) > 0 {
		x.root.insert(h)
	}
}

// update replaces fl's head with h if fl is indexed.
func (x *headIndex) update(fl *follower, h []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !fl.indexed {
		return
	}
	x.root.remove(fl.idxHead)
	fl.idxHead = h
	if len(h) > 0 {
		x.root.insert(h)
	}
}

// drop removes fl's head.
func (x *headIndex) drop(fl *follower) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !fl.indexed {
		return
	}
	x.root.remove(fl.idxHead)
	fl.indexed, fl.idxHead = false, nil
}

// match compares b, a file's first bytes (up to FingerprintSize), with
// the heads but self's (nil: every one): full, b begins with one of them;
// partial, b is a prefix of a longer one.
func (x *headIndex) match(b []byte, self *follower) (full, partial bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var skip []byte
	if self != nil && self.indexed && len(self.idxHead) > 0 {
		skip = self.idxHead
	}
	n := &x.root
	k := 0 // bytes of b matched so far, to the end of n's label
	for {
		ends, below := n.ends, n.below
		if skip != nil && len(skip) >= k && bytes.Equal(skip[:k], b[:k]) {
			// The path so far is a prefix of skip: skip is counted
			// below, and ends here when its length is k.
			below--
			if len(skip) == k {
				ends--
			}
		}
		if k > 0 && ends > 0 {
			return true, false
		}
		if k == len(b) {
			return false, below-ends > 0
		}
		c := n.kid(b[k])
		if c == nil {
			return false, false
		}
		m := commonPrefix(c.label, b[k:])
		if m < len(c.label) {
			if k+m < len(b) { // b leaves the label: no head goes on as b does
				return false, false
			}
			// b ends within the label: every head below is longer.
			below = c.below
			if skip != nil && len(skip) > len(b) && bytes.Equal(skip[:len(b)], b) {
				below--
			}
			return false, below > 0
		}
		n, k = c, k+m
	}
}

// kid returns the child whose label begins with c.
func (n *headNode) kid(c byte) *headNode {
	i := sort.Search(len(n.kids), func(i int) bool { return n.kids[i].label[0] >= c })
	if i < len(n.kids) && n.kids[i].label[0] == c {
		return n.kids[i]
	}
	return nil
}

// insert counts h (not empty) below n.
func (n *headNode) insert(h []byte) {
	n.below++
	for len(h) > 0 {
		c := n.kid(h[0])
		if c == nil {
			c = &headNode{label: h, ends: 1, below: 1}
			i := sort.Search(len(n.kids), func(i int) bool { return n.kids[i].label[0] >= h[0] })
			n.kids = append(n.kids, nil)
			copy(n.kids[i+1:], n.kids[i:])
			n.kids[i] = c
			return
		}
		m := commonPrefix(c.label, h)
		if m < len(c.label) { // split c's edge at m
			tail := &headNode{label: c.label[m:], kids: c.kids, ends: c.ends, below: c.below}
			c.label, c.kids, c.ends = c.label[:m:m], []*headNode{tail}, 0
		}
		c.below++
		n, h = c, h[m:]
	}
	n.ends++
}

// remove uncounts h, which insert counted, and drops the nodes left
// without heads.
func (n *headNode) remove(h []byte) {
	if len(h) == 0 {
		return
	}
	n.below--
	for len(h) > 0 {
		c := n.kid(h[0])
		if c == nil {
			return // not indexed: cannot happen
		}
		m := len(c.label)
		c.below--
		if c.below == 0 {
			i := sort.Search(len(n.kids), func(i int) bool { return n.kids[i].label[0] >= h[0] })
			n.kids = append(n.kids[:i], n.kids[i+1:]...)
			return
		}
		n, h = c, h[m:]
	}
	n.ends--
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
