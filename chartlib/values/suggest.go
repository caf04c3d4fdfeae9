package values

import "strings"

// Suggest returns the candidate closest to key by edit distance (case-insensitive Levenshtein), if it is close
// enough to be a plausible typo: distance at most 2, or at most a third of key's length for longer keys. Failing
// that, the longest candidate that key starts with, at least 7 characters once a plural `s` is dropped (another
// chart's name for the same field: replicaCount for replicas, storageClassName for storageClass).
// It returns "" when no candidate qualifies; ties go to the first candidate in order.
func Suggest(key string, candidates []string) string {
	best, bestDist := "", -1
	limit := max(2, len(key)/3)
	k := strings.ToLower(key)
	for _, c := range candidates {
		d := Distance(k, strings.ToLower(c))
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best != "" {
		return best
	}
	for _, c := range candidates {
		stem := strings.ToLower(c)
		if len(stem) >= 6 && stem[len(stem)-1] == 's' {
			stem = stem[:len(stem)-1] // replicas: replicaCount
		}
		if len(stem) >= 7 && len(stem) < len(k) && strings.HasPrefix(k, stem) && len(c) > len(best) {
			best = c
		}
	}
	return best
}

// Distance returns the Levenshtein edit distance between a and b, counted over bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
