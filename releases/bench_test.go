package releases

import (
	"io/fs"
	"testing"
)

// BenchmarkSelectEmbedded reads the index of the embedded releases and
// parses the chosen one, as a command does once: the index reads one core
// file's version per bundle, so this is about one bundle's parsing.
func BenchmarkSelectEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		index, err := readEmbeddedIndex()
		if err != nil || len(index) == 0 {
			b.Fatalf("index: %v", err)
		}
		data, err := fs.ReadFile(embedded, "data/"+index[0].name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ParseBundle(index[0].name, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbeddedAll parses every embedded release, what selecting one
// cost before the index.
func BenchmarkEmbeddedAll(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if rels, err := loadBundles(embedded, "data"); err != nil || len(rels) == 0 {
			b.Fatal(err)
		}
	}
}
