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
