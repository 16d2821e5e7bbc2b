// Package suggest finds the closest known name to a mistyped one, so errors
// can say `did you mean "full"?`.
package suggest

// Closest returns the candidate nearest to s by edit distance, or "" when no
// candidate is close enough to be a plausible typo.
func Closest(s string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := distance(s, c)
		if bestDist < 0 || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	// Allow roughly one edit per three characters, at least one, so "ful"
	// finds "full" but "x" does not find "core".
	limit := max(len(s)/3, 1)
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// distance is the Levenshtein edit distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
