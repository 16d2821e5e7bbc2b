package bench

import "testing"

func TestUnit(t *testing.T) {}

func BenchmarkSum(b *testing.B) {
	s := 0
	for i := 0; i < b.N; i++ {
		s += i
	}
	_ = s
}

func BenchmarkSizes(b *testing.B) {
	for _, name := range []string{"small", "large"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
			}
		})
	}
}

func BenchmarkLogs(b *testing.B) {
	b.Log("a benchmark's log")
}
