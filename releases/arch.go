package releases

import (
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/suggest"
)

// Arch is a CPU architecture in uname style, the spelling MicroShift uses in
// release file names and RPM architectures.
type Arch string

// The architectures MicroShift ships for.
const (
	X86_64  Arch = "x86_64"
	AArch64 Arch = "aarch64"
)

// Arches lists every supported architecture in a stable order.
var Arches = []Arch{X86_64, AArch64}

// goArch maps uname-style names to the GOARCH / OCI platform spelling.
var goArch = map[Arch]string{X86_64: "amd64", AArch64: "arm64"}

// ArchSpellings are what ParseArch takes: each arch in uname style, then
// in Go's.
func ArchSpellings() []string {
	out := make([]string, 0, 2*len(Arches))
	for _, a := range Arches {
		out = append(out, string(a))
	}
	for _, a := range Arches {
		out = append(out, goArch[a])
	}
	return out
}

// ParseArch accepts either spelling (x86_64/amd64, aarch64/arm64) and returns
// the uname-style Arch.
func ParseArch(s string) (Arch, error) {
	s = strings.TrimSpace(s)
	for a, g := range goArch {
		if s == string(a) || s == g {
			return a, nil
		}
	}
	if m := suggest.Closest(s, ArchSpellings()); m != "" {
		return "", fmt.Errorf("unknown arch %q; did you mean %q?", s, m)
	}
	return "", fmt.Errorf("unknown arch %q (want one of x86_64, aarch64, amd64, arm64)", s)
}

// GOARCH returns the Go / OCI platform architecture name (amd64, arm64).
func (a Arch) GOARCH() string { return goArch[a] }

// String returns the uname-style name.
func (a Arch) String() string { return string(a) }
