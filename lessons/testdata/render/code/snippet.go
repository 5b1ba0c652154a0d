package snippet

// Sum adds.
func Sum(a, b int) int {
	return a + b // ```fences``` in the file stay text
}
