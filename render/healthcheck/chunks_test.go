package healthcheck

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCustomChunks splits workloads of fuzzed namespaces, names and
// counts under a fuzzed bound: every document is JSON of at most the
// bound, and together they hold every workload exactly once; only a
// single workload larger than the bound is an error.
func FuzzCustomChunks(f *testing.F) {
	f.Add("ns", "web", uint16(3), uint16(10), uint16(200))
	f.Add("tenant-with-a-long-name", strings.Repeat("w", 60), uint16(5), uint16(2000), uint16(4096))
	f.Add("a\"b", "\x85\u2028", uint16(1), uint16(1), uint16(40))
	f.Fuzz(func(t *testing.T, ns, name string, namespaces, count, max uint16) {
		namespaces, count = namespaces%8+1, count%3000
		byNS := map[string]*namespaceWorkloads{}
		want := map[string]bool{}
		for i := range int(count) {
			n := ns + string(rune('a'+i%int(namespaces)))
			if byNS[n] == nil {
				byNS[n] = &namespaceWorkloads{}
			}
			nw := byNS[n]
			w := name + strings.Repeat("x", i%7) + string(rune('0'+i%10)) + strings.Repeat("y", i/10)
			var kind string
			switch i % 3 {
			case 0:
				nw.Deployments, kind = append(nw.Deployments, w), "d"
			case 1:
				nw.DaemonSets, kind = append(nw.DaemonSets, w), "ds"
			default:
				nw.StatefulSets, kind = append(nw.StatefulSets, w), "s"
			}
			want[n+"\x00"+kind+"\x00"+w] = true
		}
		chunks, err := customChunks(byNS, int(max))
		if err != nil {
			if !strings.Contains(err.Error(), "more than") {
				t.Fatalf("customChunks: %v", err)
			}
			return
		}
		got := map[string]bool{}
		for _, c := range chunks {
			if len(c) > int(max) {
				t.Fatalf("a document of %d bytes, bound %d", len(c), max)
			}
			var doc map[string]namespaceWorkloads
			if err := json.Unmarshal([]byte(c), &doc); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			for n, nw := range doc {
				for kind, names := range map[string][]string{"d": nw.Deployments, "ds": nw.DaemonSets, "s": nw.StatefulSets} {
					for _, w := range names {
						key := strings.ToValidUTF8(n, "\uFFFD") + "\x00" + kind + "\x00" + strings.ToValidUTF8(w, "\uFFFD")
						if got[key] {
							t.Fatalf("%q twice", key)
						}
						got[key] = true
					}
				}
			}
		}
		norm := map[string]bool{}
		for k := range want {
			norm[strings.ToValidUTF8(k, "\uFFFD")] = true
		}
		if len(got) != len(norm) {
			t.Fatalf("%d workloads in the documents, want %d", len(got), len(norm))
		}
	})
}
