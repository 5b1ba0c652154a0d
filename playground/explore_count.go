package playground

// naiveCount counts the settled paths of the state graph from the root: the
// schedules an enumeration without pruning would check. Equal states have
// equal futures, so each node's count is computed once.
func (x *explorer) naiveCount() int64 {
	var count func(k exploreKey, left exploreBudget) int64
	count = func(k exploreKey, left exploreBudget) int64 {
		n := x.nodes[k]
		if n == nil || left.events == 0 {
			return 0
		}
		if p, ok := n.paths[left]; ok {
			return p
		}
		var p int64
		for _, e := range n.edges {
			if !left.covers(e.cost) {
				continue
			}
			if cn := x.nodes[e.to]; cn != nil && cn.settled {
				p++
			}
			p = min(p+count(e.to, left.minus(e.cost)), 1<<50)
		}
		if n.paths == nil {
			n.paths = map[exploreBudget]int64{}
		}
		n.paths[left] = p
		return p
	}
	return count(x.root, x.budget())
}

// enter looks up the state k an action led to, reached with budget nb
// left: seen when the explorer has met it before, covered when its
// future has been (or is being) explored with at least that budget, so
// that this visit has nothing new to find. A new state gets its node.
func (x *explorer) enter(s *sim, k exploreKey, nb exploreBudget) (cn *exploreNode, seen, covered bool) {
	cn, seen = x.nodes[k]
	if seen && x.prune && cn.coveredBy(nb) || x.shared != nil && x.shared.covered(k, nb, x.index) {
		return cn, seen, true
	}
	if !seen {
		cn = &exploreNode{settled: x.settled(s)}
		x.nodes[k] = cn
	}
	return cn, seen, false
}

// expand records that the node at is being expanded with budget bud.
func (x *explorer) expand(node *exploreNode, at exploreKey, bud exploreBudget) {
	node.addExpansion(bud)
	if x.shared != nil {
		x.shared.expand(at, bud, x.index)
	}
}
