package knowledge

import (
	"os"
	"testing"
)

// BenchmarkParse reads the embedded knowledge files, as every command
// working on a release does once.
func BenchmarkParse(b *testing.B) {
	rel, err := os.ReadFile("data/releases.toml")
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := os.ReadFile("data/config.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		k, err := Parse("releases.toml", rel, "config.toml", cfg)
		if err != nil || len(k.Config.Keys) == 0 {
			b.Fatalf("Parse() = %v", err)
		}
	}
}
