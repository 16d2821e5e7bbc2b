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

// distance is the optimal string alignment distance between a and b:
// Levenshtein plus the swap of two adjacent characters as one edit, the
// most common typo ("biuld", "kyes").
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
