package releases

import "strings"

// ShortDigest shortens "sha256:<hex>" to 12 hex digits for tables and
// messages; machine-readable output keeps digests whole.
func ShortDigest(d string) string {
	if algo, hex, ok := strings.Cut(d, ":"); ok && len(hex) > 12 {
		return algo + ":" + hex[:12]
	}
	return d
}

// ShortRef shortens the digest of an image reference with ShortDigest.
func ShortRef(ref string) string {
	if repo, d, ok := strings.Cut(ref, "@"); ok {
		return repo + "@" + ShortDigest(d)
	}
	return ref
}
