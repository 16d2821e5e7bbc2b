package benchfail

import "testing"

func BenchmarkFine(b *testing.B) {
	for i := 0; i < b.N; i++ {
	}
}

func BenchmarkBroken(b *testing.B) { b.Fatal("the broken benchmark") }

func BenchmarkAfter(b *testing.B) {
	for i := 0; i < b.N; i++ {
	}
}
