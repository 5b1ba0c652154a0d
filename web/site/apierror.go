package site

// APIError is the body of a failed API call.
type APIError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
	Limit string `json:"limit,omitempty"` // the budget limit a run crossed (field "budget")
}
