package web

import (
	"net/http"

	"idemlab/workshop"
)

// recorded hands a check the server ran to the workshop, which records it
// for a learner in a room (checkerDeps.recordCheck; nil: nobody records).
func (c *exerciseChecker) recorded(r *http.Request, check workshop.Check) {
	if c.deps.recordCheck != nil {
		c.deps.recordCheck(r, check)
	}
}
