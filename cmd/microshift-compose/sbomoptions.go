package main

import (
	"os"

	"github.com/microshift-compose/microshift-compose/compose/sbom"
)

// sourceDateEpoch is the reproducible-builds variable build reads for the
// SBOM's creation time.
const sourceDateEpoch = "SOURCE_DATE_EPOCH"

// sbomOptions are the SBOM's creation time (SOURCE_DATE_EPOCH when set,
// else the Unix epoch: same inputs, same bytes) and the tool version it
// names.
func sbomOptions() (sbom.Options, error) {
	opts := sbom.Options{ToolVersion: versionString()}
	if v, ok := os.LookupEnv(sourceDateEpoch); ok && v != "" {
		t, err := sbom.ParseSourceDateEpoch(v)
		if err != nil {
			return sbom.Options{}, err
		}
		opts.Created = t
	}
	return opts, nil
}
