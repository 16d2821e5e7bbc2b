package upstream

import (
	"encoding/json"
	"strings"
)

// ranges writes the streams where present is true as release
// constraints, one per run of consecutive streams: ">=4.19" for a run to
// the newest stream (it stays open for newer releases), ">=4.17, <4.19"
// for a run that ends.
func ranges(streams []string, present []bool) []string {
	var out []string
	for i := 0; i < len(streams); i++ {
		if !present[i] {
			continue
		}
		j := i
		for j+1 < len(streams) && present[j+1] {
			j++
		}
		if j == len(streams)-1 {
			out = append(out, ">="+streams[i])
		} else {
			out = append(out, ">="+streams[i]+", <"+streams[j+1])
		}
		i = j
	}
	return out
}

// run is a value that holds for a range of streams.
type run[T any] struct {
	Release string
	Value   T
}

// runs groups per-stream values (nil where a stream has none) into runs
// of consecutive streams with equal values, oldest first.
func runs[T any](streams []string, values []*T) []run[T] {
	var out []run[T]
	for i := 0; i < len(streams); i++ {
		if values[i] == nil {
			continue
		}
		key := fingerprint(values[i])
		present := make([]bool, len(streams))
		j := i
		for j < len(streams) && values[j] != nil && fingerprint(values[j]) == key {
			present[j] = true
			j++
		}
		out = append(out, run[T]{Release: ranges(streams, present)[0], Value: *values[i]})
		i = j - 1
	}
	return out
}

// fingerprint is a value's identity for grouping: its JSON encoding
// (map keys sorted).
func fingerprint(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // only plain data is grouped
		panic(err)
	}
	return string(b)
}

// anyRange joins ranges for a [packages] value.
func anyRange(rs []string) string { return strings.Join(rs, " || ") }
